package cache

import "sync"

// UndeltaStore is a Store that, after every change (Add, Update, Delete,
// Replace), hands the complete new content to PushFunc. It turns the stream
// of incremental changes a Reflector delivers into a stream of full
// snapshots. It is safe for concurrent use.
//
// Each successful change causes exactly one PushFunc call, with a snapshot
// taken after that change. Calls are serialised and made in the order of the
// changes, so the last call always carries the final content. PushFunc runs
// while the UndeltaStore holds its lock: it may read the store but must not
// write to it. Differs from client-go v0.37.2; see COMPATIBILITY.md.
type UndeltaStore struct {
	Store
	PushFunc func([]interface{})

	// mu serialises change, snapshot and push.
	mu sync.Mutex
}

var _ Store = &UndeltaStore{}

// NewUndeltaStore returns an UndeltaStore over a new NewStore(keyFunc) that
// pushes snapshots to pushFunc.
func NewUndeltaStore(pushFunc func([]interface{}), keyFunc KeyFunc) *UndeltaStore {
	return &UndeltaStore{Store: NewStore(keyFunc), PushFunc: pushFunc}
}

// change applies op and, when it succeeds, pushes the new content.
func (u *UndeltaStore) change(op func() error) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := op(); err != nil {
		return err
	}
	if u.PushFunc != nil {
		u.PushFunc(u.Store.List())
	}
	return nil
}

// Add adds obj to the underlying store, then pushes the content. The
// underlying store's error is returned, and nothing is pushed, on failure.
func (u *UndeltaStore) Add(obj interface{}) error {
	return u.change(func() error { return u.Store.Add(obj) })
}

// Update updates obj in the underlying store, then pushes the content. The
// underlying store's error is returned, and nothing is pushed, on failure.
func (u *UndeltaStore) Update(obj interface{}) error {
	return u.change(func() error { return u.Store.Update(obj) })
}

// Delete deletes obj from the underlying store, then pushes the content. The
// underlying store's error is returned, and nothing is pushed, on failure.
func (u *UndeltaStore) Delete(obj interface{}) error {
	return u.change(func() error { return u.Store.Delete(obj) })
}

// Replace replaces the underlying store's content with list, then pushes
// the new content. The store takes ownership of list. The underlying
// store's error is returned, and nothing is pushed, on failure.
func (u *UndeltaStore) Replace(list []interface{}, resourceVersion string) error {
	return u.change(func() error { return u.Store.Replace(list, resourceVersion) })
}
