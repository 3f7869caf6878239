package format

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/wmzip/wmzip/internal/testkit"
	"github.com/wmzip/wmzip/internal/wm"
)

// record is one episode or chunk record of a file, from its index.
type record struct {
	off, end      int64
	episode       int // episode it belongs to
	chunk         int // -1 for the episode record
	first, states int // a chunk's first step and states
}

// records lists a complete file's records in file order.
func records(t *testing.T, b []byte, m *wm.Model, opts ...Option) []record {
	t.Helper()
	f, err := Open(bytes.NewReader(b), int64(len(b)), m, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var rs []record
	for e, ep := range f.idx.episodes {
		rs = append(rs, record{ep.offset, ep.offset + episodeHdrSize + ep.metaLen + crcSize, e, -1, 0, 0})
		for c, ch := range ep.chunks {
			rs = append(rs, record{ch.offset, ch.offset + ch.length, e, c, int(ch.first), int(ch.states)})
		}
	}
	return rs
}

// prefixEpisodes is what recovery must return for a file cut at n: the
// episodes whose record ends by n, with the states of their chunks that end
// by n. An episode none of whose chunks ends by n is kept only if it is
// empty and the tag of the record after it (an episode's or the index) is
// there to say so.
func prefixEpisodes(eps []episode, rs []record, n int, cut int64) []episode {
	var out []episode
	for i, r := range rs {
		if r.end > cut {
			break
		}
		src := eps[r.episode]
		if r.chunk < 0 {
			empty := i+1 == len(rs) || rs[i+1].chunk < 0
			if empty && r.end < cut || !empty && rs[i+1].end <= cut {
				out = append(out, episode{Meta: src.Meta})
			}
			continue
		}
		e := &out[len(out)-1]
		lo, hi := r.first, r.first+r.states
		e.Actions = append(e.Actions, src.Actions[lo:hi]...)
		e.Codes = append(e.Codes, src.Codes[lo*n:hi*n]...)
	}
	return out
}

// normalize makes nil and empty slices compare equal.
func normalize(eps []episode) []episode {
	for i := range eps {
		if len(eps[i].Actions) == 0 {
			eps[i].Actions, eps[i].Codes = nil, nil
		}
	}
	return eps
}

func recoveryFile(t *testing.T, lossy bool) ([]byte, *wm.Model, []episode, []Option) {
	g := wm.Geometry{S: 2, M: 3, K: 7}
	rng := rand.New(rand.NewPCG(31, 32))
	eps := genEpisodes(rng, g, []int{5, 0, 3, 4, 1})
	m := trainModel(g, 11, eps)
	opts := []Option{WithKeyframeInterval(2), WithLanes(3), WithEmbeddedModel(true)}
	if lossy {
		opts = append(opts, withGate(3<<16, testRetain(11)))
	}
	b := encode(t, m, eps, opts...)
	if lossy {
		// The lossy decode is the writer's reconstruction, not the source.
		got, err := readAll(b, nil, opts...)
		if err != nil {
			t.Fatal(err)
		}
		eps = got
	}
	return b, m, eps, opts
}

// TestRecoverEveryCut cuts a file at every offset, as a crash mid-write
// would: recovery must return exactly the complete records before the
// cut, Recover must write a valid file holding them, and a Reader with
// recovery must read the same. Every offset with WMZIP_LONG=1
// (testkit.Long), a sample of them and the complete file by default.
func TestRecoverEveryCut(t *testing.T) {
	for _, lossy := range []bool{false, true} {
		b, m, eps, opts := recoveryFile(t, lossy)
		rs := records(t, b, m, opts...)
		bodyStart := rs[0].off
		ropts := append(opts[:len(opts):len(opts)], WithRecovery(true))
		step, first := testkit.Stride(fmt.Sprint(t.Name(), lossy), 5, 11)
		for c := first; c < len(b)+step; c += step {
			cut := int64(min(c, len(b))) // the last is the complete file
			in := b[:cut]
			f, err := Open(bytes.NewReader(in), cut, nil, ropts...)
			if cut < bodyStart {
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("lossy=%v cut %d inside the header or model: %v", lossy, cut, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("lossy=%v cut %d: %v", lossy, cut, err)
			}
			want := normalize(prefixEpisodes(eps, rs, m.Geom.N(), cut))
			rec, _ := f.Recovered()
			if rec.Complete != (cut == int64(len(b))) {
				t.Fatalf("lossy=%v cut %d: Complete = %v", lossy, cut, rec.Complete)
			}
			got, err := fileEpisodes(f)
			if err != nil {
				t.Fatalf("lossy=%v cut %d: decoding the recovered file: %v", lossy, cut, err)
			}
			if err := sameEpisodes(normalize(got), want); err != nil {
				t.Fatalf("lossy=%v cut %d: recovered %v", lossy, cut, err)
			}
			if err := f.Verify(); err != nil {
				t.Fatalf("lossy=%v cut %d: Verify: %v", lossy, cut, err)
			}
			var out bytes.Buffer
			if _, _, err := Recover(&out, bytes.NewReader(in), cut, nil, opts...); err != nil {
				t.Fatalf("lossy=%v cut %d: Recover: %v", lossy, cut, err)
			}
			fixed, err := readAll(out.Bytes(), nil, opts...)
			if err != nil {
				t.Fatalf("lossy=%v cut %d: recovered file does not decode: %v", lossy, cut, err)
			}
			if err := sameEpisodes(normalize(fixed), want); err != nil {
				t.Fatalf("lossy=%v cut %d: Recover wrote %v", lossy, cut, err)
			}
			if cut == int64(len(b)) && !bytes.Equal(out.Bytes(), b) {
				t.Fatalf("lossy=%v: recovering a complete file changed it", lossy)
			}
			seq, err := readAll(in, nil, ropts...)
			if err != nil {
				t.Fatalf("lossy=%v cut %d: Reader with recovery: %v", lossy, cut, err)
			}
			if err := sameEpisodes(normalize(seq), want); err != nil {
				t.Fatalf("lossy=%v cut %d: Reader with recovery: %v", lossy, cut, err)
			}
		}
	}
}

// fileEpisodes decodes every episode of an opened file.
func fileEpisodes(f *File) ([]episode, error) { return testkit.FileEpisodes(f) }

// framingOnly is what a Reader with recovery must return for a complete
// file whose record bad is damaged: every other episode whole, and the
// damaged one with its chunks before the damage, or dropped if it keeps
// none (or its own record is damaged).
func framingOnly(eps []episode, rs []record, n int, bad int) []episode {
	var out []episode
	for i, r := range rs {
		src := eps[r.episode]
		switch {
		case r.chunk < 0 && i != bad && (rs[bad].episode != r.episode || rs[bad].chunk > 0):
			out = append(out, episode{Meta: src.Meta})
		case r.chunk >= 0 && r.episode == rs[bad].episode && r.chunk >= rs[bad].chunk:
		case r.chunk >= 0 && (r.episode != rs[bad].episode || rs[bad].chunk > 0):
			e := &out[len(out)-1]
			lo, hi := r.first, r.first+r.states
			e.Actions = append(e.Actions, src.Actions[lo:hi]...)
			e.Codes = append(e.Codes, src.Codes[lo*n:hi*n]...)
		}
	}
	return out
}

// keptAround is what Open and Recover must return for a complete file
// whose record bad is damaged (issue 24, point 3): every state outside
// it, episode numbers kept. A damaged episode record is replaced by one
// saying its metadata was lost; after a damaged chunk, the episode's later
// chunks become a new last episode saying where they come from. It also
// returns the gap and move recovery must report.
func keptAround(eps []episode, rs []record, n int, bad int) ([]episode, Gap, []Move) {
	out := make([]episode, len(eps))
	b := rs[bad]
	gap := Gap{Episode: b.episode, From: int64(b.first), To: int64(b.first + b.states)}
	var moves []Move
	var cont *episode
	for i, r := range rs {
		src := eps[r.episode]
		e := &out[r.episode]
		switch {
		case r.chunk < 0 && i == bad:
			e.Meta = fmt.Appendf(nil, `{"recovered":{"episode":%d,"step":0,"metadata_lost":true}}`, r.episode)
			moves = append(moves, Move{Episode: r.episode, To: r.episode})
		case r.chunk < 0:
			e.Meta = src.Meta
		case i == bad:
		case r.episode == b.episode && b.chunk >= 0 && r.chunk > b.chunk:
			if cont == nil {
				out = append(out, episode{Meta: fmt.Appendf(nil, `{"recovered":{"episode":%d,"step":%d}}`, r.episode, r.first)})
				cont = &out[len(out)-1]
				moves = append(moves, Move{Episode: r.episode, Step: int64(r.first), To: len(eps)})
			}
			e = cont
			fallthrough
		default:
			lo, hi := r.first, r.first+r.states
			e.Actions = append(e.Actions, src.Actions[lo:hi]...)
			e.Codes = append(e.Codes, src.Codes[lo*n:hi*n]...)
		}
	}
	return out, gap, moves
}

// TestRecoverSkipsDamage (issues 15 and 24, point 3) damages one record
// of a file at a time, in its middle or in its length field, with the
// index intact and with the file also cut before its index: recovery
// keeps every state outside the damaged record, episode numbers kept, and
// reports the gap by episode and steps. Through the index it always
// resynchronizes; framing alone (Open without an intact index) does the
// same unless a length field was hit; a Reader (framing, one pass) keeps
// an episode up to the damage.
func TestRecoverSkipsDamage(t *testing.T) {
	for _, lossy := range []bool{false, true} {
		b, m, eps, opts := recoveryFile(t, lossy)
		rs := records(t, b, m, opts...)
		n := m.Geom.N()
		ropts := append(opts[:len(opts):len(opts)], WithRecovery(true))
		indexAt := rs[len(rs)-1].end
		for i, r := range rs {
			for _, at := range []int64{(r.off + r.end) / 2, r.off + 5} { // r.off+5: a length field
				mut := bytes.Clone(b)
				mut[at] ^= 0x10
				want, wantGap, wantMoves := keptAround(eps, rs, n, i)
				want = normalize(want)
				name := fmt.Sprintf("lossy=%v record %d byte %d", lossy, i, at-r.off)
				f, err := Open(bytes.NewReader(mut), int64(len(mut)), nil, ropts...)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got, err := fileEpisodes(f)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if err := sameEpisodes(normalize(got), want); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				rec, _ := f.Recovered()
				if rec.Complete || rec.Stop != nil || len(rec.Gaps) != 1 {
					t.Fatalf("%s: recovery %+v", name, rec)
				}
				if g := rec.Gaps[0]; g.Offset != r.off || g.Length != r.end-r.off || g.Episode != wantGap.Episode ||
					r.chunk >= 0 && (g.From != wantGap.From || g.To != wantGap.To) {
					t.Fatalf("%s: gap %+v, want episode %d steps %d to %d", name, g, wantGap.Episode, wantGap.From, wantGap.To)
				}
				if !slices.Equal(rec.Moved, wantMoves) {
					t.Fatalf("%s: moved %v, want %v", name, rec.Moved, wantMoves)
				}
				indexed := rec.Gaps[0].Indexed
				var out bytes.Buffer
				if _, _, err := Recover(&out, bytes.NewReader(mut), int64(len(mut)), nil, opts...); err != nil {
					t.Fatalf("%s: Recover: %v", name, err)
				}
				fixed, err := readAll(out.Bytes(), nil, opts...)
				if err != nil {
					t.Fatalf("%s: recovered file: %v", name, err)
				}
				if err := sameEpisodes(normalize(fixed), want); err != nil {
					t.Fatalf("%s: Recover wrote %v", name, err)
				}
				seq, err := readAll(mut, nil, ropts...)
				if err != nil {
					t.Fatalf("%s: Reader with recovery: %v", name, err)
				}
				framing := normalize(framingOnly(eps, rs, n, i))
				if err := sameEpisodes(normalize(seq), framing); err != nil && !indexed {
					t.Fatalf("%s: Reader with recovery: %v", name, err)
				}
				if at == (r.off+r.end)/2 && r.chunk >= 0 && indexed {
					t.Fatalf("%s: the framing was intact, yet the index was needed", name)
				}
				// Without the index, framing alone recovers the same when intact.
				cut := mut[:indexAt]
				fc, err := Open(bytes.NewReader(cut), int64(len(cut)), nil, ropts...)
				if err != nil {
					t.Fatalf("%s, cut: %v", name, err)
				}
				got, err = fileEpisodes(fc)
				if err != nil {
					t.Fatalf("%s, cut: %v", name, err)
				}
				if err := sameEpisodes(normalize(got), want); err != nil && !indexed {
					t.Fatalf("%s, cut: %v", name, err)
				}
				seq, err = readAll(cut, nil, ropts...)
				if err != nil {
					t.Fatalf("%s, cut: Reader with recovery: %v", name, err)
				}
				if err := sameEpisodes(normalize(seq), framing); err != nil && !indexed {
					t.Fatalf("%s, cut: Reader with recovery: %v", name, err)
				}
				// Append refuses a file with a gap.
				if _, err := Append(&memFile{B: bytes.Clone(mut)}, m, ropts...); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%s: Append over a gap: %v", name, err)
				}
			}
		}
	}
}

// memFile is an in-memory AppendFile that remembers what was synced.
type memFile = testkit.MemFile

func writeEpisodes(t *testing.T, w *Writer, n int, eps []episode) {
	t.Helper()
	for _, e := range eps {
		if err := w.WriteEpisode(e.Meta); err != nil {
			t.Fatal(err)
		}
		for i, a := range e.Actions {
			if err := w.WriteState(a, e.Codes[i*n:(i+1)*n]); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestAppend appends episodes to a closed file: the result must be the
// very bytes of writing all episodes at once.
func TestAppend(t *testing.T) {
	g := wm.Geometry{S: 2, M: 2, K: 6}
	eps := genEpisodes(rand.New(rand.NewPCG(33, 34)), g, []int{4, 3, 0, 6, 2})
	m := trainModel(g, 12, eps)
	n := g.N()
	for _, embed := range []bool{false, true} {
		opts := []Option{WithKeyframeInterval(3), WithLanes(2), WithEmbeddedModel(embed)}
		want := encode(t, m, eps, opts...)
		for split := 0; split <= len(eps); split++ {
			f := &memFile{B: encode(t, m, eps[:split], opts...)}
			f.Pos = 7 // Append must not depend on the position
			model := m
			if embed {
				model = nil
			}
			w, err := Append(f, model)
			if err != nil {
				t.Fatalf("embed=%v split %d: %v", embed, split, err)
			}
			writeEpisodes(t, w, n, eps[split:])
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.B, want) {
				t.Fatalf("embed=%v split %d: appended file differs from a single write", embed, split)
			}
		}
	}
	// Appending with another model is a mismatch, and nothing is cut.
	f := &memFile{B: encode(t, m, eps[:2], WithKeyframeInterval(3))}
	before := bytes.Clone(f.B)
	other := trainModel(g, 12, eps[2:])
	if _, err := Append(f, other); !errors.Is(err, ErrModelMismatch) {
		t.Fatalf("Append with another model: %v", err)
	}
	if !bytes.Equal(f.B, before) {
		t.Fatal("failed Append changed the file")
	}
}

// TestAppendCrash crashes at every byte of an append: the old episodes are
// never lost, and everything flushed before the crash is recovered.
func TestAppendCrash(t *testing.T) {
	g := wm.Geometry{S: 2, M: 2, K: 6}
	eps := genEpisodes(rand.New(rand.NewPCG(35, 36)), g, []int{4, 3, 5, 0, 2})
	m := trainModel(g, 12, eps)
	n := g.N()
	opts := []Option{WithKeyframeInterval(2), WithLanes(2)}
	base := encode(t, m, eps[:2], opts...)
	f := &memFile{B: bytes.Clone(base)}
	w, err := Append(f, m)
	if err != nil {
		t.Fatal(err)
	}
	// Flush after every episode and remember what each flush made durable.
	type point struct {
		size     int64
		episodes int
	}
	var points []point
	for i := range eps[2:] {
		writeEpisodes(t, w, n, eps[2+i:3+i])
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		// The episode's last chunk is pending until the next record.
		points = append(points, point{f.Synced, 3 + i})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if f.Syncs != len(eps)-2 {
		t.Fatalf("%d syncs for %d flushes", f.Syncs, len(eps)-2)
	}
	full := f.B
	if want := encode(t, m, eps, opts...); !bytes.Equal(full, want) {
		t.Fatal("appended file differs from a single write")
	}
	rs := records(t, full, m)
	ropts := append(opts[:len(opts):len(opts)], WithRecovery(true))
	bf, err := Open(bytes.NewReader(base), int64(len(base)), m)
	if err != nil {
		t.Fatal(err)
	}
	oldEnd := bf.payloadEnd()
	for cut := oldEnd; cut <= int64(len(full)); cut++ {
		fc, err := Open(bytes.NewReader(full[:cut]), cut, m, ropts...)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		got, err := fileEpisodes(fc)
		if err != nil {
			t.Fatal(err)
		}
		want := normalize(prefixEpisodes(eps, rs, n, cut))
		if err := sameEpisodes(normalize(got), want); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if len(got) < 2 {
			t.Fatalf("cut %d: lost old episodes", cut)
		}
		for _, p := range points {
			// An empty episode last is known to be whole only once the
			// next record's tag follows it.
			want := p.episodes
			if cut == p.size && len(eps[p.episodes-1].Actions) == 0 {
				want--
			}
			if cut >= p.size && len(got) < want {
				t.Fatalf("cut %d after a flush at %d: %d episodes, want at least %d", cut, p.size, len(got), p.episodes)
			}
		}
		// Appending to the crashed file with recovery continues it.
		cf := &memFile{B: bytes.Clone(full[:cut])}
		w, err := Append(cf, m, ropts...)
		if err != nil {
			t.Fatalf("cut %d: Append with recovery: %v", cut, err)
		}
		writeEpisodes(t, w, n, eps[4:])
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		again, err := readAll(cf.B, m)
		if err != nil {
			t.Fatalf("cut %d: continued file: %v", cut, err)
		}
		if err := sameEpisodes(normalize(again), normalize(append(want, eps[4:]...))); err != nil {
			t.Fatalf("cut %d: continued file: %v", cut, err)
		}
	}
}

// TestReadHeaderReadsOnlyTheHeader checks that a header-only inspection
// consumes the 64 header bytes and nothing else.
func TestReadHeaderReadsOnlyTheHeader(t *testing.T) {
	b, _, _ := smallFile(t, true)
	r := &countingReader{r: bytes.NewReader(b)}
	if _, err := ReadHeader(r); err != nil {
		t.Fatal(err)
	}
	if r.n != HeaderSize {
		t.Fatalf("ReadHeader read %d bytes, want %d", r.n, HeaderSize)
	}
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
