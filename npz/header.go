package npz

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// npyMagic opens every .npy stream: the byte 0x93 and "NUMPY".
var npyMagic = []byte("\x93NUMPY")

const (
	// maxHeaderLen bounds the dictionary of a .npy header. Headers of the
	// supported dtypes take under 2 KiB even with maxDims dimensions.
	maxHeaderLen = 1 << 16
	maxDims      = 64
	arrayAlign   = 64 // numpy pads headers so that data starts on this boundary
	growthDigits = 21 // numpy's spare room after the header for a growing first axis
)

// loc names what an error is about.
type loc struct{ path, array string }

func (l loc) errf(kind, cause error, format string, args ...any) *Error {
	return &Error{Path: l.path, Array: l.array, Kind: kind, Err: cause, Msg: fmt.Sprintf(format, args...)}
}

// truncated reports data that ends early.
func (l loc) truncated(what string) *Error {
	return l.errf(ErrFormat, io.ErrUnexpectedEOF, "is truncated in its %s", what)
}

// npyHeader is a validated .npy header.
type npyHeader struct {
	dt      dtype
	shape   []int
	count   int64 // elements, the product of shape
	dataOff int64 // bytes before the data
	fortran bool  // stored in Fortran order (and not laid out as in C order)
}

// readHeader reads the header of a .npy stream of exactly size bytes and
// checks that it describes a supported array whose data fills the rest of
// the stream, without reading the data.
func readHeader(r io.Reader, size int64, l loc) (npyHeader, error) {
	var h npyHeader
	var pre [12]byte
	if size < 10 {
		if size >= 6 {
			if _, err := io.ReadFull(r, pre[:6]); err == nil && !bytes.Equal(pre[:6], npyMagic) {
				return h, l.errf(ErrFormat, nil, "is not a .npy array (bad magic string)")
			}
		}
		return h, l.truncated("header")
	}
	if _, err := io.ReadFull(r, pre[:10]); err != nil {
		return h, l.readErr(err, "header")
	}
	if !bytes.Equal(pre[:6], npyMagic) {
		return h, l.errf(ErrFormat, nil, "is not a .npy array (bad magic string)")
	}
	major, minor := pre[6], pre[7]
	var hlen, prefix int64
	switch {
	case major == 1 && minor == 0:
		hlen, prefix = int64(binary.LittleEndian.Uint16(pre[8:10])), 10
	case (major == 2 || major == 3) && minor == 0:
		if size < 12 {
			return h, l.truncated("header")
		}
		if _, err := io.ReadFull(r, pre[10:12]); err != nil {
			return h, l.readErr(err, "header")
		}
		hlen, prefix = int64(binary.LittleEndian.Uint32(pre[8:12])), 12
	default:
		return h, l.errf(ErrUnsupported, nil, "has .npy format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor)
	}
	if hlen > maxHeaderLen {
		return h, l.errf(ErrFormat, nil, "declares a %d-byte header (limit %d)", hlen, maxHeaderLen)
	}
	if prefix+hlen > size {
		return h, l.truncated("header")
	}
	buf := make([]byte, hlen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return h, l.readErr(err, "header")
	}
	d, kind, msg := parseDict(buf)
	if kind != nil {
		return h, l.errf(kind, nil, "%s", msg)
	}
	dt, msg := dtypeByDescr(d.descr)
	if msg != "" {
		return h, l.errf(ErrUnsupported, nil, "%s", msg)
	}
	h.dt = dt
	h.dataOff = prefix + hlen
	count, overflow, big := int64(1), false, 0
	for _, n := range d.shape {
		if n > 1 {
			big++
		}
		switch {
		case n == 0:
			count = 0
		case count == 0 || overflow:
		case n > math.MaxInt64/count:
			overflow = true
		default:
			count *= n
		}
	}
	if overflow && count != 0 || count > math.MaxInt64/int64(dt.size) {
		return h, l.errf(ErrFormat, nil, "has shape %s whose size overflows", fmtShape64(d.shape))
	}
	h.fortran = d.fortran && big > 1 // else both orders lay it out alike
	h.count = count
	want := count * int64(dt.size)
	if have := size - h.dataOff; want != have {
		if want > have {
			return h, l.errf(ErrFormat, io.ErrUnexpectedEOF,
				"has shape %s and dtype %s (%d bytes of data) but only %d bytes follow the header",
				fmtShape64(d.shape), dt.name, want, have)
		}
		return h, l.errf(ErrFormat, nil, "has %d bytes after its data", have-want)
	}
	h.shape = make([]int, len(d.shape))
	for i, n := range d.shape {
		if n > math.MaxInt {
			return h, l.errf(ErrUnsupported, nil, "has shape %s, too large for this platform", fmtShape64(d.shape))
		}
		h.shape[i] = int(n)
	}
	return h, nil
}

func (l loc) readErr(err error, what string) *Error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return l.truncated(what)
	}
	return l.errf(ErrFormat, err, "cannot read %s", what)
}

// headerDict is the content of a .npy header dictionary.
type headerDict struct {
	descr   string
	fortran bool
	shape   []int64
}

// parseDict parses the Python literal of a .npy header, for example
// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// followed by padding. It accepts the subset of Python literal syntax that
// numpy writes for plain dtypes, with keys in any order.
func parseDict(s []byte) (d headerDict, kind error, msg string) {
	p := dictParser{s: s}
	bad := func(what string) (headerDict, error, string) {
		return d, ErrFormat, fmt.Sprintf("has a malformed header: %s at byte %d of %q", what, p.i, clip(s, 120))
	}
	p.space()
	if !p.eat('{') {
		return bad("want '{'")
	}
	seen := map[string]bool{}
	for {
		p.space()
		if p.eat('}') {
			break
		}
		key, ok := p.str()
		if !ok {
			return bad("want a quoted key")
		}
		if seen[key] {
			return bad(fmt.Sprintf("duplicate key %q", key))
		}
		seen[key] = true
		p.space()
		if !p.eat(':') {
			return bad("want ':'")
		}
		p.space()
		switch key {
		case "descr":
			if p.peek() == '[' || p.peek() == '(' || p.peek() == '{' {
				return d, ErrUnsupported, "has a structured dtype, which is not supported"
			}
			if d.descr, ok = p.str(); !ok {
				return bad("want a quoted descr")
			}
		case "fortran_order":
			if d.fortran, ok = p.boolean(); !ok {
				return bad("want True or False")
			}
		case "shape":
			if d.shape, ok = p.tuple(); !ok {
				return bad(fmt.Sprintf("want a tuple of at most %d non-negative integers", maxDims))
			}
		default:
			return bad(fmt.Sprintf("unexpected key %q", key))
		}
		p.space()
		if p.eat('}') {
			break
		}
		if !p.eat(',') {
			return bad("want ',' or '}'")
		}
	}
	p.space()
	if p.i != len(s) {
		return bad("unexpected text after '}'")
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return bad(fmt.Sprintf("missing key %q", k))
		}
	}
	return d, nil, ""
}

type dictParser struct {
	s []byte
	i int
}

func (p *dictParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *dictParser) eat(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *dictParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// str parses a quoted string without escapes.
func (p *dictParser) str() (string, bool) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", false
	}
	end := bytes.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", false
	}
	v := p.s[p.i+1 : p.i+1+end]
	if bytes.IndexByte(v, '\\') >= 0 || bytes.IndexByte(v, '\n') >= 0 {
		return "", false
	}
	p.i += end + 2
	return string(v), true
}

func (p *dictParser) boolean() (bool, bool) {
	for _, w := range []struct {
		s string
		v bool
	}{{"True", true}, {"False", false}} {
		if bytes.HasPrefix(p.s[p.i:], []byte(w.s)) {
			p.i += len(w.s)
			return w.v, true
		}
	}
	return false, false
}

// tuple parses (), (n,) or (n, m, ...) with an optional trailing comma.
func (p *dictParser) tuple() ([]int64, bool) {
	if !p.eat('(') {
		return nil, false
	}
	dims := []int64{}
	commas := 0
	for {
		p.space()
		if p.eat(')') {
			break
		}
		if len(dims) > commas || len(dims) == maxDims {
			return nil, false
		}
		start := p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		n, err := strconv.ParseInt(string(p.s[start:p.i]), 10, 64)
		if err != nil {
			return nil, false
		}
		p.eat('L') // written by Python 2
		dims = append(dims, n)
		p.space()
		if p.eat(',') {
			commas++
		}
	}
	if len(dims) == 1 && commas == 0 {
		return nil, false // (n) is an integer in Python, not a tuple
	}
	return dims, true
}

func clip(s []byte, n int) string {
	if len(s) > n {
		return string(s[:n]) + "..."
	}
	return string(s)
}

// fmtShape formats a shape the way Python prints a tuple: (), (3,), (3, 4).
func fmtShape(shape []int) string {
	s := make([]int64, len(shape))
	for i, n := range shape {
		s[i] = int64(n)
	}
	return fmtShape64(s)
}

func fmtShape64(shape []int64) string {
	b := []byte{'('}
	for i, n := range shape {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, n, 10)
	}
	if len(shape) == 1 {
		b = append(b, ',')
	}
	return string(append(b, ')'))
}

// appendHeader appends a version 1.0 .npy header laid out byte for byte as
// numpy 1.24 writes it: sorted keys, spare room for a growing first axis,
// space padding to a 64-byte boundary and a final newline. Shapes have at
// most maxDims dimensions, so the header always fits version 1.0.
func appendHeader(b []byte, dt dtype, shape []int) []byte {
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", dt.descr, fmtShape(shape))
	if len(shape) > 0 {
		if pad := growthDigits - len(strconv.Itoa(shape[0])); pad > 0 {
			dict += strings.Repeat(" ", pad)
		}
	}
	hlen := len(dict) + 1
	pad := arrayAlign - (10+hlen)%arrayAlign
	b = append(b, npyMagic...)
	b = append(b, 1, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(hlen+pad))
	b = append(b, dict...)
	b = append(b, strings.Repeat(" ", pad)...)
	return append(b, '\n')
}
