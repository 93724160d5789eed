package queue

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// change is the delta type the engine's tests instantiate the queues with.
type change struct {
	kind Kind
	obj  any
}

// changes is the tests' list-of-deltas type.
type changes []change

// tombstone is the tests' placeholder of a deletion of unknown final state.
type tombstone struct {
	key string
	obj any
}

// keyError is the tests' key error.
type keyError struct {
	obj any
	err error
}

func (e keyError) Error() string { return fmt.Sprintf("no key for %v: %v", e.obj, e.err) }
func (e keyError) Unwrap() error { return e.err }

var (
	errClosed     = errors.New("closed")
	errEmptyList  = errors.New("empty list")
	errRefused    = errors.New("refused")
	errNoMetadata = errors.New("no metadata")
)

// changeOps is the tests' Ops.
type changeOps struct{}

var _ Ops[change] = changeOps{}

func (changeOps) Make(k Kind, obj any) change { return change{kind: k, obj: obj} }
func (changeOps) Kind(d change) Kind          { return d.kind }
func (changeOps) Object(d change) any         { return d.obj }
func (changeOps) Box(ds []change) any         { return changes(ds) }
func (changeOps) Unwrap(obj any, delta bool) (any, string, bool, error) {
	switch o := obj.(type) {
	case changes:
		if len(o) == 0 {
			return nil, "", false, keyError{obj: obj, err: errEmptyList}
		}
		obj = o[len(o)-1].obj
	case change:
		if delta {
			obj = o.obj
		}
	}
	if t, ok := obj.(tombstone); ok {
		return obj, t.key, true, nil
	}
	return obj, "", false, nil
}
func (changeOps) Tombstone(key string, obj any) any { return tombstone{key: key, obj: obj} }
func (changeOps) AsTombstone(obj any) (string, any, bool) {
	t, ok := obj.(tombstone)
	return t.key, t.obj, ok
}
func (changeOps) ReplacedAll(rv string, objs []any, keys []string) any {
	return fmt.Sprintf("all@%s:%d", rv, len(objs))
}
func (changeOps) Bookmark(rv string, listEnd bool) any {
	return fmt.Sprintf("bookmark@%s:%v", rv, listEnd)
}
func (changeOps) SyncAll() any                       { return "sync-all" }
func (changeOps) DefaultKey(obj any) (string, error) { return podKey(obj) }
func (changeOps) KeyError(obj any, err error) error  { return keyError{obj: obj, err: err} }
func (changeOps) Closed() error                      { return errClosed }
func (changeOps) Refused(err error) bool             { return errors.Is(err, errRefused) }
func (changeOps) Meta(obj any) (metav1.Object, error) {
	if _, ok := obj.(*v1.Pod); !ok {
		return nil, errNoMetadata
	}
	return meta.Accessor(obj)
}

// pod returns a pod ns/name at resourceVersion rv.
func pod(name, rv string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// podKey is the tests' key function: ns/name of a pod.
func podKey(obj any) (string, error) {
	p, ok := obj.(*v1.Pod)
	if !ok {
		return "", errNoMetadata
	}
	return p.Namespace + "/" + p.Name, nil
}

// describe renders an object: "ns/name@rv", or "tombstone(...)".
func describe(obj any) string {
	if t, ok := obj.(tombstone); ok {
		if t.obj == nil {
			return "tombstone(" + t.key + ")"
		}
		return "tombstone(" + describe(t.obj) + ")"
	}
	if p, ok := obj.(*v1.Pod); ok {
		return p.Namespace + "/" + p.Name + "@" + p.ResourceVersion
	}
	return fmt.Sprint(obj)
}

// knownPods is an ordered KeyLister of pods.
type knownPods struct {
	keys []string
	objs map[string]any
}

func newKnownPods(pods ...*v1.Pod) *knownPods {
	k := &knownPods{objs: map[string]any{}}
	for _, p := range pods {
		key, _ := podKey(p)
		k.keys = append(k.keys, key)
		k.objs[key] = p
	}
	return k
}

func (k *knownPods) ListKeys() []string { return append([]string(nil), k.keys...) }

func (k *knownPods) GetByKey(key string) (any, bool, error) {
	obj, ok := k.objs[key]
	return obj, ok, nil
}
