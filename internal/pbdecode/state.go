package pbdecode

import (
	"unsafe"
)

// state is one decoding's working memory: the storage the current object's
// strings and byte slices are cut from. Each object (a top-level object, or
// one item of a list) gets storage of its own, sized by a first pass over
// its message, so that no object keeps another's bytes alive and nothing
// is reused across objects.
type state struct {
	// arena holds the current object's string and byte data: len is what
	// is used, cap what was reserved. Bytes below len are never written
	// again: strings point into them.
	arena []byte
}

// minChunk is the smallest storage reserved when an object's first pass
// under-estimated it (which only a malformed message can make happen).
const minChunk = 64

// begin reserves storage for the object whose message is b, sized by z.
func (s *state) begin(z *sizer, b []byte) {
	if n := z.size(b); n > 0 {
		s.arena = make([]byte, 0, n)
	} else {
		s.arena = nil
	}
}

// take copies p into the object's storage and returns the copy, with
// capacity equal to its length.
func (s *state) take(p []byte) []byte {
	n := len(p)
	if cap(s.arena)-len(s.arena) < n {
		c := n
		if c < minChunk {
			c = minChunk
		}
		s.arena = make([]byte, 0, c)
	}
	start := len(s.arena)
	s.arena = append(s.arena, p...)
	return s.arena[start : start+n : start+n]
}

// str reads a length-delimited string field's value at b[i:] into the
// object's storage.
func str[T ~string](s *state, b []byte, i int) (T, int, error) {
	start, end, err := span(b, i)
	if err != nil {
		return "", 0, err
	}
	if start == end {
		return "", end, nil
	}
	p := s.take(b[start:end])
	return T(unsafe.String(&p[0], len(p))), end, nil
}

// strOf copies the string value v (a field's value bytes) into the object's
// storage.
func strOf[T ~string](s *state, v []byte) T {
	if len(v) == 0 {
		return ""
	}
	p := s.take(v)
	return T(unsafe.String(&p[0], len(p)))
}

// bytesOf copies the bytes value v into the object's storage; an empty value
// is an empty, non-nil slice.
func bytesOf[T ~[]byte](s *state, v []byte) T {
	if len(v) == 0 {
		return T{}
	}
	return T(s.take(v))
}

// byteSlice reads a length-delimited bytes field's value at b[i:] into the
// object's storage. An empty value is an empty, non-nil slice, as the
// generated code makes it.
func byteSlice[T ~[]byte](s *state, b []byte, i int) (T, int, error) {
	start, end, err := span(b, i)
	if err != nil {
		return nil, 0, err
	}
	if start == end {
		return T{}, end, nil
	}
	return T(s.take(b[start:end])), end, nil
}

// Size kinds of a sizer's fields.
const (
	sizeSkip uint8 = iota // not stored as bytes (or stored elsewhere)
	sizeData              // a string or bytes value: its length
	sizeMsg               // a message: what its own fields need
)

// sizer is what a first pass needs of a message type: which of its
// length-delimited fields are strings or bytes and which are messages.
type sizer struct {
	kinds []uint8  // by field number
	subs  []*sizer // by field number, for sizeMsg
}

// size returns the bytes of string and bytes values the message b holds,
// nested messages included. A malformed message ends the count early;
// decoding reports it.
func (z *sizer) size(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		// The tag, its one-byte case inline.
		x := uint64(b[i])
		if x < 0x80 {
			i++
		} else {
			var err error
			if x, i, err = varintSlow(b, i); err != nil {
				return n
			}
		}
		switch x & 7 {
		case 0:
			for i < len(b) && b[i] >= 0x80 {
				i++
			}
			i++
			continue
		case 2:
		default:
			if i = skipValue(b, i, x&7); i < 0 {
				return n
			}
			continue
		}
		// A length-delimited value, its one-byte length inline.
		var ln int
		if i < len(b) && b[i] < 0x80 {
			ln = int(b[i])
			i++
		} else {
			l, next, err := varintSlow(b, i)
			if err != nil || int(l) < 0 {
				return n
			}
			ln, i = int(l), next
		}
		end := i + ln
		if end > len(b) || end < i {
			return n
		}
		if num := x >> 3; num < uint64(len(z.kinds)) {
			switch z.kinds[num] {
			case sizeData:
				n += ln
			case sizeMsg:
				n += z.subs[num].size(b[i:end])
			}
		}
		i = end
	}
	return n
}

// noSize is the sizer of messages without strings or bytes.
var noSize = &sizer{}

// dataSize is the sizer of a map entry whose key and value are strings or
// bytes.
var dataSize = &sizer{kinds: []uint8{1: sizeData, 2: sizeData}}

// entrySize returns the sizer of a map entry with a string key and a
// message value sized by value.
func entrySize(value *sizer) *sizer {
	return &sizer{kinds: []uint8{1: sizeData, 2: sizeMsg}, subs: []*sizer{2: value}}
}
