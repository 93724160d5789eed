package cache

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// recordingMutationDetector is a MutationDetector that records what it is given
// and whether it runs.
type recordingMutationDetector struct {
	mu      sync.Mutex
	objects []string
	running bool
	stopped bool
}

func (d *recordingMutationDetector) AddObject(obj interface{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.objects = append(d.objects, describeObj(obj))
}

func (d *recordingMutationDetector) Run(stopCh <-chan struct{}) {
	d.mu.Lock()
	d.running = true
	d.mu.Unlock()
	<-stopCh
	d.mu.Lock()
	d.stopped = true
	d.mu.Unlock()
}

func (d *recordingMutationDetector) snapshot() (objects []string, running, stopped bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.objects...), d.running, d.stopped
}

// TestSharedInformerMutationDetectorWiring checks what the informer hands to
// its mutation detector (every added and updated object, in order, not
// deletions), that it runs the detector while it runs and stops it on
// Shutdown, and that KUBE_CACHE_MUTATION_DETECTOR selects the real detector.
func TestSharedInformerMutationDetectorWiring(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a")
			informer := newPodInformer(t, srv, q.useDeltaFIFO, 0)
			_, isNoop := informer.cacheMutationDetector.(noopMutationDetector)
			require.True(t, isNoop, "disabled without the environment variable")
			detector := &recordingMutationDetector{}
			informer.cacheMutationDetector = detector
			rec := &eventRecorder{}
			_, err := informer.AddEventHandler(rec)
			require.NoError(t, err)

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); informer.RunWithContext(ctx) }()
			t.Cleanup(func() { cancel(); <-done })
			waitUntilSynced(t, informer.HasSyncedChecker())
			srv.Create("b")
			srv.Update("a")
			srv.Delete("b")
			rec.waitN(t, 4)
			objects, running, _ := detector.snapshot()
			assert.True(t, running)
			assert.Equal(t, []string{"ns/a@1", "ns/b@2", "ns/a@3"}, objects)

			cancel()
			<-done
			_, _, stopped := detector.snapshot()
			assert.True(t, stopped, "the detector stops with the informer")
		})
	}

	t.Run("environment", func(t *testing.T) {
		t.Setenv(mutationDetectorEnv, "true")
		informer := newPodInformer(t, fakeapi.NewServer(false), false, 0)
		_, isReal := informer.cacheMutationDetector.(*mutationDetector)
		assert.True(t, isReal)
	})
}

// TestSharedInformerMutationDetectorFindsMutation runs the real detector
// (with a fake clock and a failure hook instead of its panic) and a handler
// that modifies a cached object in place.
func TestSharedInformerMutationDetectorFindsMutation(t *testing.T) {
	srv := fakeapi.NewServer(false)
	srv.Create("a")
	informer := newPodInformer(t, srv, false, 0)
	clk := testingclock.NewFakeClock(time.Unix(1000, 0))
	failures := &failureLog{}
	informer.cacheMutationDetector = newMutationDetector("*v1.Pod", clk, time.Second, time.Minute, failures.fail)
	allowed, mutated := make(chan struct{}), make(chan struct{})
	_, err := informer.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(obj interface{}) {
		// Mutate only while the detector waits for its next comparison,
		// which must not race with the mutation.
		<-allowed
		obj.(*v1.Pod).Labels = map[string]string{"mutated": "in place"}
		close(mutated)
	}})
	require.NoError(t, err)
	runInformer(t, informer)
	t.Cleanup(func() {
		select {
		case <-allowed:
		default:
			close(allowed)
		}
	})
	require.Eventually(t, clk.HasWaiters, waitTimeout, time.Millisecond)
	close(allowed)
	select {
	case <-mutated:
	case <-time.After(waitTimeout):
		t.Fatal("handler not called")
	}
	assert.Equal(t, 0, failures.count())
	clk.Step(time.Second)
	require.Eventually(t, func() bool { return failures.count() == 1 }, waitTimeout, time.Millisecond)
}
