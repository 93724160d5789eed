package cache

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kinformer/kinformer/cache/internal/fanout"
)

// handleDeltas is the controller's Process function.
func (s *sharedIndexInformer) handleDeltas(obj interface{}, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	err := s.applier.process(obj, isInInitialList)
	if d, ok := obj.(Deltas); ok {
		s.noteRelistPiecesLocked(d)
		s.stats.CountDeltas(s.applier.appliedDeltas(d))
	} else {
		s.stats.CountDeltas(s.applier.appliedDeltas(nil) + 1)
	}
	s.flushLocked()
	return err
}

// handleBatch is the controller's ProcessBatch function.
func (s *sharedIndexInformer) handleBatch(deltas []Delta, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	err := s.applier.processBatch(deltas, isInInitialList)
	s.noteRelistPiecesLocked(deltas)
	s.stats.CountDeltas(s.applier.appliedDeltas(deltas))
	s.flushLocked()
	return err
}

// flushLocked hands the collected notifications to the listeners. The
// caller holds blockDeltas.
func (s *sharedIndexInformer) flushLocked() {
	s.processor.Distribute(s.batch.notes, s.batch.hasResync)
	s.batch.reset()
}

// notificationBatch collects the notifications of one popped batch. It is
// the ResourceEventHandler the shared informer's deltaApplier reports to;
// the collected batch is then handed to every listener at once.
type notificationBatch struct {
	notes []fanout.Notification
	// hasResync is true if any note is a resync note.
	hasResync bool
	// detector, when not nil, is given every added or updated object, as
	// the objects the handlers will see (see NewCacheMutationDetector).
	detector MutationDetector
}

func (b *notificationBatch) OnAdd(obj interface{}, isInInitialList bool) {
	if b.detector != nil {
		b.detector.AddObject(obj)
	}
	b.notes = append(b.notes, fanout.Notification{Kind: fanout.Add, Initial: isInInitialList, NewObj: obj})
}

func (b *notificationBatch) OnUpdate(oldObj, newObj interface{}) {
	// Equal resource versions mean nothing changed (a resync, or an
	// unchanged object seen again by a relist).
	resync := false
	if n, err := meta.Accessor(newObj); err == nil {
		if o, err := meta.Accessor(oldObj); err == nil {
			resync = n.GetResourceVersion() == o.GetResourceVersion()
		}
	}
	b.hasResync = b.hasResync || resync
	if b.detector != nil {
		b.detector.AddObject(newObj)
	}
	b.notes = append(b.notes, fanout.Notification{Kind: fanout.Update, Resync: resync, OldObj: oldObj, NewObj: newObj})
}

func (b *notificationBatch) OnDelete(obj interface{}) {
	b.notes = append(b.notes, fanout.Notification{Kind: fanout.Delete, OldObj: obj})
}

// reset empties the batch for reuse, dropping object references and, after
// an unusually large batch, the backing array.
func (b *notificationBatch) reset() {
	if cap(b.notes) > 4096 {
		b.notes = nil
	} else {
		clear(b.notes)
		b.notes = b.notes[:0]
	}
	b.hasResync = false
}
