package cache

import (
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache/internal/apply"
	"github.com/kinformer/kinformer/cache/internal/store"
)

// deltaReader tells the apply engine (cache/internal/apply) how to read a
// Delta and the Info objects of the queues.
func deltaReader() apply.Ops[Delta] {
	return apply.Ops[Delta]{
		Split: splitDelta,
		Type:  func(d Delta) string { return string(d.Type) },
		Deltas: func(obj any) ([]Delta, bool) {
			d, ok := obj.(Deltas)
			return d, ok
		},
		List: func(obj any) ([]any, []string, string, bool) {
			info, ok := obj.(ReplacedAllInfo)
			return info.Objects, info.keys, info.ResourceVersion, ok
		},
		IsSyncAll: func(obj any) bool {
			_, ok := obj.(SyncAllInfo)
			return ok
		},
		Bookmark: func(obj any) (string, bool, bool) {
			info, ok := obj.(BookmarkInfo)
			return info.ResourceVersion, info.listEnd, ok
		},
		IsTombstone: func(obj any) bool {
			_, ok := obj.(DeletedFinalStateUnknown)
			return ok
		},
		Tombstone: deltaOps{}.Tombstone,
	}
}

// splitDelta returns d's kind for the apply engine and its object.
func splitDelta(d Delta) (apply.Kind, any) {
	_, k := engineKinds(d.Type)
	return k, d.Object
}

// newDeltaApplier returns the applier of popped deltas into store that
// tells handler of every change: the Process and ProcessBatch functions of
// the informers of this package. Its rules, and where they differ from
// client-go's processDeltas, are the engine's (cache/internal/apply; see
// COMPATIBILITY.md).
func newDeltaApplier(logger klog.Logger, s Store, handler ResourceEventHandler) *apply.Applier[Delta] {
	return apply.New(deltaApplierConfig(logger, s, handler))
}

// deltaApplierConfig is the engine configuration of newDeltaApplier: a
// store of this package is written through its engine, a TransactionStore
// of the caller's through its Transaction.
func deltaApplierConfig(logger klog.Logger, s Store, handler ResourceEventHandler) apply.Config[Delta] {
	cfg := apply.Config[Delta]{
		Logger:  logger,
		Ops:     deltaReader(),
		Store:   s,
		Key:     DeletionHandlingMetaNamespaceKeyFunc,
		Handler: handler,
	}
	switch s := s.(type) {
	case *cache:
		cfg.Cache = s.applyPath()
	case TransactionStore:
		cfg.Transactor = transactor{s}
	}
	return cfg
}

// newInformerApplier returns the applier of an informer whose queue is
// queue and whose transform is transform (nil when none), telling handler
// of every change.
func newInformerApplier(logger klog.Logger, queue Queue, s Store, handler ResourceEventHandler, transform TransformFunc) *apply.Applier[Delta] {
	return apply.New(informerApplierConfig(logger, queue, s, handler, transform))
}

// informerApplierConfig is the engine configuration of newInformerApplier:
// it reuses the keys a RealFIFO computed when nothing transforms the
// objects between the queue and the store, and takes a DeltaFIFO's
// watermark.
func informerApplierConfig(logger klog.Logger, queue Queue, s Store, handler ResourceEventHandler, transform TransformFunc) apply.Config[Delta] {
	cfg := deltaApplierConfig(logger, s, handler)
	switch q := queue.(type) {
	case *RealFIFO:
		if transform == nil {
			// The queue keys objects as the store does (namespace/name,
			// or a tombstone's key).
			cfg.KeysOf = q.poppedKeys
		}
	case *DeltaFIFO:
		if q.wm != nil {
			cfg.QueueWatermark = q.poppedWatermark
		}
	}
	return cfg
}

// informerPop returns the pop of an informer's processing loop: queue's
// engine hands each popped batch or item straight to a's Deliver or
// DeliverItem. It returns nil for a queue of another package, which the
// controller then pops through the Queue interface.
func informerPop(queue Queue, a *apply.Applier[Delta]) func() error {
	switch q := queue.(type) {
	case *RealFIFO:
		return func() error { return q.q.PopBatch(a.Deliver, a.DeliverItem) }
	case *DeltaFIFO:
		return func() error {
			_, err := q.q.Pop(a.DeliverItem)
			return err
		}
	}
	return nil
}

// applyPath returns the apply engine's direct path into c.
func (c *cache) applyPath() *apply.Cache {
	return &apply.Cache{
		Map:                    c.engine,
		Key:                    c.key,
		Transform:              c.transformer,
		Watermark:              c.watermark,
		AdvanceResourceVersion: c.advanceResourceVersion,
		ResetResourceVersion:   c.resetResourceVersion,
		ReplaceKeyed:           c.replaceKeyed,
	}
}

// transactor is the apply engine's Transactor over a TransactionStore of
// the caller's.
type transactor struct {
	s TransactionStore
}

// Transact implements apply.Transactor.
func (t transactor) Transact(writes []store.Write) (applied []int, errs int, err error) {
	txns := make([]Transaction, len(writes))
	for i, w := range writes {
		txns[i] = Transaction{Type: TransactionType(w.Op), Object: w.Object}
	}
	txErr := t.s.Transaction(txns...)
	if txErr == nil {
		return nil, 0, nil
	}
	return txErr.SuccessfulIndices, len(txErr.Errors), txErr
}

// newApplier returns the applier of the running informer s, whose queue is
// queue and whose transform is transform: its Deliver and DeliverItem
// apply each popped item under s.blockDeltas, collect the notifications in
// s.notes and hand them to s.processor.
func (s *sharedIndexInformer) newApplier(logger klog.Logger, queue Queue, transform TransformFunc) *apply.Applier[Delta] {
	cfg := informerApplierConfig(logger, queue, s.indexer, &s.notes, transform)
	cfg.Delivery = &apply.Delivery[Delta]{
		Lock:   &s.blockDeltas,
		Notes:  &s.notes,
		To:     s.processor,
		Popped: s.popped,
	}
	return apply.New(cfg)
}

// popped is told, under blockDeltas, of every item the informer's applier
// applied: its deltas (nil for an item that is not Deltas) and how many
// reached the cache.
func (s *sharedIndexInformer) popped(deltas []Delta, applied uint64) {
	s.noteRelistPiecesLocked(deltas)
	s.stats.CountDeltas(applied)
}
