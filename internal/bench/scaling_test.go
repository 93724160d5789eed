package bench

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scalingSampleOutput has three sizes of Sync (not in size order) and two of
// Events, two pairs each.
const scalingSampleOutput = `goos: linux
BenchmarkSync/pods=10000-2 	1	9 ns/op	60 c-sync-ms	20 f-sync-ms	40 k-sync-ms
BenchmarkSync/pods=10000-2 	1	9 ns/op	80 c-sync-ms	22 f-sync-ms	44 k-sync-ms
BenchmarkSync/pods=1000-2 	1	9 ns/op	8 c-sync-ms	2 f-sync-ms	4 k-sync-ms
BenchmarkSync/pods=1000-2 	1	9 ns/op	10 c-sync-ms	3 f-sync-ms	8 k-sync-ms
BenchmarkSync/pods=100000-2 	1	9 ns/op	700 c-sync-ms	200 f-sync-ms	400 k-sync-ms
BenchmarkSync/pods=100000-2 	1	9 ns/op	900 c-sync-ms	260 f-sync-ms	500 k-sync-ms
BenchmarkEvents/handlers=1-2 	1	9 ns/op	250000 c-events/s	500000 k-events/s
BenchmarkEvents/handlers=1-2 	1	9 ns/op	240000 c-events/s	520000 k-events/s
BenchmarkEvents/handlers=10-2 	1	9 ns/op	90000 c-events/s	450000 k-events/s
BenchmarkEvents/handlers=10-2 	1	9 ns/op	90000 c-events/s	450000 k-events/s
BenchmarkHTTP/json/pods=20000-2 	1	9 ns/op	900 c-sync-ms	450 k-sync-ms
PASS
`

func TestScalingTablesListEachSizeInOrderWithRanges(t *testing.T) {
	res, err := ParseBench(strings.NewReader(scalingSampleOutput))
	require.NoError(t, err)
	series := res.Scaling()
	require.Len(t, series, 2, "figures no size reports are left out")

	var out strings.Builder
	require.NoError(t, WriteScalingTables(&out, series))
	assert.Equal(t, "Initial sync (`Sync/pods=N`) by number of pods: medians over the pairs, min–max in brackets.\n\n"+
		`| figure | pods | kinformer | client-go | floor | ratio k/c | pairs |
|---|---:|---:|---:|---:|---:|---:|
| sync-ms | 1000 | 6.00 (4.00–8.00) | 9.00 (8.00–10.00) | 2.50 (2.00–3.00) | 0.65× | 2 |
| sync-ms | 10000 | 42.00 (40.00–44.00) | 70.00 (60.00–80.00) | 21.00 (20.00–22.00) | 0.61× | 2 |
| sync-ms | 100000 | 450.0 (400.0–500.0) | 800.0 (700.0–900.0) | 230.0 (200.0–260.0) | 0.56× | 2 |

`+"Watch events (`Events/handlers=N`) by number of handlers: medians over the pairs, min–max in brackets.\n\n"+
		`| figure | handlers | kinformer | client-go | floor | ratio k/c | pairs |
|---|---:|---:|---:|---:|---:|---:|
| events/s | 1 | 510000 (500000–520000) | 245000 (240000–250000) | – | 2.08× | 2 |
| events/s | 10 | 450000 (450000–450000) | 90000 (90000–90000) | – | 5.00× | 2 |
`, out.String())
}
