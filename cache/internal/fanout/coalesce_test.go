package fanout

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// placeholder stands for the informer's DeletedFinalStateUnknown: the
// object of a delete whose final state the informer did not see.
type placeholder struct {
	Key string
	Obj any
}

// testKeyOf is the informer's key function in these tests: a placeholder's
// key, or "namespace/name" of an object; an error for anything else.
func testKeyOf(obj any) (string, error) {
	if p, ok := obj.(placeholder); ok {
		return p.Key, nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", errors.New("not an object")
	}
	return m.GetNamespace() + "/" + m.GetName(), nil
}

// isPlaceholder tells a placeholder.
func isPlaceholder(obj any) bool {
	_, ok := obj.(placeholder)
	return ok
}

// newTestBuffer returns a coalescing buffer with the tests' keys and
// placeholders.
func newTestBuffer() *coalescingBuffer {
	return newCoalescingBuffer(testKeyOf, isPlaceholder)
}

// pod returns a pod ns/name at resource version rv.
func pod(name, rv string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// describe renders an object: "ns/name@rv", "tombstone(...)" for a
// placeholder, its type for anything else.
func describe(obj any) string {
	if p, ok := obj.(placeholder); ok {
		if p.Obj == nil {
			return "tombstone(" + p.Key + ")"
		}
		return "tombstone(" + describe(p.Obj) + ")"
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	key := m.GetName()
	if ns := m.GetNamespace(); ns != "" {
		key = ns + "/" + key
	}
	return key + "@" + m.GetResourceVersion()
}

func addNote(obj any, initial bool) Notification {
	return Notification{Kind: Add, Initial: initial, NewObj: obj}
}

func updateNote(old, obj any) Notification {
	return Notification{Kind: Update, OldObj: old, NewObj: obj}
}

func deleteNote(obj any) Notification {
	return Notification{Kind: Delete, OldObj: obj}
}

func tombstoneOf(name string) placeholder {
	return placeholder{Key: "ns/" + name}
}

// describeNotes renders notifications as the recorders of these tests do.
func describeNotes(notes []Notification) []string {
	var out []string
	for _, n := range notes {
		switch n.Kind {
		case Add:
			out = append(out, fmt.Sprintf("add %s initial=%v", describe(n.NewObj), n.Initial))
		case Update:
			out = append(out, fmt.Sprintf("update %s -> %s", describe(n.OldObj), describe(n.NewObj)))
		case Delete:
			out = append(out, "delete "+describe(n.OldObj))
		}
	}
	return out
}

// TestCoalescingBufferMergeRules: the merge rules of BufferCoalesceByKey,
// one case per rule, each with the exact notifications delivered.
func TestCoalescingBufferMergeRules(t *testing.T) {
	p := pod
	cases := []struct {
		name    string
		in      []Notification
		want    []string
		dropped int // initial adds merged away
	}{
		{"add then updates: one add of the newest state",
			[]Notification{addNote(p("a", "1"), true), updateNote(p("a", "1"), p("a", "2")), updateNote(p("a", "2"), p("a", "3"))},
			[]string{"add ns/a@3 initial=true"}, 0},
		{"updates: from the state the handler knew to the newest",
			[]Notification{updateNote(p("a", "1"), p("a", "2")), updateNote(p("a", "2"), p("a", "3"))},
			[]string{"update ns/a@1 -> ns/a@3"}, 0},
		{"add then delete, never delivered: nothing",
			[]Notification{addNote(p("b", "1"), false), updateNote(p("b", "1"), p("b", "2")), deleteNote(p("b", "2"))},
			nil, 0},
		{"initial add then delete: nothing, counted for HasSynced",
			[]Notification{addNote(p("b", "1"), true), deleteNote(p("b", "1"))},
			nil, 1},
		{"update then delete: the delete with the last known object",
			[]Notification{updateNote(p("c", "1"), p("c", "2")), deleteNote(p("c", "2"))},
			[]string{"delete ns/c@2"}, 0},
		{"update then relist deletion: the tombstone stays deliverable",
			[]Notification{updateNote(p("d", "1"), p("d", "2")), deleteNote(placeholder{Key: "ns/d", Obj: p("d", "2")})},
			[]string{"delete tombstone(ns/d@2)"}, 0},
		{"tombstone then real delete: the real final state",
			[]Notification{deleteNote(tombstoneOf("g")), deleteNote(p("g", "4"))},
			[]string{"delete ns/g@4"}, 0},
		{"real delete then tombstone: the real final state",
			[]Notification{deleteNote(p("g", "4")), deleteNote(tombstoneOf("g"))},
			[]string{"delete ns/g@4"}, 0},
		{"delete then re-creation: both, the add merged with its updates",
			[]Notification{deleteNote(p("e", "1")), addNote(p("e", "2"), false), updateNote(p("e", "2"), p("e", "3"))},
			[]string{"delete ns/e@1", "add ns/e@3 initial=false"}, 0},
		{"delete, re-creation, delete: the first delete only",
			[]Notification{deleteNote(p("f", "1")), addNote(p("f", "2"), false), deleteNote(p("f", "2"))},
			[]string{"delete ns/f@1"}, 0},
		{"keys in the order they became pending",
			[]Notification{updateNote(p("x", "1"), p("x", "2")), addNote(p("y", "3"), false), updateNote(p("x", "2"), p("x", "4")), deleteNote(p("z", "5")), updateNote(p("y", "3"), p("y", "6"))},
			[]string{"update ns/x@1 -> ns/x@4", "add ns/y@6 initial=false", "delete ns/z@5"}, 0},
		{"a key without a usable key is queued on its own",
			[]Notification{addNote("not an object", false), addNote("not an object", false)},
			[]string{"add string initial=false", "add string initial=false"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newTestBuffer()
			dropped := 0
			for _, n := range tc.in {
				b.add(n, func(Notification) { dropped++ })
			}
			var got []Notification
			for b.head != nil {
				got = b.popFront(got)
			}
			assert.Equal(t, tc.want, describeNotes(got))
			assert.Equal(t, tc.dropped, dropped)
			assert.Equal(t, 0, b.notes)
			assert.Empty(t, b.entries)
		})
	}
}

// TestCoalescingBufferStaysBoundedByKeys: however many notifications arrive for a
// fixed set of objects, the buffer holds one entry per object.
func TestCoalescingBufferStaysBoundedByKeys(t *testing.T) {
	b := newTestBuffer()
	for i := 0; i < 10000; i++ {
		name := fmt.Sprintf("p%d", i%10)
		b.add(updateNote(pod(name, fmt.Sprint(i)), pod(name, fmt.Sprint(i+1))), func(Notification) {})
	}
	assert.Equal(t, 10, b.notes)
	assert.Len(t, b.entries, 10)
	got := b.popFront(nil)
	assert.Equal(t, []string{"update ns/p0@0 -> ns/p0@9991"}, describeNotes(got))
}
