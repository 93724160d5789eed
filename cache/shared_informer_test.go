package cache

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
)

// infRunInformer starts informer and registers cleanup that stops it and
// waits for Run to return.
func infRunInformer(t *testing.T, informer SharedInformer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(infTimeout):
			t.Error("informer did not stop")
		}
	})
}

func infNewInformer(t *testing.T, srv *infServer, useDeltaFIFO bool, resync time.Duration) *sharedIndexInformer {
	t.Helper()
	t.Cleanup(srv.stopWatches)
	return NewSharedIndexInformerWithOptions(srv.lw(), &v1.Pod{}, SharedIndexInformerOptions{
		ResyncPeriod: resync,
		Indexers:     Indexers{NamespaceIndex: MetaNamespaceIndexFunc},
		UseDeltaFIFO: useDeltaFIFO,
	}).(*sharedIndexInformer)
}

func infWaitSynced(t *testing.T, checkers ...DoneChecker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), infTimeout)
	defer cancel()
	require.True(t, WaitFor(ctx, "", checkers...), "not synced")
}

func TestSharedInformerWatchEventSequence(t *testing.T) {
	for _, q := range infQueueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := newInfServer()
			srv.create("a")
			srv.create("b")
			informer := infNewInformer(t, srv, q.useDeltaFIFO, 0)
			rec := &infRecorder{}
			reg, err := informer.AddEventHandler(rec)
			require.NoError(t, err)
			assert.False(t, reg.HasSynced())
			infRunInformer(t, informer)
			infWaitSynced(t, informer.HasSyncedChecker(), reg.HasSyncedChecker())
			assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/b@2 initial=true"}, rec.get())

			srv.create("c")
			srv.update("a")
			srv.remove("b")
			srv.update("c")
			got := rec.waitN(t, 6)
			assert.Equal(t, []string{
				"add ns/a@1 initial=true",
				"add ns/b@2 initial=true",
				"add ns/c@3 initial=false",
				"update ns/a@1 -> ns/a@4",
				"delete ns/b@5",
				"update ns/c@3 -> ns/c@6",
			}, got)
			assert.Equal(t, []string{"ns/a@4", "ns/c@6"}, infStoreContents(informer.GetStore()))
			byNS, err := informer.GetIndexer().ByIndex(NamespaceIndex, "ns")
			require.NoError(t, err)
			assert.Len(t, byNS, 2)
			require.Eventually(t, func() bool { return informer.LastSyncResourceVersion() == "6" }, infTimeout, time.Millisecond)
			assert.Equal(t, "6", informer.GetController().LastSyncResourceVersion())
		})
	}
}
