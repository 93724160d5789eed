package pbdecode

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The apimachinery types whose protobuf methods are written by hand rather
// than generated. Each is decoded here exactly as its own Unmarshal does.

// decodeTime decodes a metav1.Time with its own Unmarshal, which allocates
// nothing (a Timestamp on the stack, a time.Time in the local zone).
func decodeTime(_ *state, b []byte, m *metav1.Time) error {
	return m.Unmarshal(b)
}

// decodeMicroTime decodes a metav1.MicroTime with its own Unmarshal.
func decodeMicroTime(_ *state, b []byte, m *metav1.MicroTime) error {
	return m.Unmarshal(b)
}

// quantitySize is the sizer of a resource.Quantity: its one field, the
// string form, is kept when it is the canonical form.
var quantitySize = &sizer{kinds: []uint8{1: sizeData}}

// decodeQuantity decodes a resource.Quantity as its Unmarshal does (field 1
// is the string form, parsed with resource.ParseQuantity; each occurrence
// replaces the value; other fields are skipped), reading the string into
// the object's storage instead of a string of its own.
func decodeQuantity(s *state, b []byte, m *resource.Quantity) error {
	var err error
	for i := 0; i < len(b); {
		pre := i
		var num int32
		var wt int
		if num, wt, i, err = tag(b, i, "Quantity"); err != nil {
			return err
		}
		if num != 1 {
			if i, err = skip(b, pre, len(b)); err != nil {
				return err
			}
			continue
		}
		if wt != 2 {
			return wrongWireType(wt, "String_")
		}
		var v string
		if v, i, err = str[string](s, b, i); err != nil {
			return err
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return err
		}
		*m = q
	}
	return nil
}
