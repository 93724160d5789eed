package cache

import (
	"fmt"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// storeTxnFailure is the error of the write at position pos of a batch.
// applied says whether the write was applied all the same: an object stored
// outside the indices whose functions failed on it.
type storeTxnFailure struct {
	pos     int
	err     error
	applied bool
}

// transaction applies txns under one lock acquisition and returns the
// writes that failed and those applied with an index error. The newest
// resource version becomes that of the last applied write whose object has
// metadata. When observe is not nil it is
// called, under the lock, before each write with the write's position and
// the object its key held until then.
func (m *threadSafeMap) transaction(txns []ThreadSafeStoreTransaction, observe func(i int, prev interface{}, existed bool)) []storeTxnFailure {
	if len(txns) == 0 {
		return nil
	}
	var failures []storeTxnFailure
	m.lock.Lock()
	defer m.lock.Unlock()
	lastApplied := -1
	for i := range txns {
		t := &txns[i]
		if observe != nil {
			prev, existed := m.items[t.Key]
			observe(i, storedObject(prev), existed)
		}
		switch t.Type {
		case TransactionTypeAdd, TransactionTypeUpdate:
			if _, _, err := m.putLocked(t.Key, t.Object); err != nil {
				// Stored outside the indices that failed on it.
				failures = append(failures, storeTxnFailure{pos: i, err: err, applied: true})
			}
		case TransactionTypeDelete:
			m.deleteLocked(t.Key)
		default:
			err := fmt.Errorf("unknown transaction type %q for key %q", t.Type, t.Key)
			failures = append(failures, storeTxnFailure{pos: i, err: err})
			continue
		}
		lastApplied = i
	}
	for i := lastApplied; i >= 0 && !m.watermark; i-- {
		if len(failures) > 0 && storeTxnNotApplied(failures, i) {
			continue
		}
		if rv, ok := storeResourceVersionOf(txns[i].Object); ok {
			m.setRVLocked(rv)
			break
		}
	}
	return failures
}

// storeTxnNotApplied reports whether the write at pos failed without being
// applied.
func storeTxnNotApplied(failures []storeTxnFailure, pos int) bool {
	for _, f := range failures {
		if f.pos == pos {
			return !f.applied
		}
	}
	return false
}

// Transaction applies the writes under one lock; see
// ThreadSafeStoreWithTransaction.
func (m *threadSafeMap) Transaction(txns ...ThreadSafeStoreTransaction) {
	for _, f := range m.transaction(txns, nil) {
		msg := "Transaction write not applied"
		if f.applied {
			msg = "Object stored outside the indices that failed on it"
		}
		utilruntime.HandleErrorWithLogger(klog.Background(), f.err, msg, "key", txns[f.pos].Key)
	}
}
