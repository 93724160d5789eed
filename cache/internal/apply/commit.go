package apply

import (
	"errors"
	"slices"

	"github.com/kinformer/kinformer/cache/internal/store"
)

// A batch of adds, updates and deletes, applied in one transaction: to the
// store engine directly for an own store, through Transactor or one call per
// delta otherwise.

// commit applies deltas, all adds, updates and deletes, in one
// transaction, then tells the handler of the applied ones. keys are the
// deltas' keys when the queue knows them, else nil.
func (a *Applier[D]) commit(deltas []D, keys []string, isInInitialList bool) {
	if len(deltas) == 0 {
		return
	}
	if a.cache != nil {
		a.commitOwn(deltas, keys, isInInitialList)
		return
	}
	a.commitForeign(deltas, isInInitialList)
}

// observeWrite records, for the write at position i of a transaction of
// the own store, what its key held before.
func (a *Applier[D]) observeWrite(i int, prev any, existed bool) {
	a.olds[i] = prev
	a.existed[i] = existed
}

// commitOwn is commit for the package's own store: the writes go to its
// engine in one Transaction, which reports what each key held before, so
// that no Get (and no key computation, when keys are known) is needed.
func (a *Applier[D]) commitOwn(deltas []D, keys []string, isInInitialList bool) {
	c := a.cache
	n := len(deltas)
	writes := slices.Grow(a.writes[:0], n)
	pos := slices.Grow(a.pos[:0], n)
	a.olds = slices.Grow(a.olds[:0], n)[:n]
	a.existed = slices.Grow(a.existed[:0], n)[:n]
	defer func() {
		clear(writes)
		clear(a.olds)
		a.writes, a.pos, a.olds, a.existed = writes[:0], pos[:0], a.olds[:0], a.existed[:0]
	}()
	var errs []error
	for i, d := range deltas {
		kind, obj := a.ops.Split(d)
		op := store.OpUpdate
		if kind == Deleted {
			op = store.OpDelete
		}
		var key string
		var err error
		if keys != nil {
			key = keys[i]
		} else {
			key, err = c.Key(obj)
		}
		if err == nil && op == store.OpUpdate && c.Transform != nil {
			if obj, err = c.Transform(obj); err != nil {
				err = transformError(key, err)
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		writes = append(writes, store.Write{Op: op, Key: key, Object: obj})
		pos = append(pos, i)
	}
	failures := c.Map.Transaction(writes, a.observe)
	failed := len(errs)
	for _, f := range failures {
		errs = append(errs, f.Err)
		if !f.Applied {
			failed++
		}
	}
	if failed > 0 {
		a.rejected.Add(int64(failed))
		a.logger.Error(errors.Join(errs...), "Some objects could not be applied to the informer's cache and are skipped", "failed", failed, "batch", n)
	}
	if unindexed := len(errs) - failed; unindexed > 0 {
		a.unindexedObjects(unindexed, errors.Join(errs...))
	}
	next := 0
	for j := range writes {
		if next < len(failures) && failures[next].Pos == j {
			applied := failures[next].Applied
			next++
			if !applied {
				continue
			}
		}
		w := &writes[j]
		obj := w.Object
		if c.Transform != nil {
			// The handler is given the object as popped.
			_, obj = a.ops.Split(deltas[pos[j]])
		}
		switch {
		case w.Op == store.OpDelete:
			a.handler.OnDelete(obj)
		case a.existed[j]:
			a.handler.OnUpdate(a.olds[j], obj)
		default:
			a.handler.OnAdd(obj, isInInitialList)
		}
	}
}

// commitForeign is commit for a Transactor: each stored object's previous
// state is read first (to tell an add from an update), then the writes go
// in one transaction.
func (a *Applier[D]) commitForeign(deltas []D, isInInitialList bool) {
	writes, olds := a.writes[:0], a.olds[:0]
	defer func() {
		clear(writes)
		clear(olds)
		a.writes, a.olds = writes[:0], olds[:0]
	}()
	for _, d := range deltas {
		kind, obj := a.ops.Split(d)
		if kind == Deleted {
			writes = append(writes, store.Write{Op: store.OpDelete, Object: obj})
			olds = append(olds, nil)
			continue
		}
		old, exists, err := a.store.Get(obj)
		if err != nil {
			a.reject(err, a.ops.Type(d), obj)
			continue
		}
		if exists {
			writes = append(writes, store.Write{Op: store.OpUpdate, Object: obj})
			olds = append(olds, old)
		} else {
			writes = append(writes, store.Write{Op: store.OpAdd, Object: obj})
			olds = append(olds, nil)
		}
	}
	applied, errs, err := a.tx.Transact(writes)
	if err == nil {
		for i := range writes {
			a.notify(&writes[i], olds[i], isInInitialList)
		}
		return
	}
	failed := len(writes) - len(applied)
	if failed > 0 {
		a.rejected.Add(int64(failed))
		a.logger.Error(err, "Some objects could not be applied to the informer's cache and are skipped", "failed", failed, "batch", len(writes))
	}
	if unindexed := errs - failed; unindexed > 0 {
		a.unindexedObjects(unindexed, err)
	}
	for _, i := range applied {
		if i >= 0 && i < len(writes) {
			a.notify(&writes[i], olds[i], isInInitialList)
		}
	}
}

// notify tells the handler of an applied write of commitForeign.
func (a *Applier[D]) notify(w *store.Write, old any, isInInitialList bool) {
	switch w.Op {
	case store.OpAdd:
		a.handler.OnAdd(w.Object, isInInitialList)
	case store.OpUpdate:
		a.handler.OnUpdate(old, w.Object)
	case store.OpDelete:
		a.handler.OnDelete(w.Object)
	}
}
