package progress

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestLines (issue 24, point 5): away from a terminal, a step reports
// nothing before FirstLine, then a line at most every Every, and its
// end; a short step reports nothing.
func TestLines(t *testing.T) {
	var b strings.Builder
	clock := time.Unix(0, 0)
	now := func() time.Time { return clock }
	p := Lines(&b, "encoding", now)
	for i, at := range []time.Duration{0, time.Second, 3 * time.Second, 5 * time.Second, 12 * time.Second, 14 * time.Second, 15 * time.Second} {
		clock = time.Unix(0, 0).Add(at)
		p(i+1, 7)
	}
	want := "wmzip: encoding 3/7 (43%), 3s\nwmzip: encoding 6/7 (86%), 14s\nwmzip: encoding 7/7 (100%), 15s\n"
	if b.String() != want {
		t.Fatalf("lines:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	clock = time.Unix(0, 0)
	p = Lines(&b, "decoding", now)
	p(1, 2)
	clock = clock.Add(time.Second)
	p(2, 2)
	if b.Len() != 0 {
		t.Fatalf("a short step wrote %q", b.String())
	}
}

// TestTerminalQuiet: no bar when asked to be quiet or away from a
// terminal.
func TestTerminalQuiet(t *testing.T) {
	if Terminal(nil, false) != nil || Terminal(os.Stderr, true) != nil {
		t.Error("Terminal reports when it should be quiet")
	}
}
