package gvrfactory

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listadmission"
)

// TestStalenessProbeInterval checks that the factory's informers probe at
// the interval its options set, with LISTs, while nothing confirms the cache
// (the fake client sends no bookmarks).
func TestStalenessProbeInterval(t *testing.T) {
	client, _ := newFakeClient(newObject(widgetsGVR, "Widget", "ns", "a", nil))
	factory := newFactory(client, func(o *Options) { o.Informer.StalenessProbeInterval = 20 * time.Millisecond })
	informer := factory.ForResource(widgetsGVR).Informer()
	ctx, cancel := context.WithCancel(context.Background())
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	require.True(t, factory.WaitForCacheSync(ctx.Done())[widgetsGVR])
	require.Eventually(t, func() bool {
		st, _ := cache.GetInformerStatus(informer)
		return st.StalenessProbes >= 2
	}, waitTimeout, pollInterval)
	st, _ := cache.GetInformerStatus(informer)
	// The fake client records no limit: count the LISTs after the initial
	// one (nothing else relists here).
	require.GreaterOrEqual(t, countLists(client, widgetsGVR), 1+int(st.StalenessProbes), "every probe is a LIST")
	require.Equal(t, uint64(1), st.Lists[cache.RelistInitial])
}

// TestListAdmissionSharedByTwoFactories: a list admission shared by two
// factories admits the lists of both.
func TestListAdmissionSharedByTwoFactories(t *testing.T) {
	a := listadmission.New(listadmission.Options{MaxConcurrent: 1})
	client, _ := newFakeClient(newObject(widgetsGVR, "Widget", "a", "w1", nil), newObject(podsGVR, "Pod", "a", "p1", nil))
	first := newFactory(client, func(o *Options) {
		o.ListAdmission, o.ListAdmissionSet = a, true
		o.Prioritize(3, podsGVR)
	})
	second := newFactory(client, func(o *Options) { o.ListAdmission, o.ListAdmissionSet = a, true })
	first.ForResource(widgetsGVR).Informer()
	first.ForResource(podsGVR).Informer()
	second.ForResource(widgetsGVR).Informer()
	stop := make(chan struct{})
	defer second.Shutdown()
	defer first.Shutdown()
	defer close(stop)
	first.Start(stop)
	second.Start(stop)
	require.Equal(t, map[schema.GroupVersionResource]bool{widgetsGVR: true, podsGVR: true}, first.WaitForCacheSync(stop))
	require.Equal(t, map[schema.GroupVersionResource]bool{widgetsGVR: true}, second.WaitForCacheSync(stop))
	s := a.Stats()
	assert.Equal(t, uint64(3), s.Admitted)
	assert.Equal(t, 1, s.PeakInFlight)
}

// TestListAdmissionWithPriority: the factory's informers list through the
// ListAdmission given, with their priority.
func TestListAdmissionWithPriority(t *testing.T) {
	a := listadmission.New(listadmission.Options{MaxConcurrent: 1})
	client, _ := newFakeClient(newObject(podsGVR, "Pod", "a", "p1", nil))
	factory := newFactory(client, func(o *Options) {
		o.ListAdmission, o.ListAdmissionSet = a, true
		o.Prioritize(2, podsGVR)
	})
	factory.ForResource(podsGVR)
	ctx, cancel := context.WithCancel(context.Background())
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	require.True(t, factory.WaitForCacheSync(ctx.Done())[podsGVR])
	s := a.Stats()
	assert.Equal(t, uint64(1), s.Admitted)
	assert.Equal(t, 0, s.InFlight)
}
