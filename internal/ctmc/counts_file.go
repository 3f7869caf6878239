package ctmc

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// LoadCounts reads access counts from the file name ("-": standard
// input): a counts file when countsMode is set, a *.jsonl step log counted
// per "page" or "state" (by), else an access trace counted per (episode,
// step). source says what was counted.
func LoadCounts(name string, countsMode bool, by string) (counts []int64, zeros int, source string, err error) {
	var r io.Reader = os.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, 0, "", err
		}
		defer f.Close()
		r = f
	}
	wrap := func(err error) error { return fmt.Errorf("%s: %w", name, err) }
	switch {
	case countsMode:
		counts, zeros, err = ReadCounts(r)
		return counts, zeros, "counts", wrapNil(wrap, err)
	case strings.HasSuffix(name, ".jsonl"):
		key, err := ParseVisitKey(by)
		if err != nil {
			return nil, 0, "", err
		}
		items, err := ReadStepVisits(r, key)
		if err != nil {
			return nil, 0, "", wrap(err)
		}
		return Counts(items), 0, "visits per " + by, nil
	default:
		acc, err := ReadTrace(r)
		if err != nil {
			return nil, 0, "", wrap(err)
		}
		return Counts(CountAccesses(acc)), 0, "accesses per (episode, step)", nil
	}
}

func wrapNil(wrap func(error) error, err error) error {
	if err == nil {
		return nil
	}
	return wrap(err)
}
