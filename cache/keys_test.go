package cache

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientcache "k8s.io/client-go/tools/cache"
)

// metaAccessorOnly implements only metav1.ObjectMetaAccessor.
type metaAccessorOnly struct{ m *metav1.ObjectMeta }

func (s metaAccessorOnly) GetObjectMeta() metav1.Object {
	if s.m == nil {
		return nil
	}
	return s.m
}

// keyCase is an input to the key functions.
type keyCase struct {
	name string
	obj  interface{}
	// key is the expected key; wantErr expects an error instead.
	key     string
	wantErr bool
	// cg says how client-go's function behaves when it differs from ours:
	// "panic" or "error".
	cg string
}

func keyCases() []keyCase {
	var nilPod *v1.Pod
	u := &unstructured.Unstructured{}
	u.SetNamespace("uns")
	u.SetName("u")
	return []keyCase{
		{name: "namespaced", obj: newPodIn("ns", "a", ""), key: "ns/a"},
		{name: "cluster-scoped", obj: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, key: "n1"},
		{name: "explicit key", obj: ExplicitKey("x/y"), key: "x/y"},
		{name: "unstructured", obj: u, key: "uns/u"},
		{name: "empty unstructured", obj: &unstructured.Unstructured{}, key: ""},
		{name: "object meta", obj: &metav1.ObjectMeta{Namespace: "n", Name: "m"}, key: "n/m"},
		{name: "meta accessor", obj: metaAccessorOnly{m: &metav1.ObjectMeta{Name: "m"}}, key: "m"},
		{name: "meta accessor nil meta", obj: metaAccessorOnly{}, wantErr: true},
		{name: "nil", obj: nil, wantErr: true},
		{name: "typed nil pointer", obj: nilPod, wantErr: true, cg: "panic"},
		{name: "string", obj: "ns/a", wantErr: true},
		{name: "int", obj: 3, wantErr: true},
		{name: "status without object meta", obj: &metav1.Status{}, wantErr: true},
		{name: "pod value", obj: v1.Pod{}, wantErr: true},
	}
}

// callNoPanic calls fn and reports whether it panicked.
func callNoPanic(fn func() (string, error)) (key string, err error, panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	key, err = fn()
	return key, err, false
}

func TestMetaNamespaceKeyFunc(t *testing.T) {
	for _, tc := range keyCases() {
		t.Run(tc.name, func(t *testing.T) {
			key, err := MetaNamespaceKeyFunc(tc.obj)
			on, onErr := ObjectToName(tc.obj)
			dkey, derr := DeletionHandlingMetaNamespaceKeyFunc(tc.obj)
			cgObj := tc.obj
			if k, ok := cgObj.(ExplicitKey); ok {
				cgObj = clientcache.ExplicitKey(k)
			}
			cgKey, cgErr, cgPanic := callNoPanic(func() (string, error) { return clientcache.MetaNamespaceKeyFunc(cgObj) })
			if tc.wantErr {
				require.Error(t, err)
				require.Error(t, derr)
				require.Error(t, onErr)
			} else {
				require.NoError(t, err)
				require.NoError(t, derr)
				assert.Equal(t, tc.key, key)
				assert.Equal(t, tc.key, dkey)
				if _, explicit := tc.obj.(ExplicitKey); explicit {
					assert.Error(t, onErr, "ObjectToName does not accept ExplicitKey")
				} else {
					require.NoError(t, onErr)
					assert.Equal(t, tc.key, on.String())
				}
			}
			// Differential: client-go agrees except where documented.
			switch tc.cg {
			case "panic":
				assert.True(t, cgPanic, "client-go panics here")
			default:
				require.False(t, cgPanic)
				assert.Equal(t, tc.wantErr, cgErr != nil)
				if !tc.wantErr {
					assert.Equal(t, cgKey, key)
				}
			}
		})
	}
}

func TestDeletionHandlingKeyFuncs(t *testing.T) {
	var nilTomb *DeletedFinalStateUnknown
	cases := []struct {
		name    string
		obj     interface{}
		key     string
		wantErr bool
		nameErr bool
	}{
		{name: "tombstone value", obj: DeletedFinalStateUnknown{Key: "ns/a", Obj: newPodIn("ns", "a", "")}, key: "ns/a"},
		{name: "tombstone without object", obj: DeletedFinalStateUnknown{Key: "n"}, key: "n"},
		{name: "tombstone pointer", obj: &DeletedFinalStateUnknown{Key: "ns/b"}, key: "ns/b"},
		{name: "nil tombstone pointer", obj: nilTomb, wantErr: true, nameErr: true},
		{name: "tombstone with malformed key", obj: DeletedFinalStateUnknown{Key: "a/b/c"}, key: "a/b/c", nameErr: true},
		{name: "plain object", obj: newPodIn("ns", "c", ""), key: "ns/c"},
		{name: "not an object", obj: 42, wantErr: true, nameErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key, err := DeletionHandlingMetaNamespaceKeyFunc(tc.obj)
			if tc.wantErr {
				assert.Error(t, err)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tc.key, key)
			}
			on, err := DeletionHandlingObjectToName(tc.obj)
			if tc.nameErr {
				assert.Error(t, err)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tc.key, on.String())
			}
		})
	}
}

func TestKeyErrorWrapsCause(t *testing.T) {
	cause := errors.New("boom")
	s := NewStore(func(interface{}) (string, error) { return "", cause })
	obj := newPodIn("ns", "a", "")
	for name, op := range map[string]func() error{
		"Add":     func() error { return s.Add(obj) },
		"Update":  func() error { return s.Update(obj) },
		"Delete":  func() error { return s.Delete(obj) },
		"Get":     func() error { _, _, err := s.Get(obj); return err },
		"Replace": func() error { return s.Replace([]interface{}{obj}, "1") },
	} {
		t.Run(name, func(t *testing.T) {
			err := op()
			require.Error(t, err)
			assert.ErrorIs(t, err, cause)
			var ke KeyError
			require.ErrorAs(t, err, &ke)
			assert.Same(t, obj, ke.Obj)
			assert.Contains(t, ke.Error(), "boom")
		})
	}
	assert.Empty(t, s.List())
}
