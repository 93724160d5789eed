package bench

import (
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// svgElement is an element of a parsed SVG: its name, attributes and text.
type svgElement struct {
	name  string
	attrs map[string]string
	text  string
}

// parseSVG returns the elements of an SVG document in document order.
func parseSVG(t *testing.T, doc string) []*svgElement {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	var all, open []*svgElement
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &svgElement{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			all, open = append(all, e), append(open, e)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			if len(open) > 0 {
				open[len(open)-1].text += string(tok)
			}
		}
	}
	return all
}

func byClass(es []*svgElement, name, class string) []*svgElement {
	var out []*svgElement
	for _, e := range es {
		if e.name == name && e.attrs["class"] == class {
			out = append(out, e)
		}
	}
	return out
}

func attrFloat(t *testing.T, e *svgElement, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(e.attrs[name], 64)
	require.NoError(t, err, "%s=%q", name, e.attrs[name])
	return v
}

func TestPlotDrawsEachSideAtItsValues(t *testing.T) {
	res, err := ParseBench(strings.NewReader(scalingSampleOutput))
	require.NoError(t, err)
	sync := res.Scaling()[0]
	assert.Equal(t, "sync_sync-ms.svg", PlotFileName(sync))
	var out strings.Builder
	require.NoError(t, WritePlot(&out, sync, "abc1234"))
	es := parseSVG(t, out.String())

	// The plot area runs x 80–560 and y 50–350; the sizes 1k, 10k and 100k
	// sit at 100, 320 and 540 (log scale); the values run from 2 to 900,
	// so the y axis is logarithmic from 1 to 1000, 100 units per decade.
	px := map[string]float64{"1000": 100, "10000": 320, "100000": 540}
	py := func(v float64) float64 { return 350 - math.Log10(v)*100 }
	// Coordinates are written with one decimal.
	near := func(want, got float64, msg string) { assert.InDelta(t, want, got, 0.051, msg) }

	want := map[string]map[string]float64{
		"k": {"1000": 6, "10000": 42, "100000": 450},
		"c": {"1000": 9, "10000": 70, "100000": 800},
		"f": {"1000": 2.5, "10000": 21, "100000": 230},
	}
	points := byClass(es, "circle", "point")
	require.Len(t, points, 9)
	got := map[string]map[string]float64{"k": {}, "c": {}, "f": {}}
	lines := map[string][]string{}
	for _, p := range points {
		side, x := p.attrs["data-side"], p.attrs["data-x"]
		y := attrFloat(t, p, "data-y")
		got[side][x] = y
		near(px[x], attrFloat(t, p, "cx"), "cx of "+side+" at "+x)
		near(py(y), attrFloat(t, p, "cy"), "cy of "+side+" at "+x)
		lines[side] = append(lines[side], p.attrs["cx"]+","+p.attrs["cy"])
	}
	assert.Equal(t, want, got)
	for _, l := range byClass(es, "polyline", "line") {
		assert.Equal(t, strings.Join(lines[l.attrs["data-side"]], " "), l.attrs["points"], "the %s line joins its markers in size order", l.attrs["data-side"])
	}
	assert.Len(t, byClass(es, "polyline", "line"), 3)

	ranges := byClass(es, "line", "range")
	require.Len(t, ranges, 9)
	wantRanges := map[string][2]float64{
		"k 1000": {4, 8}, "k 10000": {40, 44}, "k 100000": {400, 500},
		"c 1000": {8, 10}, "c 10000": {60, 80}, "c 100000": {700, 900},
		"f 1000": {2, 3}, "f 10000": {20, 22}, "f 100000": {200, 260},
	}
	for _, r := range ranges {
		key := r.attrs["data-side"] + " " + r.attrs["data-x"]
		lo, hi := attrFloat(t, r, "data-min"), attrFloat(t, r, "data-max")
		assert.Equal(t, wantRanges[key], [2]float64{lo, hi}, key)
		near(px[r.attrs["data-x"]], attrFloat(t, r, "x1"), key)
		near(px[r.attrs["data-x"]], attrFloat(t, r, "x2"), key)
		near(py(lo), attrFloat(t, r, "y1"), key)
		near(py(hi), attrFloat(t, r, "y2"), key)
	}

	var ticks []string
	for _, e := range byClass(es, "text", "tick-label") {
		ticks = append(ticks, e.text)
	}
	assert.Equal(t, []string{"1", "2", "5", "10", "20", "50", "100", "200", "500", "1000", "1k", "10k", "100k"}, ticks)
	var labels []string
	for _, e := range byClass(es, "text", "axis-label") {
		labels = append(labels, e.text)
	}
	assert.Equal(t, []string{"pods (log scale)", "sync-ms, log scale (median; bars: min–max over the pairs)"}, labels)
	assert.Equal(t, "Initial sync: sync-ms by pods (commit abc1234)", byClass(es, "text", "title")[0].text)
	var legend []string
	for _, e := range es {
		if e.name == "g" && e.attrs["class"] == "legend" {
			legend = append(legend, e.attrs["data-side"])
		}
	}
	assert.Equal(t, []string{"k", "c", "f"}, legend)
}

func TestPlotOfHandlersHasALinearScaleAndNoFloorWithoutOne(t *testing.T) {
	res, err := ParseBench(strings.NewReader(scalingSampleOutput))
	require.NoError(t, err)
	events := res.Scaling()[1]
	assert.Equal(t, "events_events-per-s.svg", PlotFileName(events))
	var out strings.Builder
	require.NoError(t, WritePlot(&out, events, "abc1234"))
	es := parseSVG(t, out.String())
	// handlers 1 and 10 at 100 and 540; largest value 520,000: steps of
	// 200,000 up to 600,000.
	for _, p := range byClass(es, "circle", "point") {
		want := map[string]float64{"1": 100, "10": 540}[p.attrs["data-x"]]
		assert.InDelta(t, want, attrFloat(t, p, "cx"), 0.051)
		assert.InDelta(t, 350-attrFloat(t, p, "data-y")/600000*300, attrFloat(t, p, "cy"), 0.051)
		assert.NotEqual(t, "f", p.attrs["data-side"])
	}
	assert.Len(t, byClass(es, "circle", "point"), 4)
	assert.Equal(t, "handlers", byClass(es, "text", "axis-label")[0].text)
}

func TestYScaleStepsByOneTwoOrFive(t *testing.T) {
	for _, tc := range []struct{ ymax, step, top float64 }{
		{900, 200, 1000},
		{1000, 200, 1000},
		{520000, 200000, 600000},
		{7.3, 2, 8},
		{0.04, 0.01, 0.04},
		{0, 0.2, 1},
		{math.NaN(), 0.2, 1},
	} {
		step, top := yScale(tc.ymax)
		assert.InDelta(t, tc.step, step, 1e-12, "step for %g", tc.ymax)
		assert.InDelta(t, tc.top, top, 1e-12, "top for %g", tc.ymax)
	}
}
