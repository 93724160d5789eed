package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSummarizePairsEachKinformerRunWithClientGoOfTheSameRep checks the
// table's ratios: each kinformer run is divided by client-go's run of the
// same rep, pods and list, and the medians and ranges are over those ratios.
func TestSummarizePairsEachKinformerRunWithClientGoOfTheSameRep(t *testing.T) {
	in := strings.Join([]string{
		"# header lines are skipped",
		"rep=1 run=client-go side=client-go pods=100 list=prebuilt synced-ms=10.0 handled-ms=20.0 informer-heap-MB=5 beyond-objects-MB=2.00",
		"rep=1 run=kinformer@aaa side=kinformer pods=100 list=prebuilt synced-ms=5.0 handled-ms=10.0 informer-heap-MB=5 beyond-objects-MB=1.00",
		"rep=2 run=kinformer@aaa side=kinformer pods=100 list=prebuilt synced-ms=8.0 handled-ms=8.0 informer-heap-MB=5 beyond-objects-MB=3.00",
		"rep=2 run=client-go side=client-go pods=100 list=prebuilt synced-ms=20.0 handled-ms=40.0 informer-heap-MB=5 beyond-objects-MB=2.00",
		"rep=3 run=client-go side=client-go pods=100 list=prebuilt synced-ms=10.0 handled-ms=10.0 informer-heap-MB=5 beyond-objects-MB=2.00",
		"rep=3 run=kinformer@aaa side=kinformer pods=100 list=prebuilt synced-ms=9.0 handled-ms=5.0 informer-heap-MB=5 beyond-objects-MB=2.00",
		"rep=1 run=client-go@bbb side=client-go pods=100 list=in-listfunc synced-ms=100.0 handled-ms=100.0 live-heap-MB=50.0",
		"rep=1 run=kinformer@bbb side=kinformer pods=100 list=in-listfunc synced-ms=90.0 handled-ms=80.0 live-heap-MB=40.0",
	}, "\n")
	var out bytes.Buffer
	require.NoError(t, summarize(strings.NewReader(in), &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 5)
	// Ratios at 100 pods prebuilt: synced 0.5, 0.4, 0.9; handled 0.5, 0.2,
	// 0.5; heap 0.5, 1.5, 1.0.
	require.Equal(t, "# | 100 | in-listfunc | bbb | 1 | 0.90 (0.90–0.90) | 0.80 (0.80–0.80) | 0.80 | 90.0 | 100.0 |", lines[3])
	require.Equal(t, "# | 100 | prebuilt | aaa | 3 | 0.50 (0.40–0.90) | 0.50 (0.20–0.50) | 1.00 | 8.0 | 10.0 |", lines[4])
}

// TestSummarizeRejectsMalformedAndUnpairedLines checks the errors for a
// field without "=", a figure that is not a number, an unknown side, and a
// kinformer run without client-go's run of its rep.
func TestSummarizeRejectsMalformedAndUnpairedLines(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"field":    {"rep=1 run=client-go side=client-go pods=1 list=prebuilt synced-ms=1 handled-ms=1 garbage", `field "garbage" is not key=value`},
		"number":   {"rep=1 run=client-go side=client-go pods=1 list=prebuilt synced-ms=x handled-ms=1", "synced-ms"},
		"side":     {"rep=1 run=other side=other pods=1 list=prebuilt synced-ms=1 handled-ms=1", `side "other"`},
		"unpaired": {"rep=4 run=kinformer@c side=kinformer pods=1 list=prebuilt synced-ms=1 handled-ms=1", "has no client-go run to pair with"},
	} {
		t.Run(name, func(t *testing.T) {
			err := summarize(strings.NewReader(tc.in), &bytes.Buffer{})
			require.ErrorContains(t, err, tc.want)
		})
	}
}
