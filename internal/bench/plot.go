package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The geometry of a scaling plot, in SVG user units: the plot area spans
// plotLeft–plotRight and plotTop–plotBottom; the smallest and largest size
// sit plotPad inside it; the legend is right of it.
const (
	plotWidth  = 720
	plotHeight = 420
	plotLeft   = 80
	plotRight  = 560
	plotTop    = 50
	plotBottom = 350
	plotPad    = 20
)

// plotSides are the sides a plot draws, in legend order; they are drawn
// in the reverse order, kinformer on top, and client-go's line and markers
// are wide and translucent, so that a side level with another stays
// visible.
var plotSides = []struct {
	side, label, color, dash string
	width, radius, opacity   float64
}{
	{SideKinformer, "kinformer", "#1f77b4", "", 2, 3.5, 1},
	{SideClientGo, "client-go", "#d62728", "", 5, 6, 0.45},
	{SideFloor, "floor", "#7f7f7f", "4 3", 2, 3.5, 1},
}

// PlotFileName is the file name of s's plot: "<bench>_<figure>.svg", with
// "/" in the figure spelt "-per-" (sync_sync-ms.svg, events_events-per-s.svg).
func PlotFileName(s ScalingSeries) string {
	return strings.ToLower(s.Bench) + "_" + strings.ReplaceAll(s.Figure, "/", "-per-") + ".svg"
}

// PlotTitle is the title of s's plot for the given commit.
func PlotTitle(s ScalingSeries, commit string) string {
	return fmt.Sprintf("%s: %s by %s (commit %s)", s.Title, s.Figure, s.Param, commit)
}

// WritePlot draws s as an SVG: x is the size and y the figure, both on log
// scales for pods (cost grows about in proportion to them), linear from 0
// for handlers; one polyline per side through its medians, a marker at
// each median and a bar over each range (min–max), axes with ticks and
// labels, a legend and PlotTitle as the title. Elements carry what they
// show: markers data-side, data-x and data-y; range bars data-side,
// data-x, data-min and data-max. It fails only when w does.
func WritePlot(w io.Writer, s ScalingSeries, commit string) error {
	var b bytes.Buffer
	xs := make([]float64, len(s.Points))
	ymin, ymax := math.Inf(1), 0.0
	for i, p := range s.Points {
		xs[i] = float64(p.X)
		for _, sp := range []Spread{p.Kinformer, p.ClientGo, p.Floor} {
			if sp.N > 0 {
				ymax = max(ymax, sp.Max, sp.Median)
				ymin = min(ymin, sp.Min, sp.Median)
			}
		}
	}
	yTicks, py := yAxis(ymin, ymax, s.LogY())
	px := xMapper(xs, s.LogX())

	title := PlotTitle(s, commit)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		plotWidth, plotHeight, plotWidth, plotHeight)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotWidth, plotHeight)
	fmt.Fprintf(&b, `<text class="title" x="%d" y="25" font-size="14">%s</text>`+"\n", plotLeft, esc(title))

	// The y axis: its ticks, with grid lines.
	for _, y := range yTicks {
		fmt.Fprintf(&b, `<line class="grid" x1="%d" y1="%s" x2="%d" y2="%s" stroke="#e5e5e5"/>`+"\n", plotLeft, coord(py(y)), plotRight, coord(py(y)))
		fmt.Fprintf(&b, `<line class="tick" x1="%d" y1="%s" x2="%d" y2="%s" stroke="black"/>`+"\n", plotLeft-5, coord(py(y)), plotLeft, coord(py(y)))
		fmt.Fprintf(&b, `<text class="tick-label" x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", plotLeft-8, coord(py(y)), esc(tickLabel(y, 10000)))
	}
	// The x axis: a tick at each size.
	for _, x := range xs {
		fmt.Fprintf(&b, `<line class="tick" x1="%s" y1="%d" x2="%s" y2="%d" stroke="black"/>`+"\n", coord(px(x)), plotBottom, coord(px(x)), plotBottom+5)
		fmt.Fprintf(&b, `<text class="tick-label" x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", coord(px(x)), plotBottom+20, esc(tickLabel(x, 1000)))
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", plotLeft, plotBottom, plotRight, plotBottom)
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", plotLeft, plotTop, plotLeft, plotBottom)
	xLabel := s.Param
	if s.LogX() {
		xLabel += " (log scale)"
	}
	fmt.Fprintf(&b, `<text class="axis-label" x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", (plotLeft+plotRight)/2, plotBottom+40, esc(xLabel))
	yLabel := s.Figure
	if s.LogY() {
		yLabel += ", log scale"
	}
	fmt.Fprintf(&b, `<text class="axis-label" x="20" y="%d" text-anchor="middle" transform="rotate(-90 20 %d)">%s</text>`+"\n",
		(plotTop+plotBottom)/2, (plotTop+plotBottom)/2, esc(yLabel+" (median; bars: min–max over the pairs)"))

	// One series per side that reports the figure, and its legend entry.
	var series, legend []string
	for _, side := range plotSides {
		var pts []string
		var marks strings.Builder
		for _, p := range s.Points {
			sp := p.side(side.side)
			if sp.N == 0 {
				continue
			}
			x := coord(px(float64(p.X)))
			pts = append(pts, x+","+coord(py(sp.Median)))
			fmt.Fprintf(&marks, `<line class="range" data-side="%s" data-x="%d" data-min="%s" data-max="%s" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n",
				side.side, p.X, num(sp.Min), num(sp.Max), x, coord(py(sp.Min)), x, coord(py(sp.Max)), side.color)
			for _, y := range []float64{sp.Min, sp.Max} {
				fmt.Fprintf(&marks, `<line class="range-cap" x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"/>`+"\n",
					coord(px(float64(p.X))-4), coord(py(y)), coord(px(float64(p.X))+4), coord(py(y)), side.color)
			}
			fmt.Fprintf(&marks, `<circle class="point" data-side="%s" data-x="%d" data-y="%s" cx="%s" cy="%s" r="%g" fill="%s" fill-opacity="%g"/>`+"\n",
				side.side, p.X, num(sp.Median), x, coord(py(sp.Median)), side.radius, side.color, side.opacity)
		}
		if len(pts) == 0 {
			continue
		}
		style := fmt.Sprintf(`stroke="%s" stroke-width="%g" stroke-opacity="%g"`, side.color, side.width, side.opacity)
		if side.dash != "" {
			style += fmt.Sprintf(` stroke-dasharray="%s"`, side.dash)
		}
		series = append(series, fmt.Sprintf(`<g class="series" data-side="%s">`+"\n"+`<polyline class="line" data-side="%s" points="%s" fill="none" %s/>`+"\n%s</g>\n",
			side.side, side.side, strings.Join(pts, " "), style, marks.String()))
		y := plotTop + 10 + 20*len(legend)
		legend = append(legend, fmt.Sprintf(`<g class="legend" data-side="%s"><line x1="%d" y1="%d" x2="%d" y2="%d" %s/><circle cx="%d" cy="%d" r="%g" fill="%s" fill-opacity="%g"/><text x="%d" y="%d" dominant-baseline="middle">%s</text></g>`+"\n",
			side.side, plotRight+20, y, plotRight+44, y, style, plotRight+32, y, side.radius, side.color, side.opacity, plotRight+52, y, esc(side.label)))
	}
	for i := len(series) - 1; i >= 0; i-- {
		b.WriteString(series[i])
	}
	for _, l := range legend {
		b.WriteString(l)
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

func (p ScalingPoint) side(side string) Spread {
	switch side {
	case SideKinformer:
		return p.Kinformer
	case SideClientGo:
		return p.ClientGo
	}
	return p.Floor
}

// xMapper maps a size to its x coordinate: the smallest size at
// plotLeft+plotPad, the largest at plotRight-plotPad, linearly in the size
// or in its logarithm; a single size sits in the middle.
func xMapper(xs []float64, logScale bool) func(float64) float64 {
	t := func(x float64) float64 { return x }
	if logScale {
		t = math.Log10
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = min(lo, t(x)), max(hi, t(x))
	}
	return func(x float64) float64 {
		if !(hi > lo) {
			return (plotLeft + plotRight) / 2
		}
		return plotLeft + plotPad + (t(x)-lo)/(hi-lo)*(plotRight-plotLeft-2*plotPad)
	}
}

// yAxis returns the ticks of a y axis holding values from ymin to ymax and
// the mapping of a value to its y coordinate. On a linear scale the axis
// runs from 0 to yScale's top, a tick every step. On a log scale it runs
// from the power of ten at or below ymin to the one at or above ymax, with
// ticks at 1, 2 and 5 times each power of ten; values at or below zero sit
// at the bottom.
func yAxis(ymin, ymax float64, logScale bool) (ticks []float64, py func(float64) float64) {
	if !logScale || !(ymin > 0) || math.IsInf(ymin, 0) {
		step, top := yScale(ymax)
		for i := 0; float64(i)*step <= top*(1+1e-9); i++ {
			ticks = append(ticks, float64(i)*step)
		}
		return ticks, func(y float64) float64 { return plotBottom - y/top*(plotBottom-plotTop) }
	}
	lo := math.Floor(math.Log10(ymin) + 1e-9)
	hi := math.Ceil(math.Log10(ymax) - 1e-9)
	if hi <= lo {
		hi = lo + 1
	}
	for d := lo; d <= hi; d++ {
		for _, m := range []float64{1, 2, 5} {
			if d == hi && m > 1 {
				break
			}
			ticks = append(ticks, m*math.Pow(10, d))
		}
	}
	return ticks, func(y float64) float64 {
		if !(y > 0) {
			return plotBottom
		}
		return plotBottom - (math.Log10(y)-lo)/(hi-lo)*(plotBottom-plotTop)
	}
}

// yScale returns the tick step and the top of a y axis from 0 that holds
// ymax: the step is 1, 2 or 5 times a power of ten, about a fifth of ymax,
// and the top the first multiple of the step at or above ymax.
func yScale(ymax float64) (step, top float64) {
	if !(ymax > 0) || math.IsInf(ymax, 0) {
		return 0.2, 1
	}
	raw := ymax / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw*(1-1e-9) {
			step = m * mag
			break
		}
	}
	return step, math.Ceil(ymax/step-1e-9) * step
}

// tickLabel writes an axis value without float noise, whole thousands
// from kFrom on as "k".
func tickLabel(v, kFrom float64) string {
	if v >= kFrom && math.Mod(v, 1000) == 0 {
		return strconv.FormatFloat(v/1000, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

func coord(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
