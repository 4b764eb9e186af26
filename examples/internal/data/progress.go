package data

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress reports the progress of one epoch (or any counted task). On a
// terminal it draws a progress bar that Finish replaces with a one-line
// summary; elsewhere (a log file, CI) it writes only that line, so logs get
// one line per epoch and no control characters.
type Progress struct {
	w           io.Writer
	bar         *progressbar.ProgressBar // nil when w is not a terminal
	description string
	total, done int
}

// NewProgress starts reporting a task of total steps to w, labelled with
// description (for example "epoch 3/10").
func NewProgress(w io.Writer, total int, description string) *Progress {
	p := &Progress{w: w, description: description, total: total}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(description),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(50*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

// Add records n more steps done.
func (p *Progress) Add(n int) {
	p.done += n
	if p.bar != nil {
		_ = p.bar.Add(n) // a failed redraw must not stop training
	}
}

// Finish ends the task and writes one line: "description: summary", or
// "description: done/total" if summary is empty.
func (p *Progress) Finish(summary string) {
	if p.bar != nil {
		_ = p.bar.Finish() // clears the bar
	}
	if summary == "" {
		summary = fmt.Sprintf("%d/%d", p.done, p.total)
	}
	fmt.Fprintf(p.w, "%s: %s\n", p.description, summary)
}
