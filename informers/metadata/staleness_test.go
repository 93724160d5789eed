package metadatainformer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kinformer/kinformer/cache"
	metadatainformer "github.com/kinformer/kinformer/informers/metadata"
)

// TestWithStalenessProbeInterval checks that the factory's informers probe
// at the interval it sets, with LISTs, while nothing confirms the cache
// (the fake client sends no bookmarks).
func TestWithStalenessProbeInterval(t *testing.T) {
	client, _ := newFakeClient(t, podMetadata("a", "p1", nil))
	factory := metadatainformer.NewSharedInformerFactoryWithOptions(client, 0,
		metadatainformer.WithStalenessProbeInterval(20*time.Millisecond))
	informer := factory.ForResource(podsGVR).Informer()
	ctx, cancel := context.WithCancel(context.Background())
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx.Done())
	require.True(t, factory.WaitForCacheSync(ctx.Done())[podsGVR])
	require.Eventually(t, func() bool {
		st, _ := cache.GetInformerStatus(informer)
		return st.StalenessProbes >= 2
	}, waitTimeout, pollInterval)
	st, _ := cache.GetInformerStatus(informer)
	// The fake client records no limit: count the LISTs after the initial
	// one (nothing else relists here).
	require.GreaterOrEqual(t, countLists(client), 1+int(st.StalenessProbes), "every probe is a LIST")
	require.Equal(t, uint64(1), st.Lists[cache.RelistInitial])
}
