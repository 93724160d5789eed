package apply

import (
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kinformer/kinformer/cache/internal/fanout"
)

// Detector is given every object a handler will see added or updated (the
// cache package's MutationDetector).
type Detector interface {
	AddObject(obj any)
}

// Notes collects the notifications of one popped batch for a shared
// informer's handlers: it is the Handler of the informer's Applier, whose
// Deliver hands what it collected to the informer's processor at once. Its
// zero value is ready to use; it is used by one goroutine at a time.
type Notes struct {
	notes []fanout.Notification
	// hasResync is set when a note is a resync note.
	hasResync bool
	// Detector, when not nil, is given every added or updated object, as
	// the handlers will see it. Set it before the first note.
	Detector Detector
}

// OnAdd collects an add.
func (b *Notes) OnAdd(obj any, isInInitialList bool) {
	if b.Detector != nil {
		b.Detector.AddObject(obj)
	}
	b.notes = append(b.notes, fanout.Notification{Kind: fanout.Add, Initial: isInInitialList, NewObj: obj})
}

// OnUpdate collects an update; one whose old and new objects have the
// same resourceVersion (a resync, or an unchanged object seen again by a
// list) is a resync note, for the handlers due for a resync only.
func (b *Notes) OnUpdate(oldObj, newObj any) {
	resync := false
	if n, err := meta.Accessor(newObj); err == nil {
		if o, err := meta.Accessor(oldObj); err == nil {
			resync = n.GetResourceVersion() == o.GetResourceVersion()
		}
	}
	b.hasResync = b.hasResync || resync
	if b.Detector != nil {
		b.Detector.AddObject(newObj)
	}
	b.notes = append(b.notes, fanout.Notification{Kind: fanout.Update, Resync: resync, OldObj: oldObj, NewObj: newObj})
}

// OnDelete collects a delete.
func (b *Notes) OnDelete(obj any) {
	b.notes = append(b.notes, fanout.Notification{Kind: fanout.Delete, OldObj: obj})
}

// reset empties the collection once it was handed on, dropping its
// references to objects and, after an unusually large batch, its backing
// array.
func (b *Notes) reset() {
	if cap(b.notes) > 4096 {
		b.notes = nil
	} else {
		clear(b.notes)
		b.notes = b.notes[:0]
	}
	b.hasResync = false
}
