// Package progress draws the command line's progress bars.
package progress

import (
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar returns a progress reporter for a long step called desc: a bar on
// stderr, drawn once the first report gives the total, or a no-op when
// quiet is set or stderr is not a terminal (logs and pipes stay clean).
func Bar(quiet bool, desc string) func(done, total int) {
	if quiet || !term.IsTerminal(int(os.Stderr.Fd())) {
		return func(int, int) {}
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
