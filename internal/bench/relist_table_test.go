package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// relistSampleOutput is BenchmarkRelistModes output of three pairs in two
// cells (only the figures the tables use), with a log line in between.
const relistSampleOutput = `goos: linux
BenchmarkRelistModes/stream/changed=1%-2 	1	9 ns/op	 2.0 c-peak/steady	1300 c-peak-MB	3000 c-relist-ms	 1.10 k-peak/steady	700 k-peak-MB	2000 k-relist-ms
--- BENCH: BenchmarkRelistModes/stream/changed=1%-2
    relist_modes_test.go:196: k: steady 640.0 MB
BenchmarkRelistModes/stream/changed=1%-2 	1	9 ns/op	 2.0 c-peak/steady	1300 c-peak-MB	3000 c-relist-ms	 1.00 k-peak/steady	650 k-peak-MB	4000 k-relist-ms
BenchmarkRelistModes/stream/changed=1%-2 	1	9 ns/op	 2.2 c-peak/steady	1400 c-peak-MB	3000 c-relist-ms	 1.32 k-peak/steady	800 k-peak-MB	3300 k-relist-ms
BenchmarkRelistModes/unpaged/changed=100%-2 	1	9 ns/op	 2.0 c-peak/steady	1300 c-peak-MB	3000 c-relist-ms	 2.2 k-peak/steady	1400 k-peak-MB	3000 k-relist-ms
BenchmarkSync/pods=2000-2	1	1234 ns/op	6.0 c-allocs/pod	3.0 k-allocs/pod
PASS
`

func TestRelistCellsAndTables(t *testing.T) {
	res, err := ParseBench(strings.NewReader(relistSampleOutput))
	require.NoError(t, err)
	cells := RelistCells(res)
	require.Len(t, cells, 2)

	s := cells[0]
	assert.Equal(t, "stream", s.Mode)
	assert.Equal(t, 1, s.Percent)
	assert.Equal(t, 3, s.Pairs)
	p := s.PeakOverSteady
	assert.InDelta(t, 1.10, p.Kinformer, 1e-9)
	assert.InDelta(t, 2.0, p.ClientGo, 1e-9)
	// Per-pair ratios 0.55, 0.5, 0.6: the median of the ratios, not the
	// ratio of the medians.
	assert.InDelta(t, 0.55, p.Ratio, 1e-9)
	assert.InDelta(t, 0.5, p.Min, 1e-9)
	assert.InDelta(t, 0.6, p.Max, 1e-9)
	assert.Equal(t, "lower", p.Reading("lower", "higher"))
	target, ok := s.HeapTarget()
	assert.True(t, ok)
	assert.Equal(t, "≤ 1.15×", target)
	assert.True(t, s.HeapTargetMet())
	tm := s.RelistMs
	assert.InDelta(t, 1.1, tm.Ratio, 1e-9)
	assert.Equal(t, "level", tm.Reading("faster", "slower"), "ratios 0.67, 1.33, 1.1 span 1")

	u := cells[1]
	assert.Equal(t, "unpaged", u.Mode)
	assert.Equal(t, 100, u.Percent)
	_, ok = u.HeapTarget()
	assert.False(t, ok, "unpaged is report-only")
	assert.False(t, u.HeapTargetMet())

	for _, tc := range []struct {
		mode    string
		percent int
		fig     PairedFigure
		met     bool
	}{
		{"paged", 10, PairedFigure{Ratio: 1.15, Min: 1.1, Max: 1.2}, true},
		{"paged", 10, PairedFigure{Ratio: 1.16, Min: 0.9, Max: 1.2}, false},
		{"stream", 100, PairedFigure{Ratio: 1.02, Min: 0.98, Max: 1.05}, true},
		{"stream", 100, PairedFigure{Ratio: 1.02, Min: 1.01, Max: 1.05}, false},
		{"stream", 100, PairedFigure{Ratio: 0.99, Min: 0.99, Max: 0.99}, true},
	} {
		c := RelistCell{Mode: tc.mode, Percent: tc.percent, PeakOverSteady: tc.fig}
		assert.Equal(t, tc.met, c.HeapTargetMet(), "%+v", tc)
	}

	var out strings.Builder
	require.NoError(t, WriteRelistTables(&out, res))
	table := out.String()
	assert.Contains(t, table, "| stream | 1 % | 1.100 (700) | 2.000 (1300) | 0.55× | 0.50–0.60 | kinformer lower | ≤ 1.15× | yes | 3 |")
	assert.Contains(t, table, "| unpaged | 100 % | 2.200 (1400) | 2.000 (1300) | 1.10× | 1.10–1.10 | kinformer higher |  | report only | 1 |")
	assert.Contains(t, table, "| stream | 1 % | 3300 | 3000 | 1.10× | 0.67–1.33 | level | 3 |")

	empty, err := ParseBench(strings.NewReader(pairedSampleOutput))
	require.NoError(t, err)
	assert.Error(t, WriteRelistTables(&out, empty))
}
