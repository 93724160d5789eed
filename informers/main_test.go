package informers_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
)

// TestMain fails the test binary when a test leaves a goroutine running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	smokeNamespace = "smoke"
	waitTimeout    = 20 * time.Second
	pollInterval   = 2 * time.Millisecond
)

// watchCounter records which resources the fake clientset has been asked to
// watch, so that tests create objects only once the informers' watches are
// open (the fake clientset does not replay events missed between LIST and
// WATCH).
type watchCounter struct {
	mu     sync.Mutex
	counts map[schema.GroupVersionResource]int
}

// countWatches installs a pass-through watch reactor on client.
func countWatches(client *fake.Clientset) *watchCounter {
	w := &watchCounter{counts: map[schema.GroupVersionResource]int{}}
	client.PrependWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		w.mu.Lock()
		w.counts[action.GetResource()]++
		w.mu.Unlock()
		return false, nil, nil
	})
	return w
}

func (w *watchCounter) count(gvr schema.GroupVersionResource) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts[gvr]
}

// waitFor blocks until every gvr has been watched at least once.
func (w *watchCounter) waitFor(t *testing.T, gvrs ...schema.GroupVersionResource) {
	t.Helper()
	require.Eventually(t, func() bool {
		for _, gvr := range gvrs {
			if w.count(gvr) == 0 {
				return false
			}
		}
		return true
	}, waitTimeout, pollInterval, "watches of %v not started", gvrs)
}

func smokeMeta(name string, namespaced bool) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: name}
	if namespaced {
		m.Namespace = smokeNamespace
	}
	return m
}

// smokeCase is one resource of a generated smoke test.
type smokeCase struct {
	gvr      schema.GroupVersionResource
	informer cache.SharedIndexInformer
	create   func(ctx context.Context, name string) error
	get      func(name string) (metav1.Object, error)
}

// runSmokeCases checks, for every case of one group/version on one shared
// factory: ForResource returns the typed accessor's informer; an object
// created before Start arrives through LIST and one created after the
// watches opened arrives through WATCH, both found by the lister, which
// returns NotFound for anything else.
func runSmokeCases(t *testing.T, client *fake.Clientset, factory informers.SharedInformerFactory, cases []smokeCase) {
	t.Helper()
	watches := countWatches(client)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer factory.Shutdown()
	defer cancel()

	gvrs := make([]schema.GroupVersionResource, 0, len(cases))
	for _, c := range cases {
		generic, err := factory.ForResource(c.gvr)
		require.NoError(t, err, c.gvr)
		require.True(t, generic.Informer() == c.informer, "ForResource(%v) returned another informer", c.gvr)
		require.NoError(t, c.create(ctx, "listed"), c.gvr)
		gvrs = append(gvrs, c.gvr)
	}
	factory.StartWithContext(ctx)
	synced := factory.WaitForCacheSyncWithContext(ctx)
	require.NoError(t, synced.AsError())
	require.Len(t, synced.Synced, len(cases))
	watches.waitFor(t, gvrs...)

	for _, c := range cases {
		obj, err := c.get("listed")
		require.NoError(t, err, c.gvr)
		require.Equal(t, "listed", obj.GetName(), c.gvr)
		_, err = c.get("watched")
		require.True(t, apierrors.IsNotFound(err), "%v: want NotFound, got %v", c.gvr, err)
		require.NoError(t, c.create(ctx, "watched"), c.gvr)
	}
	for _, c := range cases {
		require.Eventually(t, func() bool {
			obj, err := c.get("watched")
			return err == nil && obj.GetName() == "watched"
		}, waitTimeout, pollInterval, "%v: watched object never reached the lister", c.gvr)
	}
}
