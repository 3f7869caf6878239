// Package progress reports the command line's long steps on stderr: a
// bar on a terminal, a line now and then otherwise (a log, a pipe, a
// process run by another program), nothing when asked to be quiet.
package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Rates of the lines written where stderr is not a terminal: the first
// after FirstLine (a short step says nothing), then at most one every
// Every, and the last when the step ends if any was written.
const (
	FirstLine = 2 * time.Second
	Every     = 10 * time.Second
)

// Bar returns a progress reporter for a long step called desc: a bar on
// stderr, drawn once the first report gives the total, when stderr is a
// terminal; else Lines on stderr; a no-op when quiet is set.
func Bar(quiet bool, desc string) func(done, total int) {
	if quiet {
		return func(int, int) {}
	}
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return Lines(os.Stderr, desc, time.Now)
	}
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total,
				progressbar.OptionSetWriter(os.Stderr),
				progressbar.OptionSetDescription(desc),
				progressbar.OptionShowCount(),
				progressbar.OptionClearOnFinish(),
				progressbar.OptionThrottle(100_000_000))
		}
		bar.Set(done)
		if done >= total {
			bar.Finish()
		}
	}
}

// Lines returns a progress reporter that writes lines such as
// "wmzip: encoding 120/500 (24%), 12s" to w, at the rates FirstLine and
// Every by the clock now.
func Lines(w io.Writer, desc string, now func() time.Time) func(done, total int) {
	start := now()
	var last time.Time // of the last line; zero before the first
	return func(done, total int) {
		t := now()
		end := done >= total
		switch {
		case last.IsZero() && t.Sub(start) < FirstLine:
			return
		case !last.IsZero() && !end && t.Sub(last) < Every:
			return
		}
		last = t
		pct := 100.0
		if total > 0 {
			pct = 100 * float64(done) / float64(total)
		}
		fmt.Fprintf(w, "wmzip: %s %d/%d (%.0f%%), %s\n", desc, done, total, pct, t.Sub(start).Round(time.Second))
	}
}

// Terminal returns a progress callback for opq.Config.Progress and
// opq.Quantizer.SetProgress that draws one progress bar per stage on f. It
// returns nil, which means no reporting, when quiet is set or f is not a
// terminal, so piped or logged runs stay clean.
func Terminal(f *os.File, quiet bool) func(stage string, done, total int) {
	if quiet || f == nil || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	var bar *progressbar.ProgressBar
	var cur string
	return func(stage string, done, total int) {
		if bar == nil || stage != cur {
			if bar != nil {
				_ = bar.Finish()
			}
			cur = stage
			bar = progressbar.NewOptions(total,
				progressbar.OptionSetWriter(f),
				progressbar.OptionSetDescription(stage),
				progressbar.OptionShowCount(),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionClearOnFinish(),
				progressbar.OptionThrottle(100_000_000),
			)
		}
		_ = bar.Set(done)
		if done >= total {
			_ = bar.Finish()
			bar = nil
		}
	}
}
