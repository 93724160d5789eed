package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Spread is the median and range (min–max) of one side's values of a
// figure.
type Spread struct {
	Median, Min, Max float64
	// N is the number of values (0: the side does not report the figure).
	N int
}

func spreadOf(vs []float64) Spread {
	if len(vs) == 0 {
		return Spread{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	return Spread{Median: Median(vs), Min: slices.Min(vs), Max: slices.Max(vs), N: len(vs)}
}

// ScalingPoint is one size of a scaling series: every side's spread and the
// paired ratio kinformer / client-go.
type ScalingPoint struct {
	// X is the size: pods or handlers.
	X                          int
	Kinformer, ClientGo, Floor Spread
	Paired                     PairedFigure
}

// ScalingSeries is how one figure of one benchmark grows with its size
// parameter: the points of the benchmarks named "<Bench>/<Param>=<X>", in
// increasing X.
type ScalingSeries struct {
	Bench, Param, Figure string
	// Title describes the benchmark in a table's caption and a plot's title.
	Title  string
	Points []ScalingPoint
}

// LogX tells whether the series' sizes are drawn on a log scale (pods).
func (s ScalingSeries) LogX() bool { return s.Param == "pods" }

// LogY tells whether the series' figures are drawn on a log scale: those
// by pods, which grow about in proportion to the size, so that the small
// sizes stay readable next to the large ones.
func (s ScalingSeries) LogY() bool { return s.LogX() }

// scalingSets lists the benchmarks and figures whose growth is tabled and
// plotted.
var scalingSets = []struct {
	bench, param, title string
	figures             []string
}{
	{"Sync", "pods", "Initial sync", []string{"sync-ms", "cpu-us/pod", "peaklive-MB", "retained-MB"}},
	{"Events", "handlers", "Watch events", []string{"events/s"}},
}

// Scaling returns the scaling series found in res: Sync by pods (sync-ms,
// cpu-us/pod, peaklive-MB, retained-MB) and Events by handlers (events/s), each with
// the sizes res holds; a figure no size reports is left out.
func (res *Results) Scaling() []ScalingSeries {
	var out []ScalingSeries
	for _, set := range scalingSets {
		type sized struct {
			x    int
			name string
		}
		var sizes []sized
		for _, name := range res.Names {
			v, ok := strings.CutPrefix(name, set.bench+"/"+set.param+"=")
			if !ok {
				continue
			}
			if x, err := strconv.Atoi(v); err == nil {
				sizes = append(sizes, sized{x, name})
			}
		}
		slices.SortFunc(sizes, func(a, b sized) int { return a.x - b.x })
		for _, f := range set.figures {
			s := ScalingSeries{Bench: set.bench, Param: set.param, Figure: f, Title: set.title}
			for _, sz := range sizes {
				u := res.Values[sz.name]
				k, c := u[SideKinformer+"-"+f], u[SideClientGo+"-"+f]
				if len(k) == 0 && len(c) == 0 {
					continue
				}
				s.Points = append(s.Points, ScalingPoint{
					X: sz.x, Kinformer: spreadOf(k), ClientGo: spreadOf(c), Floor: spreadOf(u[SideFloor+"-"+f]),
					Paired: pairFigure(k, c),
				})
			}
			if len(s.Points) > 0 {
				out = append(out, s)
			}
		}
	}
	return out
}

// WriteScalingTables writes one Markdown table per benchmark of series (in
// their order): per figure and size, each side's median with its range in
// brackets, the median ratio kinformer / client-go and the pairs. It fails
// only when w does.
func WriteScalingTables(w io.Writer, series []ScalingSeries) error {
	var b strings.Builder
	for i, s := range series {
		if i == 0 || series[i-1].Bench != s.Bench {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "%s (`%s/%s=N`) by number of %s: medians over the pairs, min–max in brackets.\n\n", s.Title, s.Bench, s.Param, s.Param)
			fmt.Fprintf(&b, "| figure | %s | kinformer | client-go | floor | ratio k/c | pairs |\n", s.Param)
			b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
		}
		for _, p := range s.Points {
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %d |\n",
				s.Figure, p.X, fmtSpread(p.Kinformer), fmtSpread(p.ClientGo), fmtSpread(p.Floor), fmtRatio(p.Paired.Ratio), p.Paired.Pairs)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtSpread(s Spread) string {
	if s.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%s (%s–%s)", fmtFigure(s.Median), fmtFigure(s.Min), fmtFigure(s.Max))
}
