package ctmc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ParseError reports a malformed line of a trace, counts or steps file.
type ParseError struct {
	Line int // 1-based
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// maxLine bounds one input line (a steps.jsonl record is a few hundred bytes).
const maxLine = 1 << 20

// TraceHeader is the required first line of an access trace.
const TraceHeader = "episode\tstep"

// Access is one memory access: the state stored at (Episode, Step).
type Access struct {
	Episode, Step int64
}

// Item is an accessed item and its access count.
type Item struct {
	Key   string `json:"key"`
	Count int64  `json:"count"`
}

// Counts returns the counts of items, in order.
func Counts(items []Item) []int64 {
	c := make([]int64, len(items))
	for i, it := range items {
		c[i] = it.Count
	}
	return c
}

// lines calls fn for each line that is neither blank nor a '#' comment,
// with its 1-based number and without its line ending.
func lines(r io.Reader, fn func(n int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if t := strings.TrimSpace(line); t == "" || t[0] == '#' {
			continue
		}
		if err := fn(n, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &ParseError{Line: n + 1, Msg: fmt.Sprintf("line longer than %d bytes", maxLine)}
		}
		return err
	}
	return nil
}

func parseNonNeg(n int, field, s string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 0 {
		return 0, &ParseError{Line: n, Msg: fmt.Sprintf("%s %q is not a non-negative integer", field, s)}
	}
	return v, nil
}

// ReadTrace reads an access trace in the TSV format of the package
// documentation.
func ReadTrace(r io.Reader) ([]Access, error) {
	var acc []Access
	header := false
	err := lines(r, func(n int, line string) error {
		if !header {
			if line != TraceHeader {
				return &ParseError{Line: n, Msg: fmt.Sprintf("header is %q, want %q", line, TraceHeader)}
			}
			header = true
			return nil
		}
		f := strings.Split(line, "\t")
		if len(f) != 2 {
			return &ParseError{Line: n, Msg: fmt.Sprintf("%d tab-separated fields, want 2", len(f))}
		}
		e, err := parseNonNeg(n, "episode", f[0])
		if err != nil {
			return err
		}
		s, err := parseNonNeg(n, "step", f[1])
		if err != nil {
			return err
		}
		acc = append(acc, Access{e, s})
		return nil
	})
	if err == nil && !header {
		err = &ParseError{Line: 1, Msg: fmt.Sprintf("missing header %q", TraceHeader)}
	}
	return acc, err
}

// CountAccesses returns one Item per distinct (episode, step), keyed
// "episode/step", ordered by descending count, then by episode and step.
func CountAccesses(acc []Access) []Item {
	m := map[Access]int64{}
	for _, a := range acc {
		m[a]++
	}
	keys := make([]Access, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Access) int {
		if c := m[b] - m[a]; c != 0 {
			return sign(c)
		}
		if a.Episode != b.Episode {
			return sign(a.Episode - b.Episode)
		}
		return sign(a.Step - b.Step)
	})
	items := make([]Item, len(keys))
	for i, k := range keys {
		items[i] = Item{Key: fmt.Sprintf("%d/%d", k.Episode, k.Step), Count: m[k]}
	}
	return items
}

func sign(x int64) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// ReadCounts reads a counts file: one non-negative integer per line. Blank
// lines and lines starting with '#' are ignored. Zero counts are dropped and
// their number returned.
func ReadCounts(r io.Reader) (counts []int64, zeros int, err error) {
	err = lines(r, func(n int, line string) error {
		v, err := parseNonNeg(n, "count", line)
		if err != nil {
			return err
		}
		if v == 0 {
			zeros++
		} else {
			counts = append(counts, v)
		}
		return nil
	})
	return counts, zeros, err
}

// VisitKey selects what a step of a browsing log visits.
type VisitKey int

const (
	// ByPage counts visits per page.
	ByPage VisitKey = iota
	// ByState counts visits per (page, scroll_y) state, keyed "page#scroll_y".
	ByState
)

// ParseVisitKey maps "page" and "state" to a VisitKey.
func ParseVisitKey(s string) (VisitKey, error) {
	switch s {
	case "page":
		return ByPage, nil
	case "state":
		return ByState, nil
	}
	return 0, fmt.Errorf("ctmc: visit key %q, want page or state", s)
}

// stepRecord holds the fields of a steps.jsonl line that the audit uses.
type stepRecord struct {
	Episode *int64   `json:"episode"`
	Step    *int64   `json:"step"`
	Page    *string  `json:"page"`
	ScrollY *float64 `json:"scroll_y"`
}

// ReadStepVisits reads a web-browsing step log (one JSON object per line
// with at least episode, step, page and scroll_y, as in the web-pgdocs
// *_steps.jsonl files) and returns visit counts per page or per (page,
// scroll_y) state, ordered by descending count, then by key.
func ReadStepVisits(r io.Reader, by VisitKey) ([]Item, error) {
	m := map[string]int64{}
	err := lines(r, func(n int, line string) error {
		var s stepRecord
		d := json.NewDecoder(bytes.NewReader([]byte(line)))
		if err := d.Decode(&s); err != nil {
			return &ParseError{Line: n, Msg: "bad JSON: " + err.Error()}
		}
		switch {
		case s.Episode == nil, s.Step == nil:
			return &ParseError{Line: n, Msg: "missing episode or step"}
		case s.Page == nil || *s.Page == "":
			return &ParseError{Line: n, Msg: "missing page"}
		case by == ByState && s.ScrollY == nil:
			return &ParseError{Line: n, Msg: "missing scroll_y"}
		}
		k := *s.Page
		if by == ByState {
			k += "#" + strconv.FormatFloat(*s.ScrollY, 'f', -1, 64)
		}
		m[k]++
		return nil
	})
	if err != nil {
		return nil, err
	}
	items := make([]Item, 0, len(m))
	for k, c := range m {
		items = append(items, Item{k, c})
	}
	slices.SortFunc(items, func(a, b Item) int {
		if a.Count != b.Count {
			return sign(b.Count - a.Count)
		}
		return strings.Compare(a.Key, b.Key)
	})
	return items, nil
}
