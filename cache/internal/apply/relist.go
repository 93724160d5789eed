package apply

import (
	"errors"
	"slices"
	"strings"

	"github.com/kinformer/kinformer/cache/internal/store"
)

// A complete list, applied at once: the store swapped in one step, then the
// handler told of every vanished and every listed object.

// vanishedKey is a cached key a list no longer has, with its last state.
type vanishedKey struct {
	key string
	obj any
}

// replaceAll applies a whole list atomically: the store is swapped in one
// step and only then is the handler told what changed: a tombstone delete
// for every key that vanished, in key order, then an add or update for
// every listed object, in list order. Each key is computed once: the
// queue's (queueKeys) when it has them and KeysOf is set, else with the
// store's key function.
func (a *Applier[D]) replaceAll(objects []any, queueKeys []string, rv, what string, isInInitialList bool) {
	type change struct {
		obj     any
		old     any
		existed bool
	}
	c := a.cache
	keyOf := a.key
	if c != nil {
		keyOf = c.Key
	}
	// Vanished keys are looked for only when something was cached (never
	// on the initial list).
	cachedKeys := a.store.ListKeys()
	var listed map[string]struct{}
	if len(cachedKeys) > 0 {
		listed = make(map[string]struct{}, len(objects))
	}
	var keys []string
	if c != nil {
		keys = make([]string, 0, len(objects))
	}
	changes := make([]change, 0, len(objects))
	all := objects
	filtered := false
	if a.keysOf == nil || len(queueKeys) != len(all) {
		queueKeys = nil
	}
	for i, obj := range all {
		var key string
		var err error
		if queueKeys != nil && queueKeys[i] != "" {
			key = queueKeys[i]
		} else {
			key, err = keyOf(obj)
		}
		if err != nil {
			a.reject(err, what, obj)
			if !filtered {
				// First bad object: go on with a copy that leaves it out.
				objects = slices.Clone(all[:i])
				filtered = true
			}
			continue
		}
		if filtered {
			objects = append(objects, obj)
		}
		if c != nil {
			keys = append(keys, key)
		}
		if listed == nil {
			changes = append(changes, change{obj: obj})
			continue
		}
		listed[key] = struct{}{}
		old, exists, err := a.store.GetByKey(key)
		changes = append(changes, change{obj: obj, old: old, existed: err == nil && exists})
	}

	var vanished []vanishedKey
	for _, key := range cachedKeys {
		if _, ok := listed[key]; ok {
			continue
		}
		old, exists, err := a.store.GetByKey(key)
		if err != nil || !exists {
			old = nil
		}
		vanished = append(vanished, vanishedKey{key: key, obj: old})
	}
	listed = nil
	slices.SortFunc(vanished, func(x, y vanishedKey) int { return strings.Compare(x.key, y.key) })

	var err error
	if c != nil {
		err = c.ReplaceKeyed(keys, objects, rv)
	} else {
		err = a.store.Replace(objects, rv)
	}
	var failures *store.IndexFailures
	switch {
	case errors.As(err, &failures):
		// The whole list is applied; some objects are outside an index.
		a.unindexedObjects(failures.Total(), err)
	case err != nil:
		// Only a store of the caller's, or a transform of the store's own,
		// fails a whole list.
		a.rejected.Add(1)
		a.listNotApplied = true
		a.logger.Error(err, "Relist could not be applied to the informer's cache", "resourceVersion", rv, "objects", len(objects))
		return
	}
	a.derivedDeletes += uint64(len(vanished))
	for _, v := range vanished {
		a.handler.OnDelete(a.ops.Tombstone(v.key, v.obj))
	}
	for _, c := range changes {
		if c.existed {
			a.handler.OnUpdate(c.old, c.obj)
		} else {
			a.handler.OnAdd(c.obj, isInInitialList)
		}
	}
}
