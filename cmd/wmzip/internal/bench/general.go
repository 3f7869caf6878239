package bench

import (
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"

	"github.com/wmzip/wmzip/internal/baseline"
)

// General-purpose compressors see the test codes packed as in package
// baseline (one byte per code when K ≤ 256), time-major, without actions,
// in one stream per file. A random read of one state decompresses that
// stream from its start up to the end of the state.

// zstdCoder is klauspost's zstd on one goroutine (EncodeAll, DecodeAll)
// and, allowed n > 1, its stream encoder and decoder with concurrency n.
type zstdCoder struct {
	row   Row
	t     *testSet
	eopts []zstd.EOption
	dopts []zstd.DOption
	enc   map[int]*zstd.Encoder // by concurrency
	dec   map[int]*zstd.Decoder
}

func newZstd(name string, t *testSet, level zstd.EncoderLevel, dict []byte) *zstdCoder {
	c := &zstdCoder{row: Row{Coder: name, Lossless: true}, t: t, enc: map[int]*zstd.Encoder{}, dec: map[int]*zstd.Decoder{}}
	c.eopts = []zstd.EOption{zstd.WithEncoderLevel(level)}
	if dict != nil {
		// The window reaches over the dictionary's content and the test
		// codes, as baseline's "zstd dict(train)".
		w := 8 << 20
		for w < len(dict)+len(t.packed) && w < zstd.MaxWindowSize {
			w <<= 1
		}
		c.eopts = append(c.eopts, zstd.WithEncoderDict(dict), zstd.WithWindowSize(w))
		c.dopts = []zstd.DOption{zstd.WithDecoderDicts(dict), zstd.WithDecoderMaxWindow(uint64(w))}
		c.row.ModelBytes = int64(len(dict))
		c.row.Note = "dictionary from baseline.BuildDict on train, its bytes not counted"
	}
	return c
}

func (c *zstdCoder) Info() Row         { return c.row }
func (c *zstdCoder) Threads(n int) int { return n }

func (c *zstdCoder) encoder(n int) (*zstd.Encoder, error) {
	if e := c.enc[n]; e != nil {
		return e, nil
	}
	e, err := zstd.NewWriter(nil, append(c.eopts, zstd.WithEncoderConcurrency(n))...)
	c.enc[n] = e
	return e, err
}

func (c *zstdCoder) decoder(n int) (*zstd.Decoder, error) {
	if d := c.dec[n]; d != nil {
		return d, nil
	}
	d, err := zstd.NewReader(nil, append(c.dopts, zstd.WithDecoderConcurrency(n))...)
	c.dec[n] = d
	return d, err
}

func (c *zstdCoder) Encode(threads int) (*Encoding, error) {
	e, err := c.encoder(threads)
	if err != nil {
		return nil, err
	}
	var out []byte
	if threads == 1 {
		out = e.EncodeAll(c.t.packed, nil)
	} else {
		var buf bytes.Buffer
		e.Reset(&buf)
		if _, err := e.Write(c.t.packed); err != nil {
			return nil, err
		}
		if err := e.Close(); err != nil {
			return nil, err
		}
		out = buf.Bytes()
	}
	return &Encoding{File: out, Bytes: int64(len(out))}, nil
}

func (c *zstdCoder) Decode(file []byte, threads int) (*Decoded, error) {
	d, err := c.decoder(threads)
	if err != nil {
		return nil, err
	}
	if threads == 1 {
		out, err := d.DecodeAll(file, make([]byte, 0, len(c.t.packed)))
		return &Decoded{Packed: out}, err
	}
	if err := d.Reset(bytes.NewReader(file)); err != nil {
		return nil, err
	}
	out := bytes.NewBuffer(make([]byte, 0, len(c.t.packed)))
	_, err = out.ReadFrom(d)
	return &Decoded{Packed: out.Bytes()}, err
}

func (c *zstdCoder) Open(file []byte) (StateReader, error) {
	d, err := c.decoder(1)
	if err != nil {
		return nil, err
	}
	return &prefixReader{t: c.t, buf: make([]byte, len(c.t.packed)), open: func() (io.Reader, func(), error) {
		return d, func() {}, d.Reset(bytes.NewReader(file))
	}}, nil
}

// toolCoder is an external compressor of package baseline, exec'd: its times
// include starting the process. Given train, it compresses train and then
// the test codes, and is charged the size of both minus train's alone.
type toolCoder struct {
	row    Row
	t      *testSet
	tool   baseline.Tool
	src    []byte // what it compresses: the test codes, after train's if given
	prefix int    // train's packed bytes in src
	train  int64  // train's compressed size alone
}

func newTool(tl baseline.Tool, t *testSet, train []byte) (*toolCoder, error) {
	c := &toolCoder{row: Row{Coder: tl.Name, Lossless: true, Exec: true}, t: t, tool: tl, src: t.packed}
	if train != nil {
		z, err := tl.Compress(train)
		if err != nil {
			return nil, err
		}
		c.row.Coder += " given train"
		c.src = append(append(make([]byte, 0, len(train)+len(t.packed)), train...), t.packed...)
		c.prefix, c.train = len(train), int64(len(z))
		c.row.ModelBytes = c.train
		c.row.Note = fmt.Sprintf("size(train+test) − size(train) = %d bytes compressed train beside; times and reads cover train+test", c.train)
	}
	return c, nil
}

func (c *toolCoder) Info() Row       { return c.row }
func (c *toolCoder) Threads(int) int { return 1 }

func (c *toolCoder) Encode(int) (*Encoding, error) {
	out, err := c.tool.Compress(c.src)
	if err != nil {
		return nil, err
	}
	return &Encoding{File: out, Bytes: int64(len(out)) - c.train}, nil
}

func (c *toolCoder) Decode(file []byte, _ int) (*Decoded, error) {
	out, err := c.tool.Decompress(file)
	if err != nil {
		return nil, err
	}
	if len(out) < c.prefix {
		return nil, fmt.Errorf("%w: %s decompressed %d bytes, train alone is %d", ErrMismatch, c.row.Coder, len(out), c.prefix)
	}
	return &Decoded{Packed: out[c.prefix:]}, nil
}

func (c *toolCoder) Open(file []byte) (StateReader, error) {
	return &prefixReader{t: c.t, prefix: c.prefix, buf: make([]byte, c.prefix+len(c.t.packed)), open: func() (io.Reader, func(), error) {
		cmd := c.tool.DecompressCommand()
		cmd.Stdin = bytes.NewReader(file)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		// Stop the tool once the state is read; it may not have finished.
		return out, func() { cmd.Process.Kill(); cmd.Wait() }, nil
	}}, nil
}

// prefixReader reads one state by decompressing a stream from its start
// up to the state's end.
type prefixReader struct {
	t      *testSet
	prefix int // bytes before the test codes
	buf    []byte
	open   func() (r io.Reader, done func(), err error)
}

func (p *prefixReader) State(e, step int, dst []uint16) ([]uint16, error) {
	i, err := p.t.index(e, step)
	if err != nil {
		return dst[:0], err
	}
	r, done, err := p.open()
	if err != nil {
		return dst[:0], err
	}
	defer done()
	sb := p.t.n * p.t.codeBytes()
	end := p.prefix + (i+1)*sb
	if _, err := io.ReadFull(r, p.buf[:end]); err != nil {
		return dst[:0], err
	}
	return p.t.unpack(dst, p.buf[end-sb:end]), nil
}

// Close releases the encoders and decoders.
func (c *zstdCoder) Close() error {
	for _, e := range c.enc {
		e.Close()
	}
	for _, d := range c.dec {
		d.Close()
	}
	return nil
}
