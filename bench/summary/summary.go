// Command summary reads the figures bench/run collects and prints them as
// a Markdown table with nabla's speed relative to each peer:
//
//	go run ./bench/summary nabla=go.txt torch=torch.txt openblas=blas.txt peak=peak.txt
//
// Each argument names a source and a file. A file holds Go benchmark
// output (lines starting "Benchmark"; a name's slashes become spaces, and
// a name ending in /gorgonia is Gorgonia's figure, not the source's) or
// figure lines, "<words...> <unit> <value>", as bench/torch, bench/blas and
// bench/peak print them; lines starting "skipped:" are repeated as notes,
// and others are ignored. A figure's value is the median of its samples.
//
// Rows are the figures of every source but "peak"; a peer's figure counts
// for nabla's row of the same name or, when the peer's name has no
// threads=N word, for nabla's rows that differ from it only by that word.
// Each peer's cell carries ×r, nabla's speed over the peer's (above 1:
// nabla is faster). GFLOP/s cells carry their share of the peak with the
// same dtype and threads: the widest vectors' where the probe measured
// them ("peak f64/avx512 threads=1"), else "peak f64 threads=1".
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// figureUnits are the units summarised: times (cpu-ms/step: CPU time,
// which a shared machine's other work inflates less than wall time) and a
// share of a time (less is better), and GFLOP/s, a rate.
var figureUnits = []string{"ms/step", "cpu-ms/step", "ns/graphop", "us/op", "optimizer%", "GFLOP/s"}

func isTime(unit string) bool { return unit != "GFLOP/s" }

// key names a figure: its words and its unit.
type key struct{ name, unit string }

// figures holds the samples of each source's figures, in the order first
// seen.
type figures struct {
	sources []string
	samples map[string]map[key][]float64
	order   []key
	notes   []string
}

func newFigures() *figures {
	return &figures{samples: map[string]map[key][]float64{}}
}

func (f *figures) add(source string, k key, v float64) {
	if f.samples[source] == nil {
		f.samples[source] = map[key][]float64{}
		f.sources = append(f.sources, source)
	}
	if !f.has(k) {
		f.order = append(f.order, k)
	}
	f.samples[source][k] = append(f.samples[source][k], v)
}

func (f *figures) has(k key) bool {
	for _, s := range f.samples {
		if _, ok := s[k]; ok {
			return true
		}
	}
	return false
}

// read adds the figures of one file, attributed to source.
func (f *figures) read(source string, r io.Reader) error {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "skipped:"):
			f.notes = append(f.notes, source+": "+line)
		case strings.HasPrefix(line, "Benchmark"):
			f.readBenchmark(source, line)
		default:
			fields := strings.Fields(line)
			if len(fields) < 3 || !slices.Contains(figureUnits, fields[len(fields)-2]) {
				continue
			}
			v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
			if err != nil {
				continue
			}
			f.add(source, key{strings.Join(fields[:len(fields)-2], " "), fields[len(fields)-2]}, v)
		}
	}
	return sc.Err()
}

// readBenchmark adds the figures of one line of go test -bench output:
// "BenchmarkW1/f32/sgd/threads=1-2  20  20436398 ns/op  20.44 ms/step ...".
func (f *figures) readBenchmark(source, line string) {
	fields := strings.Fields(line)
	if len(fields) < 4 {
		return
	}
	name := strings.TrimPrefix(fields[0], "Benchmark")
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			name = name[:i] // the GOMAXPROCS suffix
		}
	}
	if rest, ok := strings.CutSuffix(name, "/gorgonia"); ok {
		source, name = "gorgonia", rest
	}
	name = strings.ReplaceAll(name, "/", " ")
	for i := 2; i+1 < len(fields); i += 2 {
		unit := fields[i+1]
		if !slices.Contains(figureUnits, unit) {
			continue
		}
		if v, err := strconv.ParseFloat(fields[i], 64); err == nil {
			f.add(source, key{name, unit}, v)
		}
	}
}

// median of a non-empty sample.
func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// withoutThreads is name without its threads=N word, and whether it had one.
func withoutThreads(name string) (string, bool) {
	words := strings.Fields(name)
	i := slices.IndexFunc(words, func(w string) bool { return strings.HasPrefix(w, "threads=") })
	if i < 0 {
		return name, false
	}
	return strings.Join(slices.Delete(words, i, i+1), " "), true
}

// threadsOf is name's threads=N word, or "".
func threadsOf(name string) string {
	for _, w := range strings.Fields(name) {
		if strings.HasPrefix(w, "threads=") {
			return w
		}
	}
	return ""
}

// lookup returns source's median for row k: its figure of the same name,
// or the one without threads=N.
func (f *figures) lookup(source string, k key) (float64, key, bool) {
	if v, ok := f.samples[source][k]; ok {
		return median(v), k, true
	}
	if bare, had := withoutThreads(k.name); had {
		b := key{bare, k.unit}
		if v, ok := f.samples[source][b]; ok {
			return median(v), b, true
		}
	}
	return 0, key{}, false
}

// peak returns the peak figure for a GEMM row's dtype and threads: the
// 512-bit probe's where there is one (the kernels then run on 512-bit
// vectors), else the 256-bit one's.
func (f *figures) peak(k key) (float64, bool) {
	words := strings.Fields(k.name)
	if len(words) < 2 {
		return 0, false
	}
	for _, width := range []string{"/avx512", ""} {
		v, ok := f.samples["peak"][key{"peak " + words[1] + width + " " + threadsOf(k.name), "GFLOP/s"}]
		if ok {
			return slices.Max(v), true
		}
	}
	return 0, false
}

// write prints the table: nabla's figures first, each with the peers'
// matching figures, then the peers' figures that matched no row of nabla.
func (f *figures) write(w io.Writer, self string) {
	var peers []string
	for _, s := range f.sources {
		if s != self && s != "peak" {
			peers = append(peers, s)
		}
	}
	fmt.Fprintf(w, "| figure | unit | %s |", self)
	for _, p := range peers {
		fmt.Fprintf(w, " %s |", p)
	}
	fmt.Fprintf(w, "\n|---|---|---|%s\n", strings.Repeat("---|", len(peers)))
	used := map[string]map[key]bool{}
	row := func(k key) {
		mine, _, hasMine := f.lookup(self, k)
		fmt.Fprintf(w, "| %s | %s | %s |", k.name, k.unit, f.cell(k, mine, hasMine))
		for _, p := range peers {
			v, pk, ok := f.lookup(p, k)
			if !ok {
				fmt.Fprint(w, "  |")
				continue
			}
			if used[p] == nil {
				used[p] = map[key]bool{}
			}
			used[p][pk] = true
			c := f.cell(k, v, true)
			if hasMine {
				r := mine / v
				if isTime(k.unit) {
					r = v / mine
				}
				c += fmt.Sprintf(" ×%.2f", r)
			}
			fmt.Fprintf(w, " %s |", c)
		}
		fmt.Fprintln(w)
	}
	for _, k := range f.order {
		if _, ok := f.samples[self][k]; ok {
			row(k)
		}
	}
	for _, k := range f.order {
		if _, ok := f.samples[self][k]; ok || f.onlyIn(k, "peak") {
			continue
		}
		matched := true
		for _, p := range peers {
			if _, ok := f.samples[p][k]; ok && !used[p][k] {
				matched = false
			}
		}
		if !matched {
			row(k)
		}
	}
}

// onlyIn reports whether k is a figure of source alone.
func (f *figures) onlyIn(k key, source string) bool {
	for s, m := range f.samples {
		if _, ok := m[k]; ok && s != source {
			return false
		}
	}
	return true
}

// cell formats a median, with its share of the peak for a rate.
func (f *figures) cell(k key, v float64, ok bool) string {
	if !ok {
		return ""
	}
	s := strconv.FormatFloat(v, 'g', 4, 64)
	if !isTime(k.unit) {
		if p, ok := f.peak(k); ok && p > 0 {
			s += fmt.Sprintf(" (%.0f%% of peak)", 100*v/p)
		}
	}
	return s
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: summary source=file ... (the first source is nabla's)")
		os.Exit(2)
	}
	f := newFigures()
	self := ""
	for _, arg := range os.Args[1:] {
		source, path, ok := strings.Cut(arg, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "summary: %q is not source=file\n", arg)
			os.Exit(2)
		}
		if self == "" {
			self = source
		}
		file, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "summary:", err)
			os.Exit(1)
		}
		err = f.read(source, file)
		file.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "summary:", err)
			os.Exit(1)
		}
	}
	if p, ok := f.samples["peak"]; ok {
		for _, k := range f.order {
			if v, ok := p[k]; ok {
				fmt.Printf("%s: %.4g %s (the best of %d)\n", k.name, slices.Max(v), k.unit, len(v))
			}
		}
		fmt.Println()
	}
	f.write(os.Stdout, self)
	for _, n := range f.notes {
		fmt.Println("\n" + n)
	}
}
