// Package lean holds the memory-lean transform behind the informer factories'
// WithMemoryLean options and interop/clientgo's: it drops managedFields and makes the strings most
// objects repeat (label and annotation keys and values, namespaces, owner
// references) share one copy through a bounded intern table.
package lean

import (
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kinformer/kinformer/cache"
)

// Bounds of the intern table. The table keeps two generations; a lookup
// that misses the current generation but hits the previous one moves the
// string to the current one, and once the current generation holds
// MaxEntries strings or MaxBytes bytes of string data it becomes the
// previous one (dropping the old previous one). The table therefore never
// holds more than 2×MaxEntries strings and 2×MaxBytes bytes of string data,
// however many distinct strings flow through it; strings still in use stay
// shared, dropped ones merely stop being shared with objects decoded later.
const (
	MaxEntries = 1 << 15
	MaxBytes   = 2 << 20
	// MaxLen is the longest string interned; longer ones (typically
	// one-off annotations such as last-applied-configuration) are kept as
	// they are.
	MaxLen = 256
)

// Table is a bounded intern table (see MaxEntries). The zero value is ready
// to use; it is safe for concurrent use.
type Table struct {
	mu        sync.Mutex
	cur, prev map[string]string
	curBytes  int
}

// internLocked returns the table's copy of s, adding s when it has none.
// t.mu must be held.
func (t *Table) internLocked(s string) string {
	if s == "" || len(s) > MaxLen {
		return s
	}
	if v, ok := t.cur[s]; ok {
		return v
	}
	if v, ok := t.prev[s]; ok {
		t.addLocked(v)
		return v
	}
	t.addLocked(s)
	return s
}

func (t *Table) addLocked(s string) {
	if t.cur == nil || len(t.cur) >= MaxEntries || t.curBytes+len(s) > MaxBytes {
		t.prev, t.cur, t.curBytes = t.cur, make(map[string]string, 256), 0
	}
	t.cur[s] = s
	t.curBytes += len(s)
}

// Len returns how many strings the table holds (both generations).
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.cur) + len(t.prev)
}

// Transform returns a cache.TransformFunc-shaped function that makes obj
// lean in place and returns it: managedFields dropped; label and annotation
// keys and values, the namespace and owner references' API version, kind and
// name interned in t. It handles every object with standard object metadata
// (typed objects, *metav1.PartialObjectMetadata) and
// *unstructured.Unstructured; anything else (tombstones, lists) is returned
// unchanged. It never fails.
func (t *Table) Transform(obj any) (any, error) {
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		t.unstructured(o.Object)
	case metav1.ObjectMetaAccessor:
		if m, ok := o.GetObjectMeta().(*metav1.ObjectMeta); ok && m != nil {
			t.objectMeta(m)
		} else if m := o.GetObjectMeta(); m != nil {
			t.object(m)
		}
	case metav1.Object:
		t.object(o)
	}
	return obj, nil
}

func (t *Table) objectMeta(m *metav1.ObjectMeta) {
	m.ManagedFields = nil
	t.mu.Lock()
	defer t.mu.Unlock()
	m.Namespace = t.internLocked(m.Namespace)
	m.Labels = t.stringMapLocked(m.Labels)
	m.Annotations = t.stringMapLocked(m.Annotations)
	t.ownersLocked(m.OwnerReferences)
}

func (t *Table) object(m metav1.Object) {
	m.SetManagedFields(nil)
	t.mu.Lock()
	defer t.mu.Unlock()
	m.SetNamespace(t.internLocked(m.GetNamespace()))
	if l := m.GetLabels(); l != nil {
		m.SetLabels(t.stringMapLocked(l))
	}
	if a := m.GetAnnotations(); a != nil {
		m.SetAnnotations(t.stringMapLocked(a))
	}
	if refs := m.GetOwnerReferences(); len(refs) > 0 {
		t.ownersLocked(refs)
		m.SetOwnerReferences(refs)
	}
}

func (t *Table) ownersLocked(refs []metav1.OwnerReference) {
	for i := range refs {
		r := &refs[i]
		r.APIVersion = t.internLocked(r.APIVersion)
		r.Kind = t.internLocked(r.Kind)
		r.Name = t.internLocked(r.Name)
		r.UID = types.UID(t.internLocked(string(r.UID)))
	}
}

// stringMapLocked returns a map equal to m whose keys and values are
// interned. Values are replaced in place; keys need a new map, which is
// sized exactly.
func (t *Table) stringMapLocked(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[t.internLocked(k)] = t.internLocked(v)
	}
	return out
}

// unstructured makes an unstructured object's content lean: it removes
// metadata.managedFields and interns the metadata's namespace and its
// labels' and annotations' keys and values. Malformed metadata is left as
// it is.
func (t *Table) unstructured(obj map[string]any) {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return
	}
	delete(md, "managedFields")
	t.mu.Lock()
	defer t.mu.Unlock()
	if ns, ok := md["namespace"].(string); ok {
		md["namespace"] = t.internLocked(ns)
	}
	for _, field := range []string{"labels", "annotations"} {
		m, ok := md[field].(map[string]any)
		if !ok || len(m) == 0 {
			continue
		}
		out := make(map[string]any, len(m))
		for k, v := range m {
			if s, ok := v.(string); ok {
				v = t.internLocked(s)
			}
			out[t.internLocked(k)] = v
		}
		md[field] = out
	}
}

// Compose returns the transform an informer gets from a user transform and a
// memory-lean table, either of which may be nil: user first, then the lean
// step on user's result; nil when both are nil.
func Compose(user cache.TransformFunc, t *Table) cache.TransformFunc {
	switch {
	case t == nil:
		return user
	case user == nil:
		return t.Transform
	}
	return func(obj any) (any, error) {
		out, err := user(obj)
		if err != nil {
			return nil, err
		}
		return t.Transform(out)
	}
}
