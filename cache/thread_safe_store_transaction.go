package cache

import (
	"fmt"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// storeTxnFailure is the error of the write at position pos of a batch.
type storeTxnFailure struct {
	pos int
	err error
}

// transaction applies txns under one lock acquisition and returns the
// failed writes. The newest resource version becomes that of the last
// applied write whose object has metadata. When observe is not nil it is
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
		var err error
		switch t.Type {
		case TransactionTypeAdd, TransactionTypeUpdate:
			_, _, err = m.putLocked(t.Key, t.Object)
		case TransactionTypeDelete:
			m.deleteLocked(t.Key)
		default:
			err = fmt.Errorf("unknown transaction type %q for key %q", t.Type, t.Key)
		}
		if err != nil {
			failures = append(failures, storeTxnFailure{pos: i, err: err})
			continue
		}
		lastApplied = i
	}
	for i := lastApplied; i >= 0 && !m.watermark; i-- {
		if len(failures) > 0 && storeTxnFailed(failures, i) {
			continue
		}
		if rv, ok := storeResourceVersionOf(txns[i].Object); ok {
			m.setRVLocked(rv)
			break
		}
	}
	return failures
}

func storeTxnFailed(failures []storeTxnFailure, pos int) bool {
	for _, f := range failures {
		if f.pos == pos {
			return true
		}
	}
	return false
}

// Transaction applies the writes under one lock; see
// ThreadSafeStoreWithTransaction.
func (m *threadSafeMap) Transaction(txns ...ThreadSafeStoreTransaction) {
	for _, f := range m.transaction(txns, nil) {
		utilruntime.HandleErrorWithLogger(klog.Background(), f.err, "Transaction write not applied", "key", txns[f.pos].Key)
	}
}
