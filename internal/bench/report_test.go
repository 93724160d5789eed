package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const reportSampleOutput = `# commit: abc1234
# started: 2026-11-26 20:00:00 UTC
# machine: 2 CPUs, Intel(R) Xeon(R) Processor, go1.26.8 linux/amd64
# load average at start: 0.10 0.20 0.30
# sizes: full
# command: make bench
# run: KINFORMER_BENCH_FULL=1 go test -run '^$' -bench '^BenchmarkEvents$' -benchtime 1x -count 2 ./internal/bench
BenchmarkEvents/handlers=1-2 	1	9 ns/op	250000 c-events/s	500000 k-events/s
BenchmarkEvents/handlers=1-2 	1	9 ns/op	240000 c-events/s	520000 k-events/s
ok  	github.com/kinformer/kinformer/internal/bench	3.0s
# wall time: 61 s
# load average at end: 1.00 0.50 0.40
`

func TestWriteReportNamesTheRunAndLinksThePlots(t *testing.T) {
	res, err := ParseBench(strings.NewReader(reportSampleOutput))
	require.NoError(t, err)
	var out strings.Builder
	require.NoError(t, WriteReport(&out, res, ReportOptions{Raw: "internal/bench/results/bench-abc1234.txt", Assets: "internal/bench/results/bench-abc1234"}))
	assert.Equal(t, "Commit `abc1234`, started 2026-11-26 20:00:00 UTC, wall time 61 s (compilation included).\n"+
		"Machine: 2 CPUs, Intel(R) Xeon(R) Processor, go1.26.8 linux/amd64; load average (1/5/15 min) 0.10 0.20 0.30 at the start, 1.00 0.50 0.40 at the end.\n"+
		"Raw output: [`internal/bench/results/bench-abc1234.txt`](internal/bench/results/bench-abc1234.txt).\n"+
		"No A/A controls: no row is judged.\n\n"+
		"Command: `make bench` (sizes: full), which ran:\n\n```\n"+
		"KINFORMER_BENCH_FULL=1 go test -run '^$' -bench '^BenchmarkEvents$' -benchtime 1x -count 2 ./internal/bench\n"+
		"```\n\nAll figures:\n\n"+
		"| scenario | figure | kinformer | client-go | ratio k/c | range k/c | A/A spread | reading | target | met | floor | k/floor | pairs | note |\n"+
		"|---|---|---:|---:|---:|---|---|---|---|---|---:|---:|---:|---|\n"+
		"| Events/handlers=1 | events/s | 510000 | 245000 | 2.08× | 2.00–2.17 | – | not judged | ≥ 1.5× | not judged | – | – | 2 | not judged: no A/A control of this scenario and figure |\n\n"+
		TableLegend+"\n\nHow cost grows:\n\n"+
		"Watch events (`Events/handlers=N`) by number of handlers: medians over the pairs, min–max in brackets.\n\n"+
		"| figure | handlers | kinformer | client-go | floor | ratio k/c | pairs |\n"+
		"|---|---:|---:|---:|---:|---:|---:|\n"+
		"| events/s | 1 | 510000 (500000–520000) | 245000 (240000–250000) | – | 2.08× | 2 |\n\n"+
		"![Watch events: events/s by handlers (commit abc1234)](internal/bench/results/bench-abc1234/events_events-per-s.svg)\n",
		out.String())

	res.Header[HeaderCommit] = ""
	assert.EqualError(t, WriteReport(&out, res, ReportOptions{}), `the raw results have no "# commit:" header line`)
}

func TestReplaceBlockKeepsEverythingOutsideTheMarkers(t *testing.T) {
	const doc = "# Benchmarks\n\nprose\n\n" + BlockBegin + "\nold table\nold plot\n" + BlockEnd + "\n\nmore prose\n"
	got, err := ReplaceBlock(doc, "new table")
	require.NoError(t, err)
	assert.Equal(t, "# Benchmarks\n\nprose\n\n"+BlockBegin+"\nnew table\n"+BlockEnd+"\n\nmore prose\n", got)

	for _, tc := range []struct{ name, doc, err string }{
		{"no markers", "# Benchmarks\n", "no marker line <!-- bench:begin -->"},
		{"no end marker", BlockBegin + "\nx\n", "no marker line <!-- bench:end -->"},
		{"markers reversed", BlockEnd + "\nx\n" + BlockBegin + "\n", "the marker line <!-- bench:end --> comes before <!-- bench:begin -->"},
		{"a marker twice", BlockBegin + "\n" + BlockEnd + "\n" + BlockBegin + "\n", "the marker line <!-- bench:begin --> is there twice"},
		{"a marker inside a line", "see " + BlockBegin + " here\n" + BlockEnd + "\n", "no marker line <!-- bench:begin -->"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReplaceBlock(tc.doc, "new")
			assert.EqualError(t, err, tc.err)
		})
	}
}
