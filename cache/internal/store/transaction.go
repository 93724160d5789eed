package store

import (
	"fmt"
)

// The operations of a Write. They are the names of client-go's transaction
// types, so that a caller holding one converts it without a table.
const (
	// OpAdd stores the Write's object under its key, as Put does.
	OpAdd = "Add"
	// OpUpdate stores the Write's object under its key, as Put does.
	OpUpdate = "Update"
	// OpDelete removes the Write's key, as Delete does.
	OpDelete = "Delete"
)

// Write is one write of a Transaction batch.
type Write struct {
	// Op is OpAdd, OpUpdate or OpDelete; any other value makes the write
	// fail, unapplied.
	Op string
	// Key is the key written.
	Key string
	// Object is the object stored, or for OpDelete the object deleted
	// (it may be nil or a tombstone), whose resource version counts as
	// the write's.
	Object any
}

// WriteFailure is the error of the write at position Pos of a Transaction
// batch. Applied says whether the write was applied all the same: an
// object stored outside the indices whose functions failed on it (Err
// then satisfies IsIndexError). A write not applied changed nothing.
type WriteFailure struct {
	Pos     int
	Err     error
	Applied bool
}

// Transaction applies writes in order under one acquisition of the write
// lock, so readers never observe part of the batch, and returns, in order
// of position, the writes that failed and those applied with an index
// error (nil when there are none). A write of an unknown Op is skipped. The
// recorded resource version becomes that of the last applied write whose
// object has metadata, unless the store keeps a watermark. When observe is
// not nil it is called, under the lock, before each write with the write's
// position and the object its key held until then (nil and false when
// none); it must not call the store.
func (m *Map) Transaction(writes []Write, observe func(i int, prev any, existed bool)) []WriteFailure {
	return TransactionOf(m, writes, writeOf, observe)
}

// writeOf is the write function of a batch of Writes.
func writeOf(w *Write) Write { return *w }

// TransactionOf is Transaction for a batch held in the caller's own type,
// so that the caller need not copy it into Writes: write returns the Write
// that an element of batch stands for. It is called under the lock and
// must not call the store.
func TransactionOf[W any](m *Map, batch []W, write func(*W) Write, observe func(i int, prev any, existed bool)) []WriteFailure {
	if len(batch) == 0 {
		return nil
	}
	var failures []WriteFailure
	m.lock.Lock()
	defer m.lock.Unlock()
	lastApplied := -1
	for i := range batch {
		w := write(&batch[i])
		if observe != nil {
			prev, existed := m.items[w.Key]
			observe(i, storedObject(prev), existed)
		}
		switch w.Op {
		case OpAdd, OpUpdate:
			if _, _, err := m.putLocked(w.Key, w.Object); err != nil {
				// Stored outside the indices that failed on it.
				failures = append(failures, WriteFailure{Pos: i, Err: err, Applied: true})
			}
		case OpDelete:
			m.deleteLocked(w.Key)
		default:
			err := fmt.Errorf("unknown transaction type %q for key %q", w.Op, w.Key)
			failures = append(failures, WriteFailure{Pos: i, Err: err})
			continue
		}
		lastApplied = i
	}
	for i := lastApplied; i >= 0 && !m.watermark; i-- {
		if len(failures) > 0 && notApplied(failures, i) {
			continue
		}
		if rv, ok := resourceVersionOf(write(&batch[i]).Object); ok {
			m.setRVLocked(rv)
			break
		}
	}
	return failures
}

// notApplied reports whether the write at pos failed without being
// applied.
func notApplied(failures []WriteFailure, pos int) bool {
	for _, f := range failures {
		if f.Pos == pos {
			return !f.Applied
		}
	}
	return false
}
