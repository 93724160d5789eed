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
// queue and whose transform is transform (nil when none): it reuses the
// keys a RealFIFO computed when nothing transforms the objects between the
// queue and the store, and takes a DeltaFIFO's watermark.
func newInformerApplier(logger klog.Logger, queue Queue, s Store, handler ResourceEventHandler, transform TransformFunc) *apply.Applier[Delta] {
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
	return apply.New(cfg)
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

// handleDeltas is the controller's Process function: the popped deltas
// are applied (the informer's applier, cache/internal/apply), then the
// notifications they made are handed to the handlers.
func (s *sharedIndexInformer) handleDeltas(obj interface{}, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	err := s.applier.Process(obj, isInInitialList)
	if d, ok := obj.(Deltas); ok {
		s.noteRelistPiecesLocked(d)
		s.stats.CountDeltas(s.applier.Applied(d))
	} else {
		s.stats.CountDeltas(s.applier.Applied(nil) + 1)
	}
	s.notes.Flush(s.processor)
	return err
}

// handleBatch is the controller's ProcessBatch function: handleDeltas for
// a batch.
func (s *sharedIndexInformer) handleBatch(deltas []Delta, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	err := s.applier.ProcessBatch(deltas, isInInitialList)
	s.noteRelistPiecesLocked(deltas)
	s.stats.CountDeltas(s.applier.Applied(deltas))
	s.notes.Flush(s.processor)
	return err
}
