package cache

// FakeCustomStore is a Store for tests whose methods call the matching
// function field. A method whose field is nil does nothing and returns zero
// values (nil errors, no objects, exists=false). It is as safe for
// concurrent use as the functions it is given.
type FakeCustomStore struct {
	AddFunc                          func(obj interface{}) error
	UpdateFunc                       func(obj interface{}) error
	DeleteFunc                       func(obj interface{}) error
	ListFunc                         func() []interface{}
	ListKeysFunc                     func() []string
	GetFunc                          func(obj interface{}) (item interface{}, exists bool, err error)
	GetByKeyFunc                     func(key string) (item interface{}, exists bool, err error)
	ReplaceFunc                      func(list []interface{}, resourceVersion string) error
	ResyncFunc                       func() error
	BookmarkFunc                     func(rv string)
	LastStoreSyncResourceVersionFunc func() string
}

var _ Store = &FakeCustomStore{}

// Add calls AddFunc, if set.
func (f *FakeCustomStore) Add(obj interface{}) error {
	if f.AddFunc == nil {
		return nil
	}
	return f.AddFunc(obj)
}

// Update calls UpdateFunc, if set.
func (f *FakeCustomStore) Update(obj interface{}) error {
	if f.UpdateFunc == nil {
		return nil
	}
	return f.UpdateFunc(obj)
}

// Delete calls DeleteFunc, if set.
func (f *FakeCustomStore) Delete(obj interface{}) error {
	if f.DeleteFunc == nil {
		return nil
	}
	return f.DeleteFunc(obj)
}

// List calls ListFunc, if set.
func (f *FakeCustomStore) List() []interface{} {
	if f.ListFunc == nil {
		return nil
	}
	return f.ListFunc()
}

// ListKeys calls ListKeysFunc, if set.
func (f *FakeCustomStore) ListKeys() []string {
	if f.ListKeysFunc == nil {
		return nil
	}
	return f.ListKeysFunc()
}

// Get calls GetFunc, if set.
func (f *FakeCustomStore) Get(obj interface{}) (item interface{}, exists bool, err error) {
	if f.GetFunc == nil {
		return nil, false, nil
	}
	return f.GetFunc(obj)
}

// GetByKey calls GetByKeyFunc, if set.
func (f *FakeCustomStore) GetByKey(key string) (item interface{}, exists bool, err error) {
	if f.GetByKeyFunc == nil {
		return nil, false, nil
	}
	return f.GetByKeyFunc(key)
}

// Replace calls ReplaceFunc, if set.
func (f *FakeCustomStore) Replace(list []interface{}, resourceVersion string) error {
	if f.ReplaceFunc == nil {
		return nil
	}
	return f.ReplaceFunc(list, resourceVersion)
}

// Resync calls ResyncFunc, if set.
func (f *FakeCustomStore) Resync() error {
	if f.ResyncFunc == nil {
		return nil
	}
	return f.ResyncFunc()
}

// Bookmark calls BookmarkFunc, if set.
func (f *FakeCustomStore) Bookmark(rv string) {
	if f.BookmarkFunc != nil {
		f.BookmarkFunc(rv)
	}
}

// LastStoreSyncResourceVersion calls LastStoreSyncResourceVersionFunc, if
// set, and returns "" otherwise.
func (f *FakeCustomStore) LastStoreSyncResourceVersion() string {
	if f.LastStoreSyncResourceVersionFunc == nil {
		return ""
	}
	return f.LastStoreSyncResourceVersionFunc()
}
