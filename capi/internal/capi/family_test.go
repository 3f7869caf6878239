package capi

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/wmzip/wmzip"
	"github.com/wmzip/wmzip/internal/walks"
	"github.com/wmzip/wmzip/train"
)

// familyFixture is a family (the default of Train for float
// observations) trained once for the tests, and the episodes it was
// trained on. Training one takes seconds, minutes under the race
// detector: the tests of families, which run nothing concurrently, are
// left out of -short (CI's race stage).
var familyFixture = sync.OnceValues(func() (Handle, []wmzip.Episode) {
	eps := walks.Episodes(1, 5)
	h, err := Train(context.Background(), trajectory(eps), []byte(`{"seed": 1}`))
	if err != nil {
		panic(err)
	}
	return h, eps
})

// summary is CodecSummary's JSON.
type summary struct {
	ModelID       string `json:"model_id"`
	Slots         int    `json:"slots"`
	Subspaces     int    `json:"subspaces"`
	Alphabet      int    `json:"alphabet"`
	Dim           *int   `json:"dim"`
	HasGate       bool   `json:"has_gate"`
	ModelGeometry struct {
		Slots     int `json:"slots"`
		Subspaces int `json:"subspaces"`
		Alphabet  int `json:"alphabet"`
	} `json:"model_geometry"`
	Members   []string `json:"members"`
	Quantizer *struct {
		Vectors    int64   `json:"vectors"`
		Distortion float64 `json:"distortion"`
		Cosine     float64 `json:"cosine"`
	} `json:"quantizer"`
	Calibration []struct {
		Lambda       *float64 `json:"lambda"`
		Distortion   float64  `json:"distortion"`
		BitsPerState float64  `json:"bits_per_state"`
	} `json:"calibration"`
}

func summaryOf(t *testing.T, h Handle) summary {
	t.Helper()
	b, err := CodecSummary(h)
	if err != nil {
		t.Fatal(err)
	}
	var s summary
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&s); err != nil {
		t.Fatalf("summary %s: %v", b, err)
	}
	return s
}

// TestFamily: Train's default is the Go library's family, byte for byte;
// its members are handles of their own, coarsest first, the last the
// bundle's finest; the summary says what Members, Calibration and
// Geometry say.
func TestFamily(t *testing.T) {
	if testing.Short() {
		t.Skip("trains two families")
	}
	h, eps := familyFixture()
	live := Live()
	c, err := train.Codec(context.Background(), eps, train.WithFamily(1))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := c.MarshalBinary()
	if got, err := CodecBytes(h); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the family's bytes differ from train.Codec's with WithFamily (err %v)", err)
	}
	ms := c.Members()
	if len(ms) < 2 {
		t.Fatalf("a family of %d members", len(ms))
	}
	if n, hs, err := CodecMembers(h, len(ms)-1); err != nil || n != len(ms) || hs != nil {
		t.Fatalf("members with room for %d: %d, %v, %v", len(ms)-1, n, hs, err)
	}
	if Live() != live {
		t.Fatal("asking for the number of members made handles")
	}
	n, hs, err := CodecMembers(h, 64)
	if err != nil || n != len(ms) || len(hs) != n {
		t.Fatalf("members: %d, %v, %v", n, hs, err)
	}
	defer func() {
		for _, m := range hs {
			FreeCodec(m)
		}
	}()
	s := summaryOf(t, h)
	in, _ := InfoOfCodec(h)
	g := c.Geometry()
	if s.ModelID != in.ModelID || s.Slots != g.S || s.Subspaces != g.M || s.Alphabet != g.K || s.Dim == nil ||
		*s.Dim != in.Dim || s.HasGate || in.HasGate || len(s.Calibration) != 0 || len(s.Members) != n {
		t.Fatalf("the bundle's summary %+v (info %+v)", s, in)
	}
	for i, m := range ms {
		mh := hs[i]
		mb, _ := CodecBytes(mh)
		wb, _ := m.MarshalBinary()
		if !bytes.Equal(mb, wb) {
			t.Fatalf("member %d: bytes differ from Members()[%d]'s", i, i)
		}
		ms := summaryOf(t, mh)
		mg, model := m.Geometry(), m.Model().Geom
		if ms.ModelID != m.Model().ID().String() || s.Members[i] != ms.ModelID {
			t.Fatalf("member %d: model %s, the bundle lists %s", i, ms.ModelID, s.Members[i])
		}
		if ms.Slots != mg.S || ms.Subspaces != mg.M || ms.Alphabet != mg.K || ms.Slots != g.S || ms.HasGate ||
			ms.ModelGeometry.Slots != model.S || ms.ModelGeometry.Subspaces != model.M || ms.ModelGeometry.Alphabet != model.K ||
			!slices.Equal(ms.Members, []string{ms.ModelID}) {
			t.Fatalf("member %d: summary %+v, geometry %+v, the model's %+v", i, ms, mg, model)
		}
		cal := m.Calibration()
		if len(cal) == 0 || len(ms.Calibration) != len(cal) {
			t.Fatalf("member %d: %d points of calibration, Calibration() has %d", i, len(ms.Calibration), len(cal))
		}
		for j, p := range cal {
			q := ms.Calibration[j]
			l := math.Inf(1)
			if q.Lambda != nil {
				l = *q.Lambda
			}
			if l != p.Lambda || q.Distortion != p.Distortion || q.BitsPerState != p.BitsPerState {
				t.Fatalf("member %d point %d: %+v, want %+v", i, j, q, p)
			}
		}
		if !math.IsInf(cal[0].Lambda, 1) || ms.Calibration[0].Lambda != nil {
			t.Fatalf("member %d: the first point is at λ %v, want +Inf (null)", i, cal[0].Lambda)
		}
		// A member of one model is its own only member.
		k, own, err := CodecMembers(mh, 1)
		if err != nil || k != 1 || len(own) != 1 {
			t.Fatalf("member %d's members: %d, %v, %v", i, k, own, err)
		}
		if b, _ := CodecBytes(own[0]); !bytes.Equal(b, wb) {
			t.Fatalf("member %d: its own member differs from it", i)
		}
		FreeCodec(own[0])
	}
	if s.Members[n-1] != s.ModelID {
		t.Fatalf("the finest member is %s, the bundle %s", s.Members[n-1], s.ModelID)
	}
	if _, _, err := CodecMembers(0, 1); Code(err) != ErrInput {
		t.Fatalf("members of handle 0: %v", err)
	}
	if _, err := CodecSummary(1 << 50); Code(err) != ErrInput {
		t.Fatalf("summary of an unknown handle: %v", err)
	}
}

// TestSummarySingle: a codec of the single quantizer has a gate, one
// member and no calibration; its model's geometry is its own.
func TestSummarySingle(t *testing.T) {
	fx := setup(t)
	s := summaryOf(t, fx.codec)
	in, _ := InfoOfCodec(fx.codec)
	if !s.HasGate || s.Subspaces != 8 || s.Alphabet != 16 || s.Slots != in.Slots || len(s.Calibration) != 0 ||
		!slices.Equal(s.Members, []string{in.ModelID}) || s.ModelGeometry.Slots != s.Slots ||
		s.ModelGeometry.Subspaces != s.Subspaces || s.Quantizer == nil || s.Quantizer.Vectors != in.QuantizerVectors {
		t.Fatalf("summary %+v, info %+v", s, in)
	}
	codes, err := Train(context.Background(), trajectory(walks.CodesOnly(fx.eps)), []byte(`{"gate_holdout": 0}`))
	if err != nil {
		t.Fatal(err)
	}
	defer FreeCodec(codes)
	if s := summaryOf(t, codes); s.Dim != nil || s.Quantizer != nil || s.HasGate {
		t.Fatalf("a codec of codes only, without a gate: %+v", s)
	}
}

// TestFamilyFiles: a lossy file of a family is written by one member,
// which a file and a reader given the bundle are read with: their codec
// handles are that member's and arrays are sized by its shape; a
// lossless file is the bundle's.
func TestFamilyFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a family")
	}
	h, eps := familyFixture()
	c, _ := codecOf(h)
	dir := t.TempDir()
	write := func(name, opts string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		w, err := CreateWriter(path, h, []byte(opts))
		if err != nil {
			t.Fatal(err)
		}
		defer FreeWriter(w)
		for _, e := range eps[:4] {
			if err := WriterBegin(w, nil); err != nil {
				t.Fatal(err)
			}
			if err := WriterObs(w, e.Actions, len(e.Actions), e.Obs); err != nil {
				t.Fatal(err)
			}
		}
		if err := CloseWriter(w); err != nil {
			t.Fatal(err)
		}
		return path
	}
	others := 0 // lossy files written by a member coarser than the finest
	for _, tc := range []struct{ name, opts string }{
		{"lossless", ``},
		{"lambda", `{"lambda": 20}`},
		{"source", `{"source_distortion": 0.05}`},
	} {
		path := write(tc.name+".wmz", tc.opts)
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := wmzip.NewReader(fh, c)
		if err != nil {
			t.Fatal(err)
		}
		mem := r.Codec()
		fh.Close()
		if tc.name == "lossless" && mem != c {
			t.Fatalf("a lossless file of the bundle is read with %s, not the bundle", mem.Model().ID())
		}
		if mem != c {
			others++
		}
		if slices.Index(c.Members(), mem) < 0 && mem != c {
			t.Fatalf("%s: read with %s, no member of the bundle", tc.name, mem.Model().ID())
		}
		f, err := OpenFile(path, h, nil)
		if err != nil {
			t.Fatal(err)
		}
		fc, err := FileCodec(f)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := CodecBytes(fc)
		wb, _ := mem.MarshalBinary()
		if !bytes.Equal(got, wb) {
			t.Fatalf("%s: the file's codec handle is not the member that wrote it", tc.name)
		}
		var info struct {
			ModelID string `json:"model_id"`
		}
		b, _ := FileInfo(f)
		json.Unmarshal(b, &info)
		if info.ModelID != mem.Model().ID().String() {
			t.Fatalf("%s: the file names model %s, its codec is %s", tc.name, info.ModelID, mem.Model().ID())
		}
		fin, _ := InfoOfCodec(fc)
		n, d := fin.Slots*fin.Subspaces, fin.Slots*fin.Dim
		fh, _ = os.Open(path)
		all, err := wmzip.DecodeAll(fh, c)
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		k := len(all[1].Actions)
		codes, obs := make([]uint16, k*n), make([]float32, k*d)
		if err := FileStates(f, 1, 0, k, nil, Codes{U16: codes}, obs); err != nil {
			t.Fatalf("%s: episode 1 in arrays of the member's shape: %v", tc.name, err)
		}
		if !slices.Equal(codes, all[1].Codes) || !slices.Equal(obs, all[1].Obs) {
			t.Fatalf("%s: episode 1 differs from DecodeAll's", tc.name)
		}
		if _, err := FileState(f, 1, 0, Codes{U16: make([]uint16, n-1)}); Code(err) != ErrInput {
			t.Fatalf("%s: a state in an array one short of the member's: %v", tc.name, err)
		}
		rd, err := OpenReader(path, h, nil)
		if err != nil {
			t.Fatal(err)
		}
		rc, _ := ReaderCodec(rd)
		if rb, _ := CodecBytes(rc); !bytes.Equal(rb, wb) {
			t.Fatalf("%s: the reader's codec is not the member that wrote the file", tc.name)
		}
		one := make([]uint16, n)
		ReaderNext(rd)
		if _, err := ReaderState(rd, Codes{U16: one}); err != nil || !slices.Equal(one, all[0].Codes[:n]) {
			t.Fatalf("%s: the reader's first state: %v", tc.name, err)
		}
		CloseReader(rd)
		// A search given the bundle runs with the member, and takes its
		// codes: a state's own are at distance 0.
		s, err := OpenSearch([]string{path}, h, nil)
		if err != nil {
			t.Fatal(err)
		}
		sc, _ := SearchCodec(s)
		if sb, _ := CodecBytes(sc); !bytes.Equal(sb, wb) {
			t.Fatalf("%s: the search's codec is not the member that wrote the file", tc.name)
		}
		var sinfo struct {
			ModelID string `json:"model_id"`
		}
		b, _ = SearchInfo(s)
		if json.Unmarshal(b, &sinfo); sinfo.ModelID != info.ModelID {
			t.Fatalf("%s: the search names model %s, the file %s", tc.name, sinfo.ModelID, info.ModelID)
		}
		dist := make([]float64, 1)
		if _, err := SearchCodes(s, Codes{U16: all[1].Codes[5*n : 6*n]}, true, 1, nil, Results{Distance: dist}); err != nil || dist[0] != 0 {
			t.Fatalf("%s: state 5 of episode 1 searched by its codes: distance %v, %v", tc.name, dist[0], err)
		}
		CloseSearch(s)
		FreeCodec(sc)
		FreeCodec(rc)
		FreeCodec(fc)
		CloseFile(f)
	}
	if others == 0 {
		t.Fatal("every file was written by the finest member: the test reads no other member's")
	}
}
