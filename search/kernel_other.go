//go:build !amd64 || noasm

package search

// useAsm reports whether the assembly scan kernel is in use.
const useAsm = false

func scan(tab []uint32, k int, codes []byte, n, stride, rows int, out []uint32) {
	scanGo(tab, k, codes, n, stride, rows, out)
}
