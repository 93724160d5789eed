package cache

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache/internal/fanout"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// TestHandlerSyncsWhileStayingBusy checks that a registration syncs as soon
// as its handler has processed the initial list, even when the handler never
// goes idle afterwards (here: it blocks on the first later event). A
// listener that only learnt of the informer's sync between two batches
// would never sync.
func TestHandlerSyncsWhileStayingBusy(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := fakeapi.NewServer(false)
			srv.Create("a")
			informer := newPodInformer(t, srv, q.useDeltaFIFO, 0)
			releaseInitial, releaseLater := make(chan struct{}), make(chan struct{})
			busy := ResourceEventHandlerDetailedFuncs{AddFunc: func(obj interface{}, initial bool) {
				if initial {
					<-releaseInitial
					return
				}
				<-releaseLater
			}}
			// busy is registered first, so distribution queues every event
			// for it before it queues it for rec.
			busyReg, err := informer.AddEventHandler(busy)
			require.NoError(t, err)
			rec := &eventRecorder{}
			_, err = informer.AddEventHandler(rec)
			require.NoError(t, err)
			runInformer(t, informer)
			t.Cleanup(func() { close(releaseLater) })

			waitUntilSynced(t, informer.HasSyncedChecker())
			srv.Create("b")
			rec.waitN(t, 2)
			// busy finishes its initial add while "b" is already queued for
			// it, and then blocks on "b".
			close(releaseInitial)
			waitUntilSynced(t, busyReg.HasSyncedChecker())
		})
	}
}

// TestHandlerProcessorCoalescesByTheInformersKeys: the fan-out engine of an
// informer coalesces by DeletionHandlingMetaNamespaceKeyFunc's keys (a
// DeletedFinalStateUnknown under its object's key) and prefers a real final
// state over a DeletedFinalStateUnknown.
func TestHandlerProcessorCoalescesByTheInformersKeys(t *testing.T) {
	p := newHandlerProcessor(clock.RealClock{}, nil)
	rec := &eventRecorder{}
	l, err := p.NewListener(fanout.ListenerConfig{Logger: klog.Background(), Handler: rec, Name: "rec", Buffer: fanout.BufferCoalesceByKey})
	require.NoError(t, err)
	l.Enqueue([]fanout.Notification{
		{Kind: fanout.Update, OldObj: newPod("d", "1"), NewObj: newPod("d", "2")},
		{Kind: fanout.Delete, OldObj: DeletedFinalStateUnknown{Key: "ns/d", Obj: newPod("d", "2")}},
		{Kind: fanout.Delete, OldObj: DeletedFinalStateUnknown{Key: "ns/g"}},
		{Kind: fanout.Delete, OldObj: newPod("g", "4")},
	}, true)
	p.Add(l)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	assert.Equal(t, []string{"delete tombstone(ns/d@2)", "delete ns/g@4"}, rec.waitN(t, 2))
}
