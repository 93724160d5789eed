package cache

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/internal/bench"
	"github.com/kinformer/kinformer/internal/pbdecode"
)

// failureLog records mutation detector failures.
type failureLog struct {
	mu   sync.Mutex
	msgs []string
}

func (f *failureLog) fail(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, msg)
}

func (f *failureLog) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.msgs)
}

func TestNewCacheMutationDetectorFollowsEnv(t *testing.T) {
	cases := []struct {
		env     string
		enabled bool
	}{{"", false}, {"false", false}, {"garbage", false}, {"true", true}, {"1", true}}
	for _, tc := range cases {
		t.Run(tc.env, func(t *testing.T) {
			t.Setenv(mutationDetectorEnv, tc.env)
			d := NewCacheMutationDetector("st")
			_, isReal := d.(*mutationDetector)
			assert.Equal(t, tc.enabled, isReal)
		})
	}
	// The disabled detector does nothing, and Run returns at once.
	d := noopMutationDetector{}
	d.AddObject(newPodIn("ns", "a", "1"))
	stop := make(chan struct{})
	close(stop)
	d.Run(stop)
}

func TestMutationDetectorCompare(t *testing.T) {
	var nilPod = newPodIn("", "", "")
	nilPod = nil
	cases := []struct {
		name   string
		add    []interface{}
		mutate func(objs []interface{})
		fails  int
	}{
		{name: "untouched", add: []interface{}{newPodIn("ns", "a", "1")}, fails: 0},
		{name: "mutated", add: []interface{}{newPodIn("ns", "a", "1")}, mutate: func(objs []interface{}) {
			objs[0].(interface{ SetLabels(map[string]string) }).SetLabels(map[string]string{"x": "y"})
		}, fails: 1},
		{name: "ignored values", add: []interface{}{"str", DeletedFinalStateUnknown{Key: "k"}, &DeletedFinalStateUnknown{}, nilPod, nil}, fails: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &failureLog{}
			d := newMutationDetector("st", clocktesting.NewFakeClock(time.Unix(0, 0)), time.Second, time.Minute, f.fail)
			for _, o := range tc.add {
				d.AddObject(o)
			}
			if tc.mutate != nil {
				tc.mutate(tc.add)
			}
			d.compare()
			assert.Equal(t, tc.fails, f.count())
		})
	}
}

func TestMutationDetectorPanicsByDefault(t *testing.T) {
	d := newMutationDetector("st", clocktesting.NewFakeClock(time.Unix(0, 0)), time.Second, time.Minute, nil)
	p := newPodIn("ns", "a", "1")
	d.AddObject(p)
	p.Name = "changed"
	assert.PanicsWithValue(t, "cache st modified: 1 cached object(s) were mutated in place", d.compare)
}

func TestMutationDetectorRunRotatesAndStops(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Unix(0, 0))
	f := &failureLog{}
	d := newMutationDetector("st", clk, time.Second, time.Minute, f.fail)
	p := newPodIn("ns", "a", "1")
	d.AddObject(p)

	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(stop)
	}()
	// Let Run wait on its timer, then advance past two retention periods so
	// the object is dropped before it is mutated.
	for i := 0; i < 3; i++ {
		require.Eventually(t, clk.HasWaiters, 5*time.Second, time.Millisecond)
		clk.Step(61 * time.Second)
	}
	require.Eventually(t, clk.HasWaiters, 5*time.Second, time.Millisecond)
	d.compareMu.Lock()
	watched := len(d.current) + len(d.previous)
	d.compareMu.Unlock()
	assert.Zero(t, watched, "objects are dropped after the retention window")
	p.Name = "changed"
	clk.Step(time.Second)
	require.Eventually(t, clk.HasWaiters, 5*time.Second, time.Millisecond)
	assert.Zero(t, f.count())

	close(stop)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop")
	}
}

// decodedPod returns a benchmark pod decoded by kinformer's generated
// decoder, as the typed informers cache it.
func decodedPod(t *testing.T) *v1.Pod {
	t.Helper()
	b, err := bench.NewPod(7, "5").Marshal()
	require.NoError(t, err)
	pod := &v1.Pod{}
	require.NoError(t, pbdecode.Unmarshal(b, pod))
	return pod
}

func TestMutationDetectorSeesMutationsOfObjectsFromTheGeneratedDecoder(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*v1.Pod)
		fails  int
	}{
		{name: "untouched", mutate: func(*v1.Pod) {}, fails: 0},
		{name: "string field", mutate: func(p *v1.Pod) { p.Spec.NodeName = "elsewhere" }, fails: 1},
		{name: "map entry", mutate: func(p *v1.Pod) { p.Labels["app"] = "changed" }, fails: 1},
		{name: "byte in place", mutate: func(p *v1.Pod) { p.ManagedFields[0].FieldsV1.Raw[0] = ' ' }, fails: 1},
		{name: "slice element", mutate: func(p *v1.Pod) { p.Spec.Containers[1].Env[0].Value = "debug" }, fails: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &failureLog{}
			d := newMutationDetector("st", clocktesting.NewFakeClock(time.Unix(0, 0)), time.Second, time.Minute, f.fail)
			pod := decodedPod(t)
			d.AddObject(pod)
			tc.mutate(pod)
			d.compare()
			assert.Equal(t, tc.fails, f.count())
		})
	}
}
