package baseline

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// dictHistoryMax caps the training bytes a zstd dictionary keeps as history.
const dictHistoryMax = 8 << 20

// dictID marks the frames compressed with the training dictionary; any
// non-zero value works, the dictionary never leaves this package.
const dictID = 0x776d7a70 // "wmzp"

// windowFor returns a zstd window that reaches back over n bytes: the best
// level's default of 8 MiB, doubled until it covers n, at most MaxWindowSize.
func windowFor(n int) int {
	w := 8 << 20
	for w < n && w < zstd.MaxWindowSize {
		w <<= 1
	}
	return w
}

// zstdBest compresses src into one frame at klauspost's best level with the
// given window. One goroutine, so the bytes do not depend on the machine.
func zstdBest(src []byte, window int, extra ...zstd.EOption) ([]byte, error) {
	opts := append([]zstd.EOption{
		zstd.WithEncoderLevel(zstd.SpeedBestCompression),
		zstd.WithWindowSize(window),
		zstd.WithEncoderConcurrency(1),
	}, extra...)
	enc, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		return nil, fmt.Errorf("baseline: zstd encoder: %w", err)
	}
	defer enc.Close()
	return enc.EncodeAll(src, nil), nil
}

// dictHistory is the tail of train that a dictionary keeps.
func dictHistory(train []byte) []byte {
	if len(train) > dictHistoryMax {
		return train[len(train)-dictHistoryMax:]
	}
	return train
}

// buildDict builds a zstd dictionary (RFC 8878 format) whose content is the
// tail of train. Its entropy tables must be fitted on data the content does
// not already hold, or every byte is one long match and there are no
// literals to count: so the tables come from compressing train's second half
// against its first, and the first half is then swapped for the full
// content. A dictionary's content is simply its trailing bytes, after the
// tables and repeat offsets, so the swap keeps the format valid.
func buildDict(train []byte) ([]byte, error) {
	const piece = 64 << 10
	half := len(train) / 2
	first := dictHistory(train[:half])
	var contents [][]byte
	for off := half; off < len(train); off += piece {
		contents = append(contents, train[off:min(off+piece, len(train))])
	}
	d, err := zstd.BuildDict(zstd.BuildDictOptions{
		ID:       dictID,
		Contents: contents,
		History:  first,
		Offsets:  [3]int{1, 4, 8},
		Level:    zstd.SpeedBestCompression,
	})
	if err != nil {
		return nil, err
	}
	if !bytes.HasSuffix(d, first) {
		return nil, errors.New("dictionary does not end in its content")
	}
	tables := d[:len(d)-len(first)]
	return append(tables[:len(tables):len(tables)], dictHistory(train)...), nil
}

// deltaPrev replaces every state but an episode's first by its difference
// mod K to the previous state, code by code.
func deltaPrev(in *Input, t int) []uint16 {
	first := in.episodeFirst(t)
	n, k := in.N, in.K
	d := make([]uint16, len(in.Codes))
	for s := range t {
		cur := in.Codes[s*n : (s+1)*n]
		if first[s] {
			copy(d[s*n:], cur)
			continue
		}
		prev := in.Codes[(s-1)*n : s*n]
		for i, v := range cur {
			d[s*n+i] = uint16((int(v) - int(prev[i]) + k) % k)
		}
	}
	return d
}

// runGo measures the baselines built on klauspost/compress.
func runGo(in *Input, t int, test, train []byte, keep func(string, []byte)) ([]Result, error) {
	var out []Result

	z, err := zstdBest(test, windowFor(len(test)))
	if err != nil {
		return nil, err
	}
	keep("zstd", z)
	out = append(out, sized("zstd", int64(len(z)), t, fmt.Sprintf("best, window %d MiB", windowFor(len(test))>>20)))

	s := s2.EncodeBest(nil, test)
	keep("s2", s)
	out = append(out, sized("s2", int64(len(s)), t, "best"))

	delta := pack(deltaPrev(in, t), in.K)
	dz, err := zstdBest(delta, windowFor(len(delta)))
	if err != nil {
		return nil, err
	}
	keep("delta-zstd", dz)
	out = append(out, sized("delta-zstd", int64(len(dz)), t, "difference mod K"))

	if train == nil {
		return append(out,
			unavailable("zstd given train", noTrain),
			unavailable("zstd dict(train)", noTrain),
			unavailable("zstd rawdict(train)", noTrain)), nil
	}

	both := append(append(make([]byte, 0, len(train)+len(test)), train...), test...)
	w := windowFor(len(both))
	zt, err := zstdBest(train, w)
	if err != nil {
		return nil, err
	}
	zb, err := zstdBest(both, w)
	if err != nil {
		return nil, err
	}
	keep("zstd given train", zb)
	out = append(out, difference("zstd given train", int64(len(zb)), int64(len(zt)), t))

	hist := dictHistory(train)
	w = windowFor(len(hist) + len(test))
	dict, err := buildDict(train)
	if err != nil {
		out = append(out, unavailable("zstd dict(train)", "BuildDict: "+err.Error()))
	} else {
		zd, err := zstdBest(test, w, zstd.WithEncoderDict(dict))
		if err != nil {
			return nil, err
		}
		keep("zstd dict(train)", zd)
		keep("zstd dict(train) dictionary", dict)
		out = append(out, sized("zstd dict(train)", int64(len(zd)), t,
			fmt.Sprintf("dictionary %d bytes (history %d), not counted", len(dict), len(hist))))
	}

	zr, err := zstdBest(test, w, zstd.WithEncoderDictRaw(dictID, hist))
	if err != nil {
		return nil, err
	}
	keep("zstd rawdict(train)", zr)
	out = append(out, sized("zstd rawdict(train)", int64(len(zr)), t,
		fmt.Sprintf("raw dictionary %d bytes, not counted", len(hist))))
	return out, nil
}

// difference reports a conditional size: with minus without the test codes.
func difference(name string, with, alone int64, t int) Result {
	return sized(name, with-alone, t, fmt.Sprintf("%d − %d bytes", with, alone))
}
