package synctrack

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// infTracker abstracts over both tracker kinds so one table covers both.
type infTracker struct {
	upstream  func()
	start     func()
	finish    func()
	hasSynced func() bool
	done      <-chan struct{}
	name      func() string
}

func infTrackers() map[string]func(name string) infTracker {
	return map[string]func(name string) infTracker{
		"SingleFile": func(name string) infTracker {
			t := NewSingleFileTracker(name)
			return infTracker{t.UpstreamHasSynced, t.Start, t.Finished, t.HasSynced, t.Done(), t.Name}
		},
		"Async": func(name string) infTracker {
			t := NewAsyncTracker[string](name)
			return infTracker{t.UpstreamHasSynced, func() { t.Start("k") }, func() { t.Finished("k") }, t.HasSynced, t.Done(), t.Name}
		},
	}
}

func infClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestTrackerSequences(t *testing.T) {
	// Each step is one of: s(tart), f(inish), u(pstream synced). want is the
	// synced state after every step.
	cases := []struct {
		name  string
		steps string
		want  []bool
	}{
		{"nothing", "", nil},
		{"upstream only", "u", []bool{true}},
		{"start then upstream", "su", []bool{false, false}},
		{"start finish no upstream", "sf", []bool{false, false}},
		{"start finish upstream", "sfu", []bool{false, false, true}},
		{"start upstream finish", "suf", []bool{false, false, true}},
		{"two items", "ssufF", []bool{false, false, false, false, true}},
		{"upstream twice", "suuf", []bool{false, false, false, true}},
	}
	for kind, mk := range infTrackers() {
		for _, tc := range cases {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				tr := mk("x")
				assert.False(t, tr.hasSynced())
				assert.False(t, infClosed(tr.done))
				for i, step := range tc.steps {
					switch step {
					case 's':
						tr.start()
					case 'f', 'F':
						tr.finish()
					case 'u':
						tr.upstream()
					}
					want := tc.want[i]
					if kind == "Async" && tc.name == "two items" && i == 3 {
						// The async tracker keys items and both starts used the
						// same key, so the first finish already completes it.
						want = true
					}
					assert.Equal(t, want, tr.hasSynced(), "step %d (%c)", i, step)
					assert.Equal(t, want, infClosed(tr.done), "step %d (%c) channel", i, step)
				}
			})
		}
	}
}

func TestTrackerName(t *testing.T) {
	for kind, mk := range infTrackers() {
		t.Run(kind, func(t *testing.T) {
			assert.Equal(t, "my name", mk("my name").name())
		})
	}
}

func TestSingleFileUnmatchedFinishIgnored(t *testing.T) {
	tr := NewSingleFileTracker("")
	require.NotPanics(t, tr.Finished)
	tr.Start()
	tr.UpstreamHasSynced()
	assert.False(t, tr.HasSynced(), "the unmatched Finished must not have consumed the later Start")
	tr.Finished()
	assert.True(t, tr.HasSynced())
	tr.Finished()
	assert.True(t, tr.HasSynced(), "synced stays synced")
}

func TestAsyncKeysTrackedIndividually(t *testing.T) {
	tr := NewAsyncTracker[int]("")
	tr.Finished(7) // unknown key: no effect
	tr.Start(1)
	tr.Start(2)
	tr.UpstreamHasSynced()
	tr.Finished(1)
	assert.False(t, tr.HasSynced())
	tr.Finished(1)
	assert.False(t, tr.HasSynced(), "finishing 1 twice does not finish 2")
	tr.Finished(2)
	assert.True(t, tr.HasSynced())
}

func TestSingleFileConcurrentCounting(t *testing.T) {
	tr := NewSingleFileTracker("")
	const n = 1000
	for range n {
		tr.Start()
	}
	tr.UpstreamHasSynced()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			for range n / 10 {
				tr.Finished()
			}
		})
	}
	wg.Wait()
	select {
	case <-tr.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("not synced after all items finished")
	}
	assert.True(t, tr.HasSynced())
}

func TestAsyncConcurrent(t *testing.T) {
	tr := NewAsyncTracker[int]("")
	const n = 500
	for i := range n {
		tr.Start(i)
	}
	var wg sync.WaitGroup
	for w := range 5 {
		wg.Go(func() {
			for i := w; i < n; i += 5 {
				tr.Finished(i)
			}
		})
	}
	wg.Go(tr.UpstreamHasSynced)
	wg.Wait()
	assert.True(t, tr.HasSynced())
	assert.True(t, infClosed(tr.Done()))
}
