package npz

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zip"
	"github.com/wmzip/wmzip/internal/half"
)

// numpyArrays are the arrays of gen_fixtures.py's dtypes.npz, in order.
func numpyArrays() []Array {
	f32 := make([]float32, 6)
	for i := range f32 {
		f32[i] = float32(i)/7 - 0.25 // numpy computes this in float32 too
	}
	return []Array{
		{"float32", "float32", []int{2, 3}, f32},
		{"float16", "float16", []int{14}, nil}, // checked against float16_widened
		{"float16_widened", "float32", []int{14}, nil},
		{"float64", "float64", []int{}, []float64{3.141592653589793}},
		{"uint8", "uint8", []int{4}, []uint8{0, 1, 127, 255}},
		{"uint16", "uint16", []int{2, 2}, []uint16{0, 256, 65535, 7}},
		{"int32", "int32", []int{3}, []int32{math.MinInt32, -1, math.MaxInt32}},
		{"int64", "int64", []int{2, 1, 2}, []int64{math.MinInt64, -1, 0, math.MaxInt64}},
		{"empty", "float32", []int{0, 3}, []float32{}},
	}
}

func TestReadNumpyNPZ(t *testing.T) {
	for _, file := range []string{"dtypes.npz", "dtypes_compressed.npz"} {
		t.Run(file, func(t *testing.T) {
			got, err := ReadNPZ(fixture(file))
			if err != nil {
				t.Fatal(err)
			}
			want := numpyArrays()
			if len(got) != len(want) {
				t.Fatalf("got %d arrays, want %d", len(got), len(want))
			}
			for i := range want {
				w := want[i]
				if w.Data == nil {
					w.Data = got[i].Data
				}
				if err := sameArray(got[i], w); err != nil {
					t.Error(err)
				}
			}
			f16, widened := got[1].Data.([]float32), got[2].Data.([]float32)
			if !sameData(f16, widened) {
				t.Errorf("float16 decoded as %v, numpy widens to %v", f16, widened)
			}
			headers, err := ReadNPZHeaders(fixture(file))
			if err != nil {
				t.Fatal(err)
			}
			for i, h := range headers {
				if h.Data != nil || h.Name != got[i].Name || h.Dtype != got[i].Dtype || fmt.Sprint(h.Shape) != fmt.Sprint(got[i].Shape) {
					t.Errorf("header %d = %+v, want %s %s %v without data", i, h, got[i].Name, got[i].Dtype, got[i].Shape)
				}
			}
		})
	}
}

// TestNPYBytesMatchNumpy checks that EncodeNPY reproduces numpy.save's
// bytes exactly, header padding included.
func TestNPYBytesMatchNumpy(t *testing.T) {
	for _, name := range []string{"float32", "float16", "float64", "uint8", "uint16", "int32", "int64", "empty"} {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(fixture(name + ".npy"))
			if err != nil {
				t.Fatal(err)
			}
			a, err := ReadNPY(fixture(name + ".npy"))
			if err != nil {
				t.Fatal(err)
			}
			if a.Name != name {
				t.Errorf("Name = %q, want %q", a.Name, name)
			}
			var buf bytes.Buffer
			if err := EncodeNPY(&buf, a); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("EncodeNPY wrote\n%q\nnumpy wrote\n%q", buf.Bytes(), want)
			}
		})
	}
}

func TestFloat16AllBits(t *testing.T) {
	for h := range 1 << 16 {
		f := half.Float32(uint16(h))
		if back := half.FromFloat32(f); back != uint16(h) {
			t.Fatalf("half %#04x -> %g -> %#04x", h, f, back)
		}
		exp, man := h>>10&0x1f, h&0x3ff
		var want float64
		switch {
		case exp == 0x1f && man == 0:
			want = math.Inf(1)
		case exp == 0x1f:
			if !math.IsNaN(float64(f)) {
				t.Fatalf("half %#04x -> %g, want NaN", h, f)
			}
			continue
		case exp == 0:
			want = math.Ldexp(float64(man), -24)
		default:
			want = math.Ldexp(float64(man|0x400), exp-25)
		}
		if h&0x8000 != 0 {
			want = -want
		}
		if float64(f) != want || math.Signbit(float64(f)) != (h&0x8000 != 0) {
			t.Fatalf("half %#04x -> %g, want %g", h, f, want)
		}
	}
}

func TestFloat16RoundingMatchesNumpy(t *testing.T) {
	arrays, err := ReadNPZ(fixture("float16_rounding.npz"))
	if err != nil {
		t.Fatal(err)
	}
	x, halves := arrays[0].Data.([]float32), arrays[1].Data.([]uint16)
	bad := 0
	for i := range x {
		if got := half.FromFloat32(x[i]); got != halves[i] {
			if bad++; bad < 10 {
				t.Errorf("half.FromFloat32(%g = %#08x) = %#04x, numpy gives %#04x", x[i], math.Float32bits(x[i]), got, halves[i])
			}
		}
	}
	if len(x) < 3000 {
		t.Errorf("only %d values in fixture", len(x))
	}
}

// randomArrays returns one array of every dtype in several shapes.
func randomArrays(r *rand.Rand) []Array {
	shapes := [][]int{{}, {0}, {5}, {3, 4}, {2, 0, 3}, {2, 3, 4}}
	var out []Array
	for _, d := range dtypes {
		for si, shape := range shapes {
			a := Array{Name: fmt.Sprintf("%s_%d", d.name, si), Dtype: d.name, Shape: shape}
			n := a.Len()
			switch d.name {
			case "float32", "float16":
				v := make([]float32, n)
				for i := range v {
					v[i] = float32(r.NormFloat64() * 100)
					if d.name == "float16" {
						v[i] = half.Float32(half.FromFloat32(v[i]))
					}
				}
				a.Data = v
			case "float64":
				v := make([]float64, n)
				for i := range v {
					v[i] = r.NormFloat64() * 1e10
				}
				a.Data = v
			case "uint8":
				v := make([]uint8, n)
				for i := range v {
					v[i] = uint8(r.Uint32())
				}
				a.Data = v
			case "uint16":
				v := make([]uint16, n)
				for i := range v {
					v[i] = uint16(r.Uint32())
				}
				a.Data = v
			case "int32":
				v := make([]int32, n)
				for i := range v {
					v[i] = int32(r.Uint32())
				}
				a.Data = v
			case "int64":
				v := make([]int64, n)
				for i := range v {
					v[i] = int64(r.Uint64())
				}
				a.Data = v
			}
			out = append(out, a)
		}
	}
	return out
}

func TestRoundTripNPZ(t *testing.T) {
	arrays := randomArrays(rand.New(rand.NewPCG(1, 2)))
	dir := t.TempDir()
	for _, deflate := range []bool{true, false} {
		t.Run(fmt.Sprintf("deflate=%v", deflate), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("rt-%v.npz", deflate))
			if err := WriteNPZ(path, arrays, WithDeflate(deflate)); err != nil {
				t.Fatal(err)
			}
			got, err := ReadNPZ(path)
			if err != nil {
				t.Fatal(err)
			}
			sameArrays(t, got, arrays)

			zr, err := zip.OpenReader(path)
			if err != nil {
				t.Fatal(err)
			}
			defer zr.Close()
			want := map[bool]uint16{true: zip.Deflate, false: zip.Store}[deflate]
			for _, f := range zr.File {
				if f.Method != want {
					t.Errorf("%s: method %d, want %d", f.Name, f.Method, want)
				}
			}
		})
	}
}

func TestRoundTripNPY(t *testing.T) {
	dir := t.TempDir()
	for _, a := range randomArrays(rand.New(rand.NewPCG(3, 4))) {
		path := filepath.Join(dir, a.Name+".npy")
		if err := WriteNPY(path, a); err != nil {
			t.Fatal(err)
		}
		got, err := ReadNPY(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameArray(got, a); err != nil {
			t.Error(err)
		}
	}
}

func TestFloat16WriteRounds(t *testing.T) {
	a := Array{Name: "h", Dtype: "float16", Shape: []int{4}, Data: []float32{0.1, 70000, -1e-9, 1}}
	var buf bytes.Buffer
	if err := EncodeNPZ(&buf, []Array{a}); err != nil {
		t.Fatal(err)
	}
	got, err := DecodeNPZ(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{0.099975586, float32(math.Inf(1)), float32(math.Copysign(0, -1)), 1}
	if !sameData(got[0].Data, want) {
		t.Errorf("got %v, want %v", got[0].Data, want)
	}
}

func TestDeterministicBytes(t *testing.T) {
	arrays := randomArrays(rand.New(rand.NewPCG(5, 6)))
	dir := t.TempDir()
	var files [][]byte
	for i := range 2 {
		path := filepath.Join(dir, fmt.Sprintf("d%d.npz", i))
		if err := WriteNPZ(path, arrays); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	var buf bytes.Buffer
	if err := EncodeNPZ(&buf, arrays); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files[0], files[1]) || !bytes.Equal(files[0], buf.Bytes()) {
		t.Error("equal arrays gave different bytes")
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.npz")
	good := []Array{{Name: "a", Dtype: "int32", Shape: []int{2}, Data: []int32{1, 2}}}
	bad := []Array{good[0], {Name: "b", Dtype: "int32", Shape: []int{3}, Data: []int32{1}}}

	err := WriteNPZ(path, bad)
	wantErr(t, err, ErrFormat, nil, `array "b" has shape (3,) (3 elements) but 1 data elements`)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed write left %s: %v", path, err)
	}
	if err := WriteNPZ(path, good); err != nil {
		t.Fatal(err)
	}
	if err := WriteNPZ(path, bad); err == nil {
		t.Fatal("bad write succeeded")
	}
	got, err := ReadNPZ(path)
	if err != nil {
		t.Fatal("failed overwrite damaged the old file:", err)
	}
	sameArrays(t, got, good)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want 1 (temporary files left?)", len(entries))
	}
	if err := WriteNPZ(filepath.Join(dir, "missing", "x.npz"), good); err == nil {
		t.Error("write into a missing directory succeeded")
	}
}

func TestWriteErrors(t *testing.T) {
	ok := Array{Name: "a", Dtype: "int32", Shape: []int{1}, Data: []int32{1}}
	for _, tc := range []struct {
		name   string
		arrays []Array
		kind   error
		msg    string
	}{
		{"dtype", []Array{{Name: "a", Dtype: "int16", Data: []int16{1}}}, ErrUnsupported, `array "a" has dtype "int16"`},
		{"data type", []Array{{Name: "a", Dtype: "float64", Data: []float32{1}}}, ErrFormat, "has dtype float64 but Data of type []float32"},
		{"negative dim", []Array{{Name: "a", Dtype: "uint8", Shape: []int{-1}, Data: []uint8{}}}, ErrFormat, "invalid shape"},
		{"duplicate", []Array{ok, ok}, ErrFormat, `array "a" appears twice`},
		{"empty name", []Array{{Dtype: "int32", Shape: []int{1}, Data: []int32{1}}}, ErrFormat, "invalid name"},
		{"dotdot", []Array{{Name: "../a", Dtype: "int32", Shape: []int{1}, Data: []int32{1}}}, ErrFormat, "invalid name"},
		{"too many dims", []Array{{Name: "a", Dtype: "uint8", Shape: make([]int, 65), Data: []uint8{}}}, ErrUnsupported, "65 dimensions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, EncodeNPZ(io.Discard, tc.arrays), tc.kind, nil, tc.msg)
		})
	}
}

func TestReadFixtureErrors(t *testing.T) {
	for _, tc := range []struct {
		file  string
		kind  error
		cause error
		msg   string
	}{
		{"object.npz", ErrUnsupported, nil, `array "a" has object dtype "|O"`},
		{"object.npy", ErrUnsupported, nil, "object dtype"},
		{"bigendian.npz", ErrUnsupported, nil, `has big-endian dtype ">f4"`},
		{"int16.npz", ErrUnsupported, nil, `has dtype "<i2", which is not supported`},
		{"structured.npz", ErrUnsupported, nil, "structured dtype"},
		{"truncated.npz", ErrFormat, nil, "not a valid .npz (zip) archive"},
		{"truncated.npy", ErrFormat, io.ErrUnexpectedEOF, "(24 bytes of data) but only 21 bytes"},
		{"short_member.npz", ErrFormat, io.ErrUnexpectedEOF, `array "a" has shape (10,) and dtype int64 (80 bytes of data) but only 72`},
		{"float32.npy", ErrFormat, nil, "not a valid .npz"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var err error
			if strings.HasSuffix(tc.file, ".npy") && tc.file != "float32.npy" {
				_, err = ReadNPY(fixture(tc.file))
			} else {
				_, err = ReadNPZ(fixture(tc.file))
			}
			wantErr(t, err, tc.kind, tc.cause, "npz: "+fixture(tc.file)+": ", tc.msg)
		})
	}
	// Fortran order is converted (issue 24, point 2).
	for _, name := range []string{"fortran.npz", "fortran.npy"} {
		var a Array
		var err error
		if strings.HasSuffix(name, ".npy") {
			a, err = ReadNPY(fixture(name))
		} else {
			var arrays []Array
			if arrays, err = ReadNPZ(fixture(name)); err == nil {
				a = arrays[0]
			}
		}
		if err != nil || !sameData(a.Data, []float32{0, 1, 2, 3, 4, 5}) || !slices.Equal(a.Shape, []int{2, 3}) {
			t.Errorf("%s: %v %v %v", name, a.Shape, a.Data, err)
		}
	}
	a, err := ReadNPY(fixture("fortran_1d.npy"))
	if err != nil {
		t.Fatal("1-D array flagged Fortran order:", err)
	}
	if !sameData(a.Data, []float32{1, 2, 3}) {
		t.Errorf("fortran_1d.npy read as %v", a.Data)
	}
	if _, err := ReadNPZ(fixture("missing.npz")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// npyBytes builds a version 1.0 .npy stream with the given dictionary text.
func npyBytes(dict string, data []byte) []byte {
	b := append(slices.Clone(npyMagic), 1, 0, byte(len(dict)), byte(len(dict)>>8))
	b = append(b, dict...)
	return append(b, data...)
}

func TestHeaderErrors(t *testing.T) {
	f4 := func(shape string) string {
		return "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }\n"
	}
	long := npyBytes(f4("(2,)"), make([]byte, 8))
	long[8], long[9] = 0xff, 0xff
	v2big := append(slices.Clone(npyMagic), 2, 0, 0xff, 0xff, 0xff, 0x7f)
	v2big = append(v2big, make([]byte, 100)...)
	for _, tc := range []struct {
		name  string
		in    []byte
		kind  error
		cause error
		msg   string
	}{
		{"empty", nil, ErrFormat, io.ErrUnexpectedEOF, "truncated in its header"},
		{"bad magic", []byte("PK\x03\x04 this is a zip"), ErrFormat, nil, "bad magic"},
		{"version", append(slices.Clone(npyMagic), 4, 0, 0, 0), ErrUnsupported, nil, "version 4.0"},
		{"header past end", long, ErrFormat, io.ErrUnexpectedEOF, "truncated in its header"},
		{"header too long", v2big, ErrFormat, nil, "2147483647-byte header"},
		{"not a dict", npyBytes("['descr']\n", nil), ErrFormat, nil, "want '{'"},
		{"missing key", npyBytes("{'descr': '<f4', 'shape': (), }", make([]byte, 4)), ErrFormat, nil, `missing key "fortran_order"`},
		{"extra key", npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}", nil), ErrFormat, nil, `unexpected key "x"`},
		{"duplicate key", npyBytes("{'descr': '<f4', 'descr': '<f4'}", nil), ErrFormat, nil, `duplicate key "descr"`},
		{"bad bool", npyBytes("{'descr': '<f4', 'fortran_order': 0, 'shape': ()}", nil), ErrFormat, nil, "want True or False"},
		{"int not tuple", npyBytes(f4("(2)"), make([]byte, 8)), ErrFormat, nil, "tuple"},
		{"negative dim", npyBytes(f4("(-2,)"), nil), ErrFormat, nil, "tuple"},
		{"huge dim", npyBytes(f4("(99999999999999999999,)"), nil), ErrFormat, nil, "tuple"},
		{"overflow", npyBytes(f4("(4294967296, 4294967296)"), nil), ErrFormat, nil, "(4294967296, 4294967296) whose size overflows"},
		{"byte overflow", npyBytes(f4("(4611686018427387904,)"), nil), ErrFormat, nil, "overflows"},
		{"exceeds data", npyBytes(f4("(1000000000000,)"), make([]byte, 16)), ErrFormat, io.ErrUnexpectedEOF, "(4000000000000 bytes of data) but only 16 bytes"},
		{"trailing", npyBytes(f4("(2,)"), make([]byte, 9)), ErrFormat, nil, "1 bytes after its data"},
		{"text after dict", npyBytes(f4("(2,)")+"x", make([]byte, 8)), ErrFormat, nil, "unexpected text"},
		{"unterminated", npyBytes("{'descr: '<f4'", nil), ErrFormat, nil, "malformed header"},
		{"little dtype", npyBytes("{'descr': '<c8', 'fortran_order': False, 'shape': ()}", make([]byte, 8)), ErrUnsupported, nil, `dtype "<c8"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeNPY(bytes.NewReader(tc.in), int64(len(tc.in)))
			wantErr(t, err, tc.kind, tc.cause, tc.msg)
			if err != nil && strings.Contains(err.Error(), "npz: :") {
				t.Errorf("error %q names an empty file", err)
			}
		})
	}
	// Accepted variants: double quotes, keys out of order, Python 2 longs,
	// no trailing comma, '<u1', 1-D Fortran flag.
	for _, dict := range []string{
		`{"shape": (2L,), "fortran_order": False, "descr": "<u1"}`,
		"{'descr':'|u1','fortran_order':True,'shape':(2,)}   \n",
	} {
		a, err := DecodeNPY(bytes.NewReader(npyBytes(dict, []byte{7, 9})), int64(len(npyBytes(dict, []byte{7, 9}))))
		if err != nil {
			t.Errorf("%s: %v", dict, err)
		} else if !sameData(a.Data, []uint8{7, 9}) {
			t.Errorf("%s: read %v", dict, a.Data)
		}
	}
}

func TestMaxBytes(t *testing.T) {
	_, err := ReadNPZ(fixture("dtypes.npz"), WithMaxBytes(100))
	wantErr(t, err, ErrTooLarge, nil, "arrays need over")
	_, err = ReadNPZ(fixture("dtypes.npz"), WithMaxBytes(8))
	wantErr(t, err, ErrTooLarge, nil, `array "float32" needs 6 × 4 bytes of memory, over the 8-byte limit`)
	_, err = ReadNPY(fixture("float16.npy"), WithMaxBytes(55))
	wantErr(t, err, ErrTooLarge, nil, "14 × 4 bytes")
	if _, err := ReadNPY(fixture("float16.npy"), WithMaxBytes(56)); err != nil {
		t.Error(err)
	}
	if _, err := ReadNPZ(fixture("dtypes.npz"), WithMaxBytes(-1)); err == nil || !strings.Contains(err.Error(), "WithMaxBytes(-1)") {
		t.Errorf("negative limit: %v", err)
	}

	// A deflate bomb: 64 MiB of zeros in 64 KiB is refused from its header.
	zeros := Array{Name: "z", Dtype: "uint8", Shape: []int{64 << 20}, Data: make([]uint8, 64<<20)}
	var buf bytes.Buffer
	if err := EncodeNPZ(&buf, []Array{zeros}); err != nil {
		t.Fatal(err)
	}
	_, err = DecodeNPZ(bytes.NewReader(buf.Bytes()), int64(buf.Len()), WithMaxBytes(1<<20))
	wantErr(t, err, ErrTooLarge, nil, `array "z" needs 67108864 × 1 bytes`)
}

// TestLyingZipSizes checks that a member whose directory and .npy header
// both claim far more data than its compressed stream holds fails without
// allocating what was claimed.
func TestLyingZipSizes(t *testing.T) {
	const claimed = 100_000_000 // float32 elements: 400 MB
	hdr := appendHeader(nil, dtypes[0], []int{claimed})
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
	fw.Write(hdr)
	fw.Write(make([]byte, 4096))
	fw.Close()

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{
		Name: "a.npy", Method: zip.Deflate,
		CompressedSize64:   uint64(comp.Len()),
		UncompressedSize64: uint64(len(hdr)) + 4*claimed,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(comp.Bytes())
	zw.Close()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = DecodeNPZ(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	runtime.ReadMemStats(&after)
	wantErr(t, err, ErrFormat, io.ErrUnexpectedEOF, `array "a" is truncated in its data`)
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<20 {
		t.Errorf("allocated %d bytes for a member of %d compressed bytes", n, comp.Len())
	}

	// The same lie in a stored member is caught from the directory alone.
	buf.Reset()
	zw = zip.NewWriter(&buf)
	w, _ = zw.CreateRaw(&zip.FileHeader{Name: "a.npy", Method: zip.Store,
		CompressedSize64: uint64(len(hdr)) + 4*claimed, UncompressedSize64: uint64(len(hdr)) + 4*claimed})
	w.Write(hdr)
	zw.Close()
	_, err = DecodeNPZ(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	wantErr(t, err, ErrFormat, io.ErrUnexpectedEOF, "compressed bytes")
}

func TestZipMemberErrors(t *testing.T) {
	build := func(fn func(zw *zip.Writer)) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		fn(zw)
		zw.Close()
		return buf.Bytes()
	}
	npyData := func() []byte {
		var b bytes.Buffer
		EncodeNPY(&b, Array{Dtype: "int32", Shape: []int{2}, Data: []int32{1, 2}})
		return b.Bytes()
	}
	add := func(zw *zip.Writer, name string, method uint16, data []byte) {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		w.Write(data)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		kind error
		msg  string
	}{
		{"not npy", build(func(zw *zip.Writer) { add(zw, "readme.txt", zip.Store, []byte("hi")) }), ErrUnsupported, `member "readme.txt", which is not a .npy array`},
		{"directory", build(func(zw *zip.Writer) { add(zw, "d/", zip.Store, nil) }), ErrUnsupported, `member "d/"`},
		{"duplicate", build(func(zw *zip.Writer) {
			add(zw, "a.npy", zip.Deflate, npyData())
			add(zw, "a.npy", zip.Store, npyData())
		}), ErrFormat, `array "a" appears twice`},
		{"bad data", build(func(zw *zip.Writer) { add(zw, "a.npy", zip.Store, []byte("not numpy at all")) }), ErrFormat, `array "a" is not a .npy array`},
		{"method", build(func(zw *zip.Writer) {
			w, _ := zw.CreateRaw(&zip.FileHeader{Name: "a.npy", Method: 12, CompressedSize64: 3, UncompressedSize64: 3})
			w.Write([]byte("abc"))
		}), ErrUnsupported, "compression method 12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeNPZ(bytes.NewReader(tc.in), int64(len(tc.in)))
			wantErr(t, err, tc.kind, nil, tc.msg)
		})
	}

	// A flipped bit in stored data is caught by the checksum.
	in := build(func(zw *zip.Writer) { add(zw, "a.npy", zip.Store, npyData()) })
	i := bytes.Index(in, []byte{1, 0, 0, 0, 2, 0, 0, 0})
	in[i] ^= 4
	_, err := DecodeNPZ(bytes.NewReader(in), int64(len(in)))
	wantErr(t, err, ErrFormat, zip.ErrChecksum, `array "a" fails its size or checksum check`)
}
