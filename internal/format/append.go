package format

import (
	"io"

	"github.com/wmzip/wmzip/internal/wm"
)

// AppendFile is what Append needs of a file: *os.File satisfies it.
type AppendFile interface {
	io.ReaderAt
	io.Writer
	io.Seeker
	Truncate(size int64) error
}

// Append returns a Writer that adds episodes to the existing .wmz file f,
// positioned anywhere. It checks the file's header, model and index (as
// Open does, with the same options), cuts off the index and trailer, and
// writes new episode and chunk records in their place; Close writes a new
// index and trailer covering the old episodes and the new. The header's
// geometry, precision, lanes, keyframe interval, lambda, levels and model are
// kept: options that would choose them are ignored (a finite λ needs the
// model's gate or the same WithRetainRule as the original writer). model
// may be nil if the file embeds its model. Writer.Account covers the
// chunks this Writer writes, not the old ones.
//
// Until Close, the file has no index: a crash leaves the old records and
// the new ones written so far, which Open with WithRecovery (or Recover)
// restores. With WithRecovery, Append also continues a file that was never
// closed, after its last valid record; the bytes after that are discarded.
// A file damaged before that (Recovery.Gaps) is refused: Recover it first.
//
// The old episodes are not decoded again (unless WithRecovery scans them),
// so appending costs a read of the index, not of the file. Only one Writer
// may append to a file at a time, and readers must not expect an index
// until Close; as for NewWriter, the Writer is not safe for concurrent use.
func Append(f AppendFile, model *wm.Model, opts ...Option) (*Writer, error) {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	if opts, err = resignKey(f, size, opts); err != nil {
		return nil, err
	}
	old, err := Open(f, size, model, opts...)
	if err != nil {
		return nil, err
	}
	resign, err := appendSignature(f, old)
	if err != nil {
		return nil, err
	}
	end := old.payloadEnd()
	if rec, ok := old.Recovered(); ok {
		if len(rec.Gaps) > 0 {
			return nil, &FormatError{Offset: rec.Gaps[0].Offset, Msg: "damaged records before the end: Recover the file before appending", Err: ErrCorrupt}
		}
		end = rec.End
	}
	w := &Writer{
		w:      f,
		h:      old.h,
		model:  old.model,
		chunkG: old.h.KeyframeInterval,
		off:    end,
		idx:    *old.idx,
		resign: resign,
	}
	// The old episodes are complete: their slices may be shared, but the
	// Writer only appends new episodes, never chunks to old ones.
	w.idx.episodes = w.idx.episodes[:len(w.idx.episodes):len(w.idx.episodes)]
	gp, rules, err := useGate(&w.h, w.model, old.cfg)
	if err != nil {
		return nil, err
	}
	w.level = rules.levels() - 1
	if err := w.startCoders(rules, gp, old.cfg.measure, old.cfg.threads); err != nil {
		return nil, err
	}
	// Only now, with everything checked, cut the index and trailer off.
	if err := f.Truncate(end); err != nil {
		return nil, err
	}
	if _, err := f.Seek(end, io.SeekStart); err != nil {
		return nil, err
	}
	return w, nil
}
