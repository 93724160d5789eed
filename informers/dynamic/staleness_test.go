package dynamicinformer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kinformer/kinformer/cache"
	dynamicinformer "github.com/kinformer/kinformer/informers/dynamic"
)

// TestWithStalenessProbeInterval checks that the factory's informers probe
// at the interval it sets, with LISTs, while nothing confirms the cache
// (the fake client sends no bookmarks).
func TestWithStalenessProbeInterval(t *testing.T) {
	client, _ := newFakeClient(newObject(widgetsGVR, "Widget", "ns", "a", nil))
	factory := dynamicinformer.NewDynamicSharedInformerFactoryWithOptions(client, 0,
		dynamicinformer.WithStalenessProbeInterval(20*time.Millisecond))
	informer := factory.ForResource(widgetsGVR).Informer()
	ctx, cancel := context.WithCancel(context.Background())
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	require.True(t, cache.WaitForCacheSync(ctx.Done(), informer.HasSynced))
	require.Eventually(t, func() bool {
		st, _ := cache.GetInformerStatus(informer)
		return st.StalenessProbes >= 2
	}, waitTimeout, pollInterval)
	st, _ := cache.GetInformerStatus(informer)
	lists := 0
	for _, a := range client.Actions() {
		if a.GetVerb() == "list" && a.GetResource() == widgetsGVR {
			lists++
		}
	}
	// The fake client records no limit: count the LISTs after the initial
	// one (nothing else relists here).
	require.GreaterOrEqual(t, lists, 1+int(st.StalenessProbes), "every probe is a LIST")
	require.Equal(t, uint64(1), st.Lists[cache.RelistInitial])
}
