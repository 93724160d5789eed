package bench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Side prefixes of the figures the benchmarks report: "k-sync-ms" is
// kinformer's time to sync, "c-sync-ms" client-go's, "f-sync-ms" the floor's.
const (
	SideKinformer = "k"
	SideClientGo  = "c"
	SideFloor     = "f"
)

// Results holds the figures of `go test -bench` output: for every benchmark
// (name without the GOMAXPROCS suffix) and unit, the values of all runs, in
// order.
type Results struct {
	// Names lists the benchmarks in order of first appearance.
	Names []string
	// Values maps benchmark name, then unit, to the values of each run.
	Values map[string]map[string][]float64
}

// ParseBench reads `go test -bench` output and collects the figures of every
// benchmark result line; other lines are ignored. It fails only when r does.
func ParseBench(r io.Reader) (*Results, error) {
	res := &Results{Values: map[string]map[string][]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(fields[1]); err != nil {
			continue
		}
		name := strings.TrimPrefix(fields[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		units, ok := res.Values[name]
		if !ok {
			units = map[string][]float64{}
			res.Values[name] = units
			res.Names = append(res.Names, name)
		}
		for i := 2; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				continue
			}
			units[fields[i+1]] = append(units[fields[i+1]], v)
		}
	}
	return res, sc.Err()
}

// Target is a goal for a figure of the benchmarks whose name starts with
// Bench.
type Target struct {
	Bench, Figure string
	// OfRatio applies the bound to kinformer / client-go; otherwise to
	// kinformer's own figure.
	OfRatio bool
	// AtLeast makes Value a lower bound; otherwise it is an upper bound.
	AtLeast bool
	Value   float64
}

// String renders the target as in the table, e.g. "≤ 0.7×".
func (t Target) String() string {
	op := "≤"
	if t.AtLeast {
		op = "≥"
	}
	if t.OfRatio {
		return fmt.Sprintf("%s %g×", op, t.Value)
	}
	return fmt.Sprintf("k %s %g", op, t.Value)
}

// met reports whether kinformer's figure k (and ratio k/c) meets t.
func (t Target) met(k, ratio float64) bool {
	v := k
	if t.OfRatio {
		v = ratio
	}
	if math.IsNaN(v) {
		return false
	}
	if t.AtLeast {
		return v >= t.Value
	}
	return v <= t.Value
}

// Targets returns the goals (mostly ratios kinformer / client-go,
// same run).
func Targets() []Target {
	return []Target{
		{Bench: "Events/handlers=10", Figure: "events/s", OfRatio: true, AtLeast: true, Value: 2},
		{Bench: "Events/handlers=1", Figure: "events/s", OfRatio: true, AtLeast: true, Value: 1.5},
		{Bench: "Events/", Figure: "allocs/event", OfRatio: true, Value: 0.5},
		{Bench: "Sync/", Figure: "sync-ms", OfRatio: true, Value: 0.7},
		{Bench: "Sync/", Figure: "peak-MB", OfRatio: true, Value: 0.8},
		{Bench: "Sync/", Figure: "allocs/pod", OfRatio: true, Value: 1},
		{Bench: "Relist/", Figure: "peaklive/steady", Value: 1.1},
		{Bench: "Relist/", Figure: "peak/steady", Value: 1.1},
		{Bench: "Relist/", Figure: "retained/steady", Value: 1.1},
		{Bench: "HTTP/json", Figure: "sync-ms", OfRatio: true, Value: 0.33},
		{Bench: "Lean/", Figure: "B/pod", OfRatio: true, Value: 0.5},
		{Bench: "Lean/", Figure: "meta-B/pod", OfRatio: true, Value: 0.5},
	}
}

// targetFor returns the target of a benchmark's figure, if any.
func targetFor(bench, figure string) (Target, bool) {
	for _, t := range Targets() {
		if t.Figure == figure && (bench == t.Bench || strings.HasPrefix(bench, t.Bench) && (strings.HasSuffix(t.Bench, "/") || strings.HasPrefix(bench[len(t.Bench):], "/"))) {
			return t, true
		}
	}
	return Target{}, false
}

// Median returns the median of vs (NaN when empty).
func Median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Row is one line of the comparison table: the medians of one figure of one
// benchmark on each side.
type Row struct {
	Bench, Figure       string
	Kinformer, ClientGo float64
	Floor               float64
	Runs                int
	// Target is the figure's goal (nil when it has none) and Met whether
	// the medians meet it.
	Target *Target
	Met    bool
}

// Ratio is Kinformer / ClientGo.
func (r Row) Ratio() float64 { return r.Kinformer / r.ClientGo }

// OverFloor is Kinformer / Floor.
func (r Row) OverFloor() float64 { return r.Kinformer / r.Floor }

// Rows turns results into table rows, one per benchmark and figure reported
// by kinformer's side, in benchmark order and then by figure name.
func (res *Results) Rows() []Row {
	var rows []Row
	for _, name := range res.Names {
		units := res.Values[name]
		var figures []string
		for unit := range units {
			if f, ok := strings.CutPrefix(unit, SideKinformer+"-"); ok {
				figures = append(figures, f)
			}
		}
		slices.Sort(figures)
		for _, f := range figures {
			k := units[SideKinformer+"-"+f]
			r := Row{
				Bench:     name,
				Figure:    f,
				Kinformer: Median(k),
				ClientGo:  Median(units[SideClientGo+"-"+f]),
				Floor:     Median(units[SideFloor+"-"+f]),
				Runs:      len(k),
			}
			if t, ok := targetFor(name, f); ok {
				r.Target = &t
				r.Met = t.met(r.Kinformer, r.Ratio())
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// WriteTable writes rows as one Markdown table: scenario, figure, kinformer,
// client-go, ratio, target, whether it is met, floor and kinformer as a
// multiple of the floor.
func WriteTable(w io.Writer, rows []Row) error {
	var b strings.Builder
	b.WriteString("| scenario | figure | kinformer | client-go | ratio k/c | target | met | floor | k/floor | runs |\n")
	b.WriteString("|---|---|---:|---:|---:|---|---|---:|---:|---:|\n")
	for _, r := range rows {
		target, met := "", ""
		if r.Target != nil {
			target = r.Target.String()
			met = "no"
			if r.Met {
				met = "yes"
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n",
			r.Bench, r.Figure, fmtFigure(r.Kinformer), fmtFigure(r.ClientGo), fmtRatio(r.Ratio()),
			target, met, fmtFigure(r.Floor), fmtRatio(r.OverFloor()), r.Runs)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtFigure(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case math.Abs(v) >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func fmtRatio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "×"
}
