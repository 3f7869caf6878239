package baseline

import (
	"os/exec"
	"slices"
)

// The building blocks of Run, for callers that time the compressors or read
// their output back (package bench).

// Pack lays codes out as every compressor here sees them: one byte per
// code, or two little-endian bytes when k > 256.
func Pack(codes []uint16, k int) []byte { return pack(codes, k) }

// BuildDict builds the zstd dictionary of the "zstd dict(train)" baseline
// from packed training codes. Its content is train's last 8 MiB at most.
func BuildDict(train []byte) ([]byte, error) { return buildDict(train) }

// A Tool is one of the external compressors Run measures; it reads stdin
// and writes stdout.
type Tool struct {
	Name   string   // the Result name, e.g. "xz -9e"
	Bin    string   // the executable looked up on PATH
	Args   []string // compress
	Unpack []string // decompress
}

// Tools returns the external compressors, in Run's order.
func Tools() []Tool {
	out := make([]Tool, len(tools))
	for i, tl := range tools {
		out[i] = Tool{Name: tl.name, Bin: tl.bin, Args: slices.Clone(tl.args), Unpack: slices.Clone(tl.unpack)}
	}
	return out
}

func (t Tool) tool() tool { return tool{name: t.Name, bin: t.Bin, args: t.Args, unpack: t.Unpack} }

// Available returns nil when the tool's executable is on PATH.
func (t Tool) Available() error {
	_, err := exec.LookPath(t.Bin)
	return err
}

// Compress runs the tool over src, as Run does.
func (t Tool) Compress(src []byte) ([]byte, error) { return t.tool().run(t.Args, src) }

// Decompress runs the tool's decompression over src.
func (t Tool) Decompress(src []byte) ([]byte, error) { return t.tool().run(t.Unpack, src) }

// DecompressCommand returns the decompression command, for a caller that
// reads its output as a stream; the caller sets stdin.
func (t Tool) DecompressCommand() *exec.Cmd { return exec.Command(t.Bin, t.Unpack...) }
