package pbdecode

import "io"

// The map fields of the API types are messages of entries, each a key
// (field 1) and a value (field 2). These read one entry whose bytes are
// b[i:end] exactly as the generated code does: the key and value fields'
// wire types are not checked, and their values are read up to the end of
// the enclosing message (b), not of the entry; a missing key is "" and a
// missing value the value type's zero (an empty, non-nil slice for bytes; the
// empty composite literal for a message, which for a message whose Go type is
// a slice is an empty, non-nil slice). Entries with a message value are read
// by generated functions (zz_generated.entries.go) with the same loop, a
// value field that repeats replacing the value read before it.

// entrySkip skips an entry's other field, whose tag starts at pre.
func entrySkip(b []byte, pre, end int) (int, error) {
	n, err := skipLen(b[pre:])
	if err != nil {
		return 0, err
	}
	if n < 0 || pre+n < 0 {
		return 0, ErrInvalidLength
	}
	if pre+n > end {
		return 0, io.ErrUnexpectedEOF
	}
	return pre + n, nil
}

// entryString reads an entry with a string value.
func entryString[K ~string, V ~string](s *state, b []byte, i, end int) (K, V, error) {
	var (
		k   K
		v   V
		err error
	)
	for i < end {
		pre := i
		var x uint64
		if x, i, err = varint(b, i); err != nil {
			return k, v, err
		}
		switch int32(x >> 3) {
		case 1:
			k, i, err = str[K](s, b, i)
		case 2:
			v, i, err = str[V](s, b, i)
		default:
			i, err = entrySkip(b, pre, end)
		}
		if err != nil {
			return k, v, err
		}
	}
	return k, v, nil
}

// entryBytes reads an entry with a bytes value.
func entryBytes[K ~string, V ~[]byte](s *state, b []byte, i, end int) (K, V, error) {
	var (
		k   K
		v   = V{}
		err error
	)
	for i < end {
		pre := i
		var x uint64
		if x, i, err = varint(b, i); err != nil {
			return k, v, err
		}
		switch int32(x >> 3) {
		case 1:
			k, i, err = str[K](s, b, i)
		case 2:
			v, i, err = byteSlice[V](s, b, i)
		default:
			i, err = entrySkip(b, pre, end)
		}
		if err != nil {
			return k, v, err
		}
	}
	return k, v, nil
}
