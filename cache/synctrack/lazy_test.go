package synctrack

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLazyCachesUntilNotify(t *testing.T) {
	var calls atomic.Int64
	var source atomic.Int64
	z := Lazy[int64]{Evaluate: func() (int64, error) {
		calls.Add(1)
		return source.Load(), nil
	}}
	source.Store(1)
	v, err := z.Get()
	require.NoError(t, err)
	assert.Equal(t, int64(1), v)
	source.Store(2)
	v, _ = z.Get()
	assert.Equal(t, int64(1), v, "cached until Notify")
	assert.Equal(t, int64(1), calls.Load())
	z.Notify()
	v, _ = z.Get()
	assert.Equal(t, int64(2), v)
	assert.Equal(t, int64(2), calls.Load())
}

func TestLazyErrorNotCached(t *testing.T) {
	fail := true
	calls := 0
	z := Lazy[string]{Evaluate: func() (string, error) {
		calls++
		if fail {
			return "", errors.New("boom")
		}
		return "ok", nil
	}}
	_, err := z.Get()
	require.Error(t, err)
	_, err = z.Get()
	require.Error(t, err)
	fail = false
	v, err := z.Get()
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
	assert.Equal(t, 3, calls)
}

func TestLazyNilEvaluate(t *testing.T) {
	var z Lazy[int]
	_, err := z.Get()
	require.Error(t, err)
	z.Notify()
	_, err = z.Get()
	require.Error(t, err)
}

func TestLazyConcurrentGetsShareOneEvaluation(t *testing.T) {
	var calls atomic.Int64
	release := make(chan struct{})
	z := Lazy[int]{Evaluate: func() (int, error) {
		calls.Add(1)
		<-release
		return 42, nil
	}}
	var wg sync.WaitGroup
	results := make([]int, 20)
	for i := range results {
		wg.Go(func() {
			v, err := z.Get()
			assert.NoError(t, err)
			results[i] = v
		})
	}
	close(release)
	wg.Wait()
	assert.Equal(t, int64(1), calls.Load())
	for _, r := range results {
		assert.Equal(t, 42, r)
	}
}

func TestLazyNeverGoesBackwards(t *testing.T) {
	var reality atomic.Int64
	z := Lazy[int64]{Evaluate: func() (int64, error) { return reality.Load(), nil }}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				set := reality.Add(1)
				z.Notify()
				got, err := z.Get()
				assert.NoError(t, err)
				assert.GreaterOrEqual(t, got, set)
			}
		})
	}
	wg.Wait()
}
