package search

// scanGo is the reference scan kernel: for each of rows vectors of codes
// (row r at codes[r·stride:], n codes below k), out[r] = Σ_j tab[j·k +
// codes[r·stride+j]]. The sum cannot overflow: query tables bound their
// entries so that n of them fit 32 bits (see quantize). The assembly twin
// (scanAVX2) computes the same integers.
func scanGo(tab []uint32, k int, codes []byte, n, stride, rows int, out []uint32) {
	out = out[:rows]
	for r := range out {
		c := codes[r*stride : r*stride+n]
		t := tab[:n*k]
		var s0, s1, s2, s3 uint32
		j := 0
		for ; j+4 <= n; j += 4 {
			s0 += t[j*k+int(c[j])]
			s1 += t[(j+1)*k+int(c[j+1])]
			s2 += t[(j+2)*k+int(c[j+2])]
			s3 += t[(j+3)*k+int(c[j+3])]
		}
		for ; j < n; j++ {
			s0 += t[j*k+int(c[j])]
		}
		out[r] = s0 + s1 + s2 + s3
	}
}
