package pbdecode

import (
	"fmt"
	"reflect"
)

// root is the decoder of a type a decoding can start from.
type root struct {
	size *sizer
	// decode zeroes the value first, as proto.Unmarshal resets it; merge
	// decodes into the value as it is, as the generated code decodes a
	// message's fields one after another (ReadList feeds it a list's
	// fields a few at a time).
	decode, merge func(*state, []byte, any) error
}

// rootOf makes the root of message type T.
func rootOf[T any](z *sizer, dec func(*state, []byte, *T) error) root {
	return root{
		size: z,
		decode: func(s *state, b []byte, into any) error {
			m := into.(*T)
			var zero T
			*m = zero
			return dec(s, b, m)
		},
		merge: func(s *state, b []byte, into any) error {
			return dec(s, b, into.(*T))
		},
	}
}

// Supports reports whether Unmarshal decodes into values of into's type: a
// pointer to an API type of the client-go clientset's scheme that has a
// protobuf form.
func Supports(into any) bool {
	_, ok := roots[reflect.TypeOf(into)]
	return ok
}

// Unmarshal decodes the protobuf message b (an object's own bytes, the Raw
// of its runtime.Unknown envelope) into into, a pointer to a supported type,
// giving the same value as into's own Unmarshal method after a reset
// (proto.Unmarshal): same fields, nil and empty slices and maps alike, and
// the same error for the same malformed input (io.ErrUnexpectedEOF for a
// message cut short).
//
// The decoded object shares nothing with b or with any other object: its
// strings and byte slices are cut from storage of its own, allocated once
// and sized by a first pass over b (for a list, each item has its own), and
// every byte slice has a capacity equal to its length, so an append to it
// copies instead of writing over a neighbour.
func Unmarshal(b []byte, into any) error {
	r, ok := roots[reflect.TypeOf(into)]
	if !ok || reflect.ValueOf(into).IsNil() {
		return fmt.Errorf("pbdecode: cannot decode into %T", into)
	}
	var s state
	s.begin(r.size, b)
	return r.decode(&s, b, into)
}

// packed reads a repeated varint field, packed (wire type 2) or one element
// (wire type 0), converting each element with conv. As in the generated
// code, a packed element is read up to the end of the message, not of the
// packed field.
func packed[S ~[]E, E any](b []byte, i, wt int, cur S, conv func(uint64) E, field string) (S, int, error) {
	switch wt {
	case 0:
		x, next, err := varint(b, i)
		if err != nil {
			return cur, 0, err
		}
		return append(cur, conv(x)), next, nil
	case 2:
		start, end, err := span(b, i)
		if err != nil {
			return cur, 0, err
		}
		if n := countVarints(b[start:end]); n != 0 && len(cur) == 0 {
			cur = make(S, 0, n)
		}
		for i = start; i < end; {
			var x uint64
			if x, i, err = varint(b, i); err != nil {
				return cur, 0, err
			}
			cur = append(cur, conv(x))
		}
		return cur, i, nil
	}
	return cur, 0, wrongWireType(wt, field)
}

// countVarints counts the varints that end in b.
func countVarints(b []byte) int {
	n := 0
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	return n
}
