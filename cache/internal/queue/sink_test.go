package queue

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"
)

// pageRecorder records the pages and the end a pages sink hands over.
type pageRecorder struct {
	calls []string
}

func (r *pageRecorder) sink(streamed bool) *Pages {
	return &Pages{
		logger:   klog.Background(),
		keyOf:    podKey,
		streamed: streamed,
		prepare:  func(_ string, obj any) (any, error) { return obj, nil },
		refused:  changeOps{}.Refused,
		hand: func(_ context.Context, page []listedObject) error {
			s := "page"
			for _, o := range page {
				if o.obj == nil {
					s += " -" + o.key
					continue
				}
				s += " " + describe(o.obj)
			}
			r.calls = append(r.calls, s)
			return nil
		},
		finish: func(_ context.Context, listed map[string]struct{}, rv string) error {
			keys := make([]string, 0, len(listed))
			for key := range listed {
				keys = append(keys, key)
			}
			sort.Strings(keys)
			r.calls = append(r.calls, "end "+rv+" listed "+strings.Join(keys, ","))
			return nil
		},
	}
}

// TestPagesStreamedList: a streaming list applied page by page hands its
// objects over in pages of arrival order; a newer state of a key in the
// pending page replaces it in place, a removal drops it (and drops it from
// the listed keys, so that the end deletes it if it was handed over
// before). The calls are those a streamed list cutting pages of two makes
// (see cache's TestStreamedListHandedOverInPages).
func TestPagesStreamedList(t *testing.T) {
	ctx := context.Background()
	rec := &pageRecorder{}
	s := rec.sink(true)
	require.NoError(t, s.Put(pod("a", "1")))
	require.NoError(t, s.Put(pod("b", "2")))
	require.NoError(t, s.PageEnd(ctx))
	require.NoError(t, s.Put(pod("c", "3")))
	require.NoError(t, s.Put(pod("c", "4")))
	require.NoError(t, s.PageEnd(ctx))
	require.NoError(t, s.Remove(pod("a", "5")))
	require.NoError(t, s.Put(pod("d", "6")))
	require.NoError(t, s.Remove(pod("d", "7")))
	require.NoError(t, s.Put(pod("e", "8")))
	require.NoError(t, s.PageEnd(ctx))
	n, err := s.End(ctx, "9")
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.Equal(t, []string{
		"page ns/a@1 ns/b@2",
		"page ns/c@4",
		"page -ns/d ns/e@8",
		"end 9 listed ns/b,ns/c,ns/e",
	}, rec.calls)

	// An empty stream still ends a list.
	rec = &pageRecorder{}
	n, err = rec.sink(true).End(ctx, "3")
	require.NoError(t, err)
	assert.Equal(t, 0, n)
	assert.Equal(t, []string{"end 3 listed "}, rec.calls)
}
