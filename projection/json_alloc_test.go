//go:build !race

package projection

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigObject returns a pod-like object whose dropped subtrees hold n
// members each.
func bigObject(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"b","labels":{"app":"x"},"managedFields":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"manager":"m%d","fieldsV1":{"f:spec":{"f:x\u00e9\"%d":{}}},"time":"2024-01-01T00:00:00Z","n":[1.5e3,-0,true,null]}`, i, i)
	}
	b.WriteString(`],"annotations":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"example.com/k\u00e9y-%d":"v\"%d"`, i, i)
	}
	b.WriteString(`}},"spec":{"nodeName":"node-1","containers":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"c%d","image":"img","env":[{"name":"A","value":"B"}],"resources":{"limits":{"cpu":"1"}}}`, i)
	}
	b.WriteString(`]},"status":{"phase":"Running","podIPs":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ip":"10.0.0.%d"}`, i%256)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

func TestFilterJSONObjectAllocsIndependentOfDroppedSize(t *testing.T) {
	p := mustProjection(t, "metadata.labels", "metadata.ownerReferences", "spec.nodeName", "status.phase", "status.conditions")
	allocs := map[int]float64{}
	for _, n := range []int{10, 1000} {
		src := bigObject(n)
		dst := make([]byte, 0, 4096)
		out, err := filterJSONObject(dst, src, p.root, p.Fingerprint())
		require.NoError(t, err)
		require.Less(t, len(out), 400, "%s", out) // everything big was dropped
		allocs[n] = testing.AllocsPerRun(20, func() {
			if _, err := filterJSONObject(dst[:0], src, p.root, p.Fingerprint()); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Logf("allocations per filtering: %v", allocs)
	assert.Equal(t, allocs[10], allocs[1000])
	assert.LessOrEqual(t, allocs[1000], 2.0)
}
