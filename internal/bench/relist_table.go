package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// relistModesBench is the name of the relist benchmark by list mode and
// fraction changed, as ParseBench records it.
const relistModesBench = "RelistModes"

// PairedFigure is one figure of a paired benchmark: the medians of each
// side over the pairs, and the median and range of the per-pair ratios
// kinformer / client-go.
type PairedFigure struct {
	Kinformer, ClientGo float64
	// Ratio is the median of the per-pair ratios, Min and Max their range;
	// all three are NaN when there is no pair or a pair's ratio is not a
	// finite number (a zero or missing figure).
	Ratio, Min, Max float64
	// Pairs is the number of pairs.
	Pairs int
}

// Reading says what the range of the per-pair ratios shows: "level" when it
// spans 1, else lower or higher (kinformer against client-go); empty when
// there is no range.
func (f PairedFigure) Reading(lower, higher string) string {
	switch {
	case math.IsNaN(f.Min) || math.IsNaN(f.Max):
		return ""
	case f.Min <= 1 && f.Max >= 1:
		return "level"
	case f.Max < 1:
		return lower
	default:
		return higher
	}
}

// pairFigure computes the PairedFigure of the per-run values k and c, the
// i-th of each from the same pair (runs missing on either side are
// ignored).
func pairFigure(k, c []float64) PairedFigure {
	n := min(len(k), len(c))
	ratios := make([]float64, n)
	finite := true
	for i := range n {
		ratios[i] = k[i] / c[i]
		finite = finite && !math.IsNaN(ratios[i]) && !math.IsInf(ratios[i], 0)
	}
	f := PairedFigure{Kinformer: Median(k[:n]), ClientGo: Median(c[:n]), Ratio: math.NaN(), Min: math.NaN(), Max: math.NaN(), Pairs: n}
	if n > 0 && finite {
		f.Ratio, f.Min, f.Max = Median(ratios), slices.Min(ratios), slices.Max(ratios)
	}
	return f
}

// RelistCell is one cell of BenchmarkRelistModes: a list mode and the
// percentage of pods changed before the relist.
type RelistCell struct {
	Mode    string
	Percent int
	// Pairs is the number of pairs measured.
	Pairs int
	// PeakOverSteady is the peak live heap during the relist over the
	// steady-state live heap; PeakMB the peak live heap in MiB; RelistMs
	// the relist's duration.
	PeakOverSteady, PeakMB, RelistMs PairedFigure
}

// HeapTarget returns the bound on the median ratio kinformer /
// client-go of PeakOverSteady for the cell, and false when the cell is
// report-only (unpaged LISTs, whose response is decoded whole before an
// informer sees an item). At 100 % changed the bound is "no worse": a
// median ratio at most 1, or a range of ratios that spans 1.
func (c RelistCell) HeapTarget() (string, bool) {
	switch {
	case c.Mode == "unpaged":
		return "", false
	case c.Percent == 100:
		return "no worse", true
	}
	return "≤ 1.15×", true
}

// HeapTargetMet reports whether the cell meets its HeapTarget (false for a
// report-only cell).
func (c RelistCell) HeapTargetMet() bool {
	target, ok := c.HeapTarget()
	switch {
	case !ok:
		return false
	case target == "no worse":
		return c.PeakOverSteady.Ratio <= 1 || c.PeakOverSteady.Reading("", "") == "level"
	}
	return c.PeakOverSteady.Ratio <= 1.15
}

// RelistCells returns the cells of BenchmarkRelistModes found in res, in
// the order of the benchmark's output.
func RelistCells(res *Results) []RelistCell {
	var cells []RelistCell
	for _, name := range res.Names {
		rest, ok := strings.CutPrefix(name, relistModesBench+"/")
		if !ok {
			continue
		}
		mode, changed, ok := strings.Cut(rest, "/changed=")
		if !ok {
			continue
		}
		percent, err := strconv.Atoi(strings.TrimSuffix(changed, "%"))
		if err != nil {
			continue
		}
		u := res.Values[name]
		fig := func(unit string) PairedFigure {
			return pairFigure(u[SideKinformer+"-"+unit], u[SideClientGo+"-"+unit])
		}
		cells = append(cells, RelistCell{
			Mode: mode, Percent: percent,
			Pairs:          min(len(u[SideKinformer+"-peak/steady"]), len(u[SideClientGo+"-peak/steady"])),
			PeakOverSteady: fig("peak/steady"),
			PeakMB:         fig("peak-MB"),
			RelistMs:       fig("relist-ms"),
		})
	}
	return cells
}

// WriteRelistTables writes the Markdown tables of BenchmarkRelistModes
// found in res: the peak live heap during the relist (over the steady
// state, with the peak in MiB), the target and whether it is met;
// then the relist time. It fails when res holds no cell, or when w does.
func WriteRelistTables(w io.Writer, res *Results) error {
	cells := RelistCells(res)
	if len(cells) == 0 {
		return fmt.Errorf("no %s results in the input", relistModesBench)
	}
	var b strings.Builder
	b.WriteString("Peak live heap during the relist over the steady-state live heap (medians over the pairs; peak in MiB in brackets):\n\n")
	b.WriteString("| list mode | changed | kinformer | client-go | ratio k/c | range k/c | reading | target | met | pairs |\n")
	b.WriteString("|---|---:|---:|---:|---:|---|---|---|---|---:|\n")
	for _, c := range cells {
		p := c.PeakOverSteady
		target, ok := c.HeapTarget()
		met := "report only"
		if ok {
			met = "no"
			if c.HeapTargetMet() {
				met = "yes"
			}
		}
		fmt.Fprintf(&b, "| %s | %d %% | %s (%s) | %s (%s) | %s | %s | %s | %s | %s | %d |\n",
			c.Mode, c.Percent, fmtRelist(p.Kinformer, 3), fmtRelist(c.PeakMB.Kinformer, 0), fmtRelist(p.ClientGo, 3), fmtRelist(c.PeakMB.ClientGo, 0),
			fmtRatio(p.Ratio), fmtRange(p), p.Reading("kinformer lower", "kinformer higher"), target, met, c.Pairs)
	}
	b.WriteString("\nRelist time, from the relist's first LIST or streaming WATCH request to its last notification (ms, medians over the pairs):\n\n")
	b.WriteString("| list mode | changed | kinformer | client-go | ratio k/c | range k/c | reading | pairs |\n")
	b.WriteString("|---|---:|---:|---:|---:|---|---|---:|\n")
	for _, c := range cells {
		t := c.RelistMs
		fmt.Fprintf(&b, "| %s | %d %% | %s | %s | %s | %s | %s | %d |\n",
			c.Mode, c.Percent, fmtRelist(t.Kinformer, 0), fmtRelist(t.ClientGo, 0),
			fmtRatio(t.Ratio), fmtRange(t), t.Reading("kinformer faster", "kinformer slower"), c.Pairs)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtRelist(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func fmtRange(f PairedFigure) string {
	if math.IsNaN(f.Min) {
		return "–"
	}
	d := ratioDecimals(f.Min, f.Max)
	return strconv.FormatFloat(f.Min, 'f', d, 64) + "–" + strconv.FormatFloat(f.Max, 'f', d, 64)
}
