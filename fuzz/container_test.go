package fuzz

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/wmzip/wmzip/internal/format"
	"github.com/wmzip/wmzip/internal/wm"
)

func addContainerSeeds(f *testing.F) {
	for _, b := range seedFiles(f, 16<<10, "conformance/*.wmz") {
		f.Add(b, false)
		f.Add(b, true)
	}
}

// FuzzOpen opens arbitrary bytes as a container and decodes all of it,
// sequentially, by random access and in recovery mode. Nothing may panic;
// errors must be format errors; what decodes must decode the same every
// way; a memory limit bounds what decoders allocate; and recovery must
// give only records that decode. With fix set, the input's checksums are
// first made to match (fixChecksums), so that mutations reach the checks
// and decoders behind them.
func FuzzOpen(f *testing.F) {
	addContainerSeeds(f)
	ms := models(f)
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix {
			data = fixChecksums(data)
		}
		openAll(t, data, ms)
	})
}

func openAll(t *testing.T, data []byte, ms []*wm.Model) {
	{
		var h format.Header
		var herr error
		if n := allocated(func() { h, herr = format.ReadHeader(bytes.NewReader(data)) }); n > 64<<10 {
			t.Fatalf("ReadHeader allocated %d bytes", n)
		}
		if herr != nil && !isFileError(herr) {
			t.Fatalf("ReadHeader: %v is not a format error", herr)
		}
		limit := format.WithMaxMemory(memLimit)
		bound := uint64(memLimit+slack) + modelAlloc(data)
		for _, m := range ms {
			if m != nil && herr == nil && m.ID() != h.ModelID {
				continue // a mismatch is covered once, with the other models
			}
			var seqErr error
			if n := allocated(func() { seqErr = stream(data, m, limit) }); n > bound {
				t.Fatalf("streaming decode allocated %d bytes, bound %d", n, bound)
			}
			if seqErr != nil && !isFileError(seqErr) {
				t.Fatalf("Reader: %v is not a format error", seqErr)
			}
			// Decoding ahead on several threads changes no result.
			e1, e3 := stream(data, m, limit, format.WithThreads(1)), stream(data, m, limit, format.WithThreads(3))
			if fmt.Sprint(e1) != fmt.Sprint(e3) || fmt.Sprint(e1) != fmt.Sprint(seqErr) {
				t.Fatalf("Reader: %v on one thread, %v on three, %v by default", e1, e3, seqErr)
			}
			var fl *format.File
			var openErr error
			if n := allocated(func() { fl, openErr = format.Open(bytes.NewReader(data), int64(len(data)), m, limit) }); n > bound {
				t.Fatalf("Open allocated %d bytes, bound %d", n, bound)
			}
			if openErr != nil && !isFileError(openErr) {
				t.Fatalf("Open: %v is not a format error", openErr)
			}
			tooLarge := errors.Is(seqErr, format.ErrTooLarge) || errors.Is(openErr, format.ErrTooLarge)
			var ra []episode
			raErr := openErr
			if openErr == nil {
				if raErr = fl.Verify(); raErr == nil {
					ra, raErr = fileEpisodes(fl)
				}
				if raErr != nil && !isFileError(raErr) {
					t.Fatalf("random access: %v is not a format error", raErr)
				}
				tooLarge = tooLarge || errors.Is(raErr, format.ErrTooLarge)
			}
			if !tooLarge && (seqErr == nil) != (raErr == nil) {
				t.Fatalf("sequential decode: %v; random access: %v", seqErr, raErr)
			}
			var seq []episode
			if seqErr == nil && raErr == nil {
				var err error
				if seq, err = readAll(data, m, limit); err != nil {
					t.Fatal(err)
				}
				if !sameEpisodes(seq, ra) {
					t.Fatal("sequential and random-access decodes differ")
				}
			}
			checkRecovery(t, data, m, seq, seqErr == nil && raErr == nil)
		}
	}
}

// stream decodes a container with a Reader, keeping nothing.
func stream(data []byte, m *wm.Model, opts ...format.Option) error {
	r, err := format.NewReader(bytes.NewReader(data), m, opts...)
	if err != nil {
		return err
	}
	var buf []uint16
	for {
		if _, err := r.NextEpisode(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		for {
			_, c, err := r.ReadState(buf)
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			buf = c
		}
	}
}

// checkRecovery opens data in recovery mode: a valid file must come back
// complete and unchanged; any file must give records that all decode, and
// Recover must write a valid file of the same episodes.
func checkRecovery(t *testing.T, data []byte, m *wm.Model, valid []episode, ok bool) {
	opts := []format.Option{format.WithMaxMemory(memLimit), format.WithRecovery(true)}
	fl, err := format.Open(bytes.NewReader(data), int64(len(data)), m, opts...)
	if err != nil {
		if ok {
			t.Fatalf("recovery rejects a valid file: %v", err)
		}
		if !isFileError(err) {
			t.Fatalf("recovery: %v is not a format error", err)
		}
		return
	}
	rec, _ := fl.Recovered()
	got, err := fileEpisodes(fl)
	if err != nil {
		t.Fatalf("recovered records do not decode: %v", err)
	}
	if err := fl.Verify(); err != nil {
		t.Fatalf("recovered file fails Verify: %v", err)
	}
	if ok && (!rec.Complete || !sameEpisodes(got, valid)) {
		t.Fatalf("recovery of a valid file: complete=%v, stop %v", rec.Complete, rec.Stop)
	}
	seq, err := readAll(data, m, opts...)
	if err != nil && !errors.Is(err, format.ErrTooLarge) && rec.Header == nil {
		t.Fatalf("Reader with recovery failed where Open with recovery did not: %v", err)
	}
	// A Reader has no index to cross a gap with; nor does it continue an
	// episode after a gap, replace a damaged episode record
	// (Recovery.Moved), rebuild a header, or keep an episode whose first
	// chunk is damaged.
	differ := len(rec.Moved) > 0 || rec.Header != nil
	for _, g := range rec.Gaps {
		differ = differ || g.Indexed || g.Episode >= 0 && g.From == 0 && g.To != 0
	}
	if err == nil && !differ && !sameEpisodes(seq, got) {
		t.Fatal("Reader and Open recover different episodes")
	}
	var out bytes.Buffer
	if _, _, err := format.Recover(&out, bytes.NewReader(data), int64(len(data)), m, opts...); err != nil {
		t.Fatalf("Recover after a successful recovery Open: %v", err)
	}
	if ok && !bytes.Equal(out.Bytes(), data) {
		t.Fatal("Recover changed a valid file")
	}
	again, err := readAll(out.Bytes(), m, format.WithMaxMemory(memLimit))
	if err != nil && !errors.Is(err, format.ErrTooLarge) {
		t.Fatalf("file written by Recover does not decode: %v", err)
	}
	if err == nil && !sameEpisodes(again, got) {
		t.Fatal("file written by Recover decodes differently")
	}
}

// FuzzState decodes one state of a container by random access: it must
// agree with the decode of its whole episode.
func FuzzState(f *testing.F) {
	for _, b := range seedFiles(f, 16<<10, "conformance/*.wmz") {
		f.Add(b, uint16(0), uint16(3), true)
		f.Add(b, uint16(2), uint16(9), false)
	}
	ms := models(f)
	f.Fuzz(func(t *testing.T, data []byte, e, step uint16, fix bool) {
		if fix {
			data = fixChecksums(data)
		}
		for _, m := range ms {
			fl, err := format.Open(bytes.NewReader(data), int64(len(data)), m, format.WithMaxMemory(memLimit))
			if err != nil {
				if !isFileError(err) {
					t.Fatalf("Open: %v is not a format error", err)
				}
				continue
			}
			if fl.Episodes() == 0 {
				continue
			}
			ep := int(e) % fl.Episodes()
			n := fl.EpisodeLen(ep)
			if n == 0 {
				if _, err := fl.State(ep, int(step)); !errors.Is(err, format.ErrInput) {
					t.Fatalf("State of an empty episode: %v", err)
				}
				continue
			}
			s := int(step) % n
			a, codes, err := fl.StateAction(ep, s)
			if err != nil {
				if !isFileError(err) {
					t.Fatalf("StateAction: %v is not a format error", err)
				}
				continue
			}
			if len(codes) != fl.Header().Geom.N() {
				t.Fatalf("state of %d codes, want %d", len(codes), fl.Header().Geom.N())
			}
			acts, all, err := fl.DecodeEpisode(ep)
			if err != nil {
				if !isFileError(err) {
					t.Fatalf("DecodeEpisode: %v is not a format error", err)
				}
				continue
			}
			nc := len(codes)
			if acts[s] != a || !bytes.Equal(u16(all[s*nc:(s+1)*nc]), u16(codes)) {
				t.Fatalf("state %d of episode %d differs from the episode's decode", s, ep)
			}
		}
	})
}

func u16(v []uint16) []byte {
	b := make([]byte, 0, 2*len(v))
	for _, x := range v {
		b = append(b, byte(x), byte(x>>8))
	}
	return b
}
