package bench

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kinformer/kinformer/cache"
)

// pairedSampleOutput is raw output of three benchmarks, one pair per
// result line, with header lines, a log line and figures one side lacks.
const pairedSampleOutput = `# commit: abc1234
# run: go test -run '^$' -bench '^BenchmarkSync$' -benchtime 1x -count 3 ./internal/bench
goos: linux
BenchmarkSync/pods=1000-2 	1	1234 ns/op	6.0 c-allocs/pod	10 c-sync-ms	2.0 f-allocs/pod	5 f-sync-ms	3.0 k-allocs/pod	8 k-sync-ms
--- BENCH: BenchmarkSync/pods=1000-2
    bench_test.go:50: k first
BenchmarkSync/pods=1000-2 	1	1234 ns/op	6.0 c-allocs/pod	20 c-sync-ms	2.0 f-allocs/pod	5 f-sync-ms	3.0 k-allocs/pod	12 k-sync-ms
BenchmarkSync/pods=1000-2 	1	1234 ns/op	6.0 c-allocs/pod	10 c-sync-ms	2.0 f-allocs/pod	4 f-sync-ms	3.0 k-allocs/pod	11 k-sync-ms
BenchmarkEvents/handlers=10-2 	1	2 ns/op	40000 c-events/s	100000 k-events/s
BenchmarkEvents/handlers=10-2 	1	2 ns/op	50000 c-events/s	90000 k-events/s
BenchmarkBlockedHandler/buffer=unbounded-2 	1	2 ns/op	100000 c-after-release	10000 c-sent-events/s	100000 k-after-release	10010 k-sent-events/s
BenchmarkBlockedHandler/buffer=unbounded-2 	1	2 ns/op	100000 c-after-release	10000 c-sent-events/s	100000 k-after-release	10020 k-sent-events/s
BenchmarkBlockedHandler/buffer=coalesce-2 	1	2 ns/op	100000 c-after-release	10001 k-after-release	10001 k-backlog-notes
BenchmarkBlockedHandler/buffer=coalesce-2 	1	2 ns/op	100000 c-after-release	10001 k-after-release	10001 k-backlog-notes
PASS
ok  	github.com/kinformer/kinformer/internal/bench	12.3s
`

func TestWriteTableComparesSidesPairByPair(t *testing.T) {
	res, err := ParseBench(strings.NewReader(pairedSampleOutput))
	require.NoError(t, err)
	require.NoError(t, res.Check(false))
	assert.Equal(t, []string{"Sync/pods=1000", "Events/handlers=10", "BlockedHandler/buffer=unbounded", "BlockedHandler/buffer=coalesce"}, res.Names)
	assert.Equal(t, []float64{8, 12, 11}, res.Values["Sync/pods=1000"]["k-sync-ms"])

	var out strings.Builder
	require.NoError(t, WriteTable(&out, res.Rows()))
	coalesce := BehaviourDifferences()[0].Reason
	// sync-ms: ratios 0.8, 0.6, 1.1 (median 0.8); k/floor 1.6, 2.4, 2.75.
	// events/s: ratios 2.5 and 1.8. Without an A/A control (and with
	// fewer than 10 pairs) no row is judged; the rows not compared say
	// why instead.
	const noAA = "not judged: no A/A control of this scenario and figure"
	assert.Equal(t, `| scenario | figure | kinformer | client-go | ratio k/c | range k/c | A/A spread | reading | target | met | floor | k/floor | pairs | note |
|---|---|---:|---:|---:|---|---|---|---|---|---:|---:|---:|---|
| Sync/pods=1000 | allocs/pod | 3.00 | 6.00 | 0.50× | 0.50–0.50 | – | not judged | ≤ 1× | not judged | 2.00 | 1.50× | 3 | `+noAA+` |
| Sync/pods=1000 | sync-ms | 11.00 | 10.00 | 0.80× | 0.60–1.10 | – | not judged | ≤ 0.7× | not judged | 5.00 | 2.40× | 3 | `+noAA+` |
| Events/handlers=10 | events/s | 95000 | 45000 | 2.15× | 1.80–2.50 | – | not judged | ≥ 2× | not judged | – | – | 2 | `+noAA+` |
| BlockedHandler/buffer=unbounded | after-release | 100000 | 100000 | 1.000× | 1.000–1.000 | – | not judged |  |  | – | – | 2 | `+noAA+` |
| BlockedHandler/buffer=unbounded | sent-events/s | 10015 | 10000 | 1.002× | 1.001–1.002 | – | not judged |  |  | – | – | 2 | `+noAA+` |
| BlockedHandler/buffer=coalesce | after-release | 10001 | 100000 | – | – | – |  |  |  | – | – | 2 | `+coalesce+` |
| BlockedHandler/buffer=coalesce | backlog-notes | 10001 | – | – | – | – |  |  |  | – | – | 2 | `+coalesce+` |

`+TableLegend+"\n", out.String())
}

func TestReadingFollowsTheFigureDirection(t *testing.T) {
	for _, tc := range []struct {
		figure    string
		direction Direction
		below     string
	}{
		{"events/s", HigherIsBetter, "kinformer worse"},
		{"others-events/s", HigherIsBetter, "kinformer worse"},
		{"others/sent", HigherIsBetter, "kinformer worse"},
		{"sent-events/s", NoDirection, "kinformer lower"},
		{"sync-ms", LowerIsBetter, "kinformer better"},
		{"relist-ms", LowerIsBetter, "kinformer better"},
		{"peaklive-MB", LowerIsBetter, "kinformer better"},
		{"retained/steady", LowerIsBetter, "kinformer better"},
		{"allocs/pod", LowerIsBetter, "kinformer better"},
		{"B/event", LowerIsBetter, "kinformer better"},
		{"meta-B/pod", LowerIsBetter, "kinformer better"},
		{"after-release", NoDirection, "kinformer lower"},
	} {
		assert.Equal(t, tc.direction, FigureDirection(tc.figure), tc.figure)
		assert.Equal(t, tc.below, reading(PairedFigure{Ratio: 0.8, Min: 0.7, Max: 0.9}, tc.direction, 1.2), tc.figure)
		assert.Equal(t, "level", reading(PairedFigure{Ratio: 0.8, Min: 0.7, Max: 0.9}, tc.direction, 1.3), tc.figure, "within the A/A spread")
		assert.Equal(t, ReadingNotJudged, reading(PairedFigure{Ratio: 0.8, Min: 0.7, Max: 0.9}, tc.direction, math.NaN()), tc.figure)
	}
}

func TestCheckRejectsFailedOrUnpairedOutput(t *testing.T) {
	const ok = "BenchmarkSync/pods=1000-2 \t1\t9 ns/op\t1 c-sync-ms\t1 k-sync-ms\n"
	for _, tc := range []struct {
		name, output, err string
	}{
		{"a failed benchmark", ok + "--- FAIL: BenchmarkEvents/handlers=1\n", "the output reports a failure: --- FAIL: BenchmarkEvents/handlers=1"},
		{"a failed sub-benchmark", ok + "    --- FAIL: BenchmarkEvents/handlers=1\n", "the output reports a failure: --- FAIL: BenchmarkEvents/handlers=1"},
		{"a benchmark line that says FAIL", ok + "BenchmarkEvents/handlers=1-2 \t--- FAIL: BenchmarkEvents/handlers=1-2\n", "the output reports a failure: BenchmarkEvents/handlers=1-2 \t--- FAIL: BenchmarkEvents/handlers=1-2"},
		{"a failed package", ok + "FAIL\tgithub.com/kinformer/kinformer/internal/bench\t3.1s\n", "the output reports a failure: FAIL\tgithub.com/kinformer/kinformer/internal/bench\t3.1s"},
		{"a bare FAIL", ok + "FAIL\n", "the output reports a failure: FAIL"},
		{"a panic", ok + "panic: boom\n", "the output reports a failure: panic: boom"},
		{"a fatal error", ok + "fatal error: concurrent map writes\n", "the output reports a failure: fatal error: concurrent map writes"},
		{"an empty input", "", "no benchmark results in the input"},
		{"no result line", "goos: linux\nPASS\n", "no benchmark results in the input"},
		{"a figure missing on a line", ok + "BenchmarkSync/pods=1000-2 \t1\t9 ns/op\t1 k-sync-ms\n",
			"BenchmarkSync/pods=1000: c-sync-ms is on 1 of its 2 result lines; every line must report every figure, since pairs are matched by line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ParseBench(strings.NewReader(tc.output))
			require.NoError(t, err)
			assert.EqualError(t, res.Check(false), tc.err)
		})
	}
}

// fullRunOutput is one result line per benchmark of the protocol, with
// every figure it requires, except the benchmark skip and the figure
// skipFigure.
func fullRunOutput(skip, skipFigure string) string {
	var b strings.Builder
	for _, p := range ProtocolBenchmarks() {
		if p.Name == skip {
			continue
		}
		b.WriteString("Benchmark" + p.Name + "-2 \t1\t9 ns/op")
		for _, f := range p.Figures {
			for _, side := range []string{SideKinformer, SideClientGo, SideFloor} {
				if side+"-"+f != skipFigure && (side != SideFloor || p.Floor) {
					b.WriteString("\t1 " + side + "-" + f)
				}
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestCheckOfAFullRunRequiresEveryProtocolBenchmark(t *testing.T) {
	res, err := ParseBench(strings.NewReader(fullRunOutput("", "")))
	require.NoError(t, err)
	assert.NoError(t, res.Check(true))

	res, err = ParseBench(strings.NewReader(fullRunOutput("APIServer/json/pods=10000", "f-retained-MB")))
	require.NoError(t, err)
	assert.NoError(t, res.Check(false), "a reduced run is not held to the protocol's names")
	assert.EqualError(t, res.Check(true), strings.Join([]string{
		"BenchmarkSync/pods=1000: figure f-retained-MB missing from the full run",
		"BenchmarkSync/pods=10000: figure f-retained-MB missing from the full run",
		"BenchmarkSync/pods=50000: figure f-retained-MB missing from the full run",
		"BenchmarkSync/pods=100000: figure f-retained-MB missing from the full run",
		"BenchmarkAPIServer/json/pods=10000: missing from the full run",
	}, "\n"))
}

// The controller-runtime group runs in the nested module, from its own
// folder; its rows read as any other's, and its A/A control rows (both
// sides on one engine) are extra rows the protocol does not require.
func TestManagerSyncRowsFromTheNestedModule(t *testing.T) {
	out := fullRunOutput("", "") +
		"pkg: github.com/kinformer/kinformer/interop/controllerruntime\n" +
		"BenchmarkManagerSync/aa=client-go/pods=10000-2 \t1\t9 ns/op\t400 c-sync-ms\t410 k-sync-ms\n"
	res, err := ParseBench(strings.NewReader(out))
	require.NoError(t, err)
	assert.NoError(t, res.Check(true))

	res, err = ParseBench(strings.NewReader(fullRunOutput("ManagerSync/pods=10000", "")))
	require.NoError(t, err)
	assert.EqualError(t, res.Check(true), "BenchmarkManagerSync/pods=10000: missing from the full run")

	res, err = ParseBench(strings.NewReader(
		"BenchmarkManagerSync/pods=10000-2 \t1\t9 ns/op\t800 c-sync-ms\t600 k-sync-ms\t130 c-retained-MB\t131 k-retained-MB\n" +
			"BenchmarkManagerSync/pods=10000-2 \t1\t9 ns/op\t1000 c-sync-ms\t700 k-sync-ms\t130 c-retained-MB\t129 k-retained-MB\n"))
	require.NoError(t, err)
	rows := res.Rows()
	require.Len(t, rows, 2)
	assert.Equal(t, "retained-MB", rows[0].Figure)
	assert.Equal(t, ReadingNotJudged, rows[0].Reading, "no A/A control, two pairs")
	assert.Equal(t, "sync-ms", rows[1].Figure)
	assert.Equal(t, ReadingNotJudged, rows[1].Reading)
	assert.InDelta(t, 0.725, rows[1].Paired.Ratio, 1e-9)
}

func TestParseBenchReadsTheHeaderLines(t *testing.T) {
	res, err := ParseBench(strings.NewReader("# commit: abc1234-dirty\n# started: 2026-11-26 20:00:00 UTC\n# run: go test -bench A\nBenchmarkA-2 1 1 ns/op 1 k-x\n# run: go test -bench B\n# wall time: 12 s\n"))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{HeaderCommit: "abc1234-dirty", HeaderStarted: "2026-11-26 20:00:00 UTC", HeaderWall: "12 s"}, res.Header)
	assert.Equal(t, []string{"go test -bench A", "go test -bench B"}, res.Runs)
	assert.Equal(t, []string{"A"}, res.Names)
}

// The events benchmark subtracts one allocation per event for the producer;
// this keeps that true.
func TestMemoryLWProducerAllocatesOncePerEvent(t *testing.T) {
	templates := NewPodList(0, 4, "1").Items
	rvs := []string{"2", "3", "4", "5", "6", "7", "8", "9"}
	w := &MemoryWatch{ch: make(chan watch.Event, len(rvs)), stopped: make(chan struct{})}
	allocs := testing.AllocsPerRun(20, func() {
		require.NoError(t, sendModified(w, templates, rvs))
		for range rvs {
			<-w.ch
		}
	})
	assert.Equal(t, float64(len(rvs)), allocs)
}

func TestMemoryLWServesPages(t *testing.T) {
	lw := NewMemoryLW(1200, 7)
	var keys []string
	opts := metav1.ListOptions{Limit: 500}
	for pages := 1; ; pages++ {
		obj, err := lw.List(opts)
		require.NoError(t, err)
		list := obj.(*v1.PodList)
		assert.Equal(t, "7", list.ResourceVersion)
		for i := range list.Items {
			key, err := cache.MetaNamespaceKeyFunc(&list.Items[i])
			require.NoError(t, err)
			keys = append(keys, key)
		}
		if list.Continue == "" {
			assert.Equal(t, 3, pages)
			break
		}
		opts.Continue = list.Continue
	}
	require.Len(t, keys, 1200)
	for i, key := range keys {
		assert.Equal(t, PodKey(i), key)
	}

	obj, err := lw.List(metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	require.NoError(t, err)
	assert.Len(t, obj.(*v1.PodList).Items, 1200, "a LIST at resourceVersion 0 is not paged")
	assert.Equal(t, 4, lw.Lists())
}

// pairLines returns n result lines of bench, pair i reporting k-<figure>
// = k(i) and c-<figure> = 100.
func pairLines(bench, figure string, n int, k func(i int) float64) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "Benchmark%s-2 \t1\t9 ns/op\t100 c-%s\t%g k-%s\n", bench, figure, k(i), figure)
	}
	return b.String()
}

// A row reads better or worse only when its median ratio lies beyond the
// spread its A/A control shows, with at least MinPairs pairs on both; its
// target is judged the same way.
func TestReadingsAndTargetsAreJudgedAgainstTheAASpread(t *testing.T) {
	// Ratios 0.60 to 0.69 (median 0.645) in every A/B row.
	ab := func(i int) float64 { return 60 + float64(i) }
	for _, tc := range []struct {
		name      string
		aa        string
		abPairs   int
		reading   string
		met       TargetVerdict
		spreadPct float64
		note      string
	}{
		// A/A ratios 0.98–1.04: spread max(1/0.98, 1.04) = 1.04 (4.0 %);
		// 0.645 is beyond it, and 0.645 × 1.04 = 0.671 meets ≤ 0.7.
		{"beyond a narrow spread", pairLines("Sync/pods=1000", "sync-ms", 10, func(i int) float64 { return []float64{98, 99, 100, 101, 102, 103, 104, 100, 100, 100}[i] }), 10,
			"kinformer better", TargetMet, 4.0, ""},
		// A/A ratios up to 1.6: 0.645 is within [1/1.6, 1.6] = [0.625, 1.6],
		// and the ≤ 0.7 bound lies between 0.645/1.6 and 0.645 × 1.6.
		{"within a wide spread", pairLines("Sync/pods=1000", "sync-ms", 10, func(i int) float64 { return []float64{160, 90, 100, 100, 100, 100, 100, 100, 100, 100}[i] }), 10,
			"level", TargetWithinSpread, 60, ""},
		{"a control of fewer than 10 pairs", pairLines("Sync/pods=1000", "sync-ms", 9, func(int) float64 { return 100 }), 10,
			ReadingNotJudged, TargetNotJudged, 0, "not judged: 10 pairs, 9 in the A/A control; 10 needed in each"},
		{"a run of fewer than 10 pairs", pairLines("Sync/pods=1000", "sync-ms", 10, func(int) float64 { return 100 }), 9,
			ReadingNotJudged, TargetNotJudged, 0, "not judged: 9 pairs, 10 in the A/A control; 10 needed in each"},
		{"no control", "", 10, ReadingNotJudged, TargetNotJudged, 0, "not judged: no A/A control of this scenario and figure"},
		{"a control of another scenario", pairLines("Sync/pods=10000", "sync-ms", 10, func(int) float64 { return 100 }), 10,
			ReadingNotJudged, TargetNotJudged, 0, "not judged: no A/A control of this scenario and figure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ParseBench(strings.NewReader(pairLines("Sync/pods=1000", "sync-ms", tc.abPairs, ab)))
			require.NoError(t, err)
			if tc.aa != "" {
				res.AA, err = ParseBench(strings.NewReader(tc.aa))
				require.NoError(t, err)
			}
			rows := res.Rows()
			require.Len(t, rows, 1)
			r := rows[0]
			assert.Equal(t, tc.reading, r.Reading)
			require.NotNil(t, r.Target)
			assert.Equal(t, tc.met, r.Met)
			assert.Equal(t, tc.note, r.Note)
			if tc.spreadPct > 0 {
				assert.InDelta(t, tc.spreadPct, (r.AA.Factor-1)*100, 0.01)
			}
		})
	}

	// A ratio above 1/s misses a bound it cannot meet even moved by s.
	res, err := ParseBench(strings.NewReader(pairLines("Sync/pods=1000", "sync-ms", 10, func(int) float64 { return 90 })))
	require.NoError(t, err)
	res.AA, err = ParseBench(strings.NewReader(pairLines("Sync/pods=1000", "sync-ms", 10, func(i int) float64 { return 100 + float64(i%3) })))
	require.NoError(t, err)
	r := res.Rows()[0]
	assert.Equal(t, "kinformer better", r.Reading, "0.9 < 1/1.02")
	assert.Equal(t, TargetMissed, r.Met, "0.9 / 1.02 > 0.7")
}

// ScenarioOf maps an A/A control row onto the scenario it controls; such
// rows in the run's own output (the controller-runtime group's) are
// controls, read as such.
func TestAAControlRowsOfTheRunControlTheirScenario(t *testing.T) {
	assert.Equal(t, "ManagerSync/pods=10000", ScenarioOf("ManagerSync/aa=kinformer/pods=10000"))
	assert.Equal(t, "Sync/pods=1000", ScenarioOf("Sync/pods=1000"))
	out := pairLines("ManagerSync/pods=10000", "sync-ms", 10, func(int) float64 { return 80 }) +
		pairLines("ManagerSync/aa=kinformer/pods=10000", "sync-ms", 5, func(int) float64 { return 105 }) +
		pairLines("ManagerSync/aa=client-go/pods=10000", "sync-ms", 5, func(int) float64 { return 97 })
	res, err := ParseBench(strings.NewReader(out))
	require.NoError(t, err)
	rows := res.Rows()
	require.Len(t, rows, 3)
	assert.Equal(t, "kinformer better", rows[0].Reading, "0.8 beyond the pooled spread 1.05")
	assert.Equal(t, AASpread{Factor: 1.05, Pairs: 10}, rows[0].AA)
	assert.Equal(t, ReadingAAControl, rows[1].Reading)
	assert.Equal(t, ReadingAAControl, rows[2].Reading)
}
