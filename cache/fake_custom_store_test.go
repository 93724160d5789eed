package cache

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFakeCustomStore(t *testing.T) {
	var empty FakeCustomStore
	assert.NoError(t, empty.Add(1))
	assert.NoError(t, empty.Update(1))
	assert.NoError(t, empty.Delete(1))
	assert.Nil(t, empty.List())
	assert.Nil(t, empty.ListKeys())
	obj, ok, err := empty.Get(1)
	assert.Nil(t, obj)
	assert.False(t, ok)
	assert.NoError(t, err)
	obj, ok, err = empty.GetByKey("k")
	assert.Nil(t, obj)
	assert.False(t, ok)
	assert.NoError(t, err)
	assert.NoError(t, empty.Replace(nil, ""))
	assert.NoError(t, empty.Resync())
	empty.Bookmark("1")
	assert.Equal(t, "", empty.LastStoreSyncResourceVersion())

	boom := errors.New("boom")
	calls := []string{}
	f := &FakeCustomStore{
		AddFunc:    func(interface{}) error { calls = append(calls, "add"); return boom },
		UpdateFunc: func(interface{}) error { calls = append(calls, "update"); return boom },
		DeleteFunc: func(interface{}) error { calls = append(calls, "delete"); return boom },
		ListFunc:   func() []interface{} { calls = append(calls, "list"); return []interface{}{1} },
		ListKeysFunc: func() []string {
			calls = append(calls, "listkeys")
			return []string{"k"}
		},
		GetFunc: func(interface{}) (interface{}, bool, error) { calls = append(calls, "get"); return 2, true, nil },
		GetByKeyFunc: func(string) (interface{}, bool, error) {
			calls = append(calls, "getbykey")
			return 3, true, nil
		},
		ReplaceFunc:  func([]interface{}, string) error { calls = append(calls, "replace"); return boom },
		ResyncFunc:   func() error { calls = append(calls, "resync"); return boom },
		BookmarkFunc: func(string) { calls = append(calls, "bookmark") },
		LastStoreSyncResourceVersionFunc: func() string {
			calls = append(calls, "rv")
			return "7"
		},
	}
	assert.ErrorIs(t, f.Add(1), boom)
	assert.ErrorIs(t, f.Update(1), boom)
	assert.ErrorIs(t, f.Delete(1), boom)
	assert.Equal(t, []interface{}{1}, f.List())
	assert.Equal(t, []string{"k"}, f.ListKeys())
	obj, _, _ = f.Get(1)
	assert.Equal(t, 2, obj)
	obj, _, _ = f.GetByKey("k")
	assert.Equal(t, 3, obj)
	assert.ErrorIs(t, f.Replace(nil, ""), boom)
	assert.ErrorIs(t, f.Resync(), boom)
	f.Bookmark("1")
	assert.Equal(t, "7", f.LastStoreSyncResourceVersion())
	assert.Equal(t, []string{"add", "update", "delete", "list", "listkeys", "get", "getbykey", "replace", "resync", "bookmark", "rv"}, calls)
}
