package cache

import (
	"context"

	"github.com/kinformer/kinformer/listadmission"
)

// listAdmitter is the list admission a Reflector asks before each LIST or
// streaming list (package listadmission): Acquire waits for a slot of the
// given priority, ThrottledBy reports a list's failure (only a 429 counts)
// with the slot of that list. A *listadmission.Admission is one, a nil one
// included, which admits every list at once.
type listAdmitter interface {
	Acquire(ctx context.Context, priority int) (*admissionSlot, error)
	ThrottledBy(err error, slot *admissionSlot)
}

// admissionSlot is a list's slot of its admission; a nil one holds nothing,
// and its Release does nothing.
type admissionSlot = listadmission.Slot

// listAdmitterOrNone returns a, or, when a is nil, an admission that admits
// every list at once.
func listAdmitterOrNone(a listAdmitter) listAdmitter {
	if a == nil {
		return (*listadmission.Admission)(nil)
	}
	return a
}

// withAdmissionSlot returns ctx carrying slot (ctx itself when slot is nil),
// so that a transport wrapped by the slot's admission knows the requests of
// the list it admits.
func withAdmissionSlot(ctx context.Context, slot *admissionSlot) context.Context {
	return listadmission.ContextWithSlot(ctx, slot)
}
