package data

import (
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress reports an epoch (or any task counted in rows): the rows done,
// the mean loss so far and the throughput. On a terminal it draws a
// progress bar (github.com/schollz/progressbar) that Finish replaces with
// a one-line summary; elsewhere (a log file, CI) it writes only that line,
// so logs get one line per epoch and no control characters.
type Progress struct {
	w            io.Writer
	bar          *progressbar.ProgressBar // nil when w is not a terminal
	description  string
	total, done  int
	lossSum      float64 // Σ rows·loss over the batches added
	start, shown time.Time
	now          func() time.Time
}

// describeEvery is how often the bar's loss is redrawn.
const describeEvery = 200 * time.Millisecond

// NewProgress starts reporting a task of total rows to w, labelled with
// description (for example "epoch 3/10"); a nil w reports nothing.
func NewProgress(w io.Writer, total int, description string) *Progress {
	if w == nil {
		w = io.Discard
	}
	f, ok := w.(*os.File)
	return newProgress(w, total, description, ok && term.IsTerminal(int(f.Fd())), time.Now, 50*time.Millisecond)
}

// newProgress is NewProgress with the choice of a bar, the clock and the
// bar's least time between redraws given.
func newProgress(w io.Writer, total int, description string, bar bool, now func() time.Time, throttle time.Duration) *Progress {
	p := &Progress{w: w, description: description, total: total, now: now, start: now()}
	if bar {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(description),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("rows"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionThrottle(throttle),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

// Add records a batch of rows done, with its mean loss (NaN if there is
// none to show).
func (p *Progress) Add(rows int, loss float64) {
	p.done += rows
	p.lossSum += float64(rows) * loss
	if p.bar == nil {
		return
	}
	if now := p.now(); !math.IsNaN(loss) && now.Sub(p.shown) >= describeEvery {
		p.shown = now
		p.bar.Describe(fmt.Sprintf("%s loss %.4f", p.description, p.Loss()))
	}
	_ = p.bar.Add(rows) // a failed redraw must not stop training
}

// Loss is the mean loss per row of the batches added (NaN before any).
func (p *Progress) Loss() float64 {
	if p.done == 0 {
		return math.NaN()
	}
	return p.lossSum / float64(p.done)
}

// Throughput is the number of rows done per second since NewProgress.
func (p *Progress) Throughput() float64 {
	s := p.now().Sub(p.start).Seconds()
	if s <= 0 {
		return 0
	}
	return float64(p.done) / s
}

// Finish ends the task and writes one line: "description: summary", or,
// if summary is empty, the rows done, the mean loss and the throughput.
func (p *Progress) Finish(summary string) {
	if p.bar != nil {
		_ = p.bar.Finish() // clears the bar
	}
	if summary == "" {
		summary = fmt.Sprintf("%d/%d rows, loss %.4f, %.0f rows/s", p.done, p.total, p.Loss(), p.Throughput())
	}
	fmt.Fprintf(p.w, "%s: %s\n", p.description, summary)
}
