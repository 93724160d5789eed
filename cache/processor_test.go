package cache

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHandlerSyncsWhileStayingBusy checks that a registration syncs as soon
// as its handler has processed the initial list, even when the handler never
// goes idle afterwards (here: it blocks on the first later event). A
// listener that only learnt of the informer's sync between two batches
// would never sync.
func TestHandlerSyncsWhileStayingBusy(t *testing.T) {
	for _, q := range infQueueKinds {
		t.Run(q.name, func(t *testing.T) {
			srv := newInfServer()
			srv.create("a")
			informer := infNewInformer(t, srv, q.useDeltaFIFO, 0)
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
			rec := &infRecorder{}
			_, err = informer.AddEventHandler(rec)
			require.NoError(t, err)
			infRunInformer(t, informer)
			t.Cleanup(func() { close(releaseLater) })

			infWaitSynced(t, informer.HasSyncedChecker())
			srv.create("b")
			rec.waitN(t, 2)
			// busy finishes its initial add while "b" is already queued for
			// it, and then blocks on "b".
			close(releaseInitial)
			infWaitSynced(t, busyReg.HasSyncedChecker())
		})
	}
}
