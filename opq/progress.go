package opq

import (
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// TerminalProgress returns a progress callback for Config.Progress and
// Quantizer.SetProgress that draws one progress bar per stage on f. It
// returns nil, which means no reporting, when quiet is set or f is not a
// terminal, so piped or logged runs stay clean.
func TerminalProgress(f *os.File, quiet bool) func(stage string, done, total int) {
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
