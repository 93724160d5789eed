package pbdecode

import (
	"errors"
	"fmt"
	"io"
	"unsafe"
)

// The errors a malformed message ends with. io.ErrUnexpectedEOF is returned
// as itself, as apimachinery's generated code returns it, for every read past
// the end of a message.
var (
	// ErrInvalidLength is returned for a length that is negative once read
	// as an int, or that overflows an index.
	ErrInvalidLength = errors.New("proto: negative length found during unmarshaling")
	// ErrIntOverflow is returned for a varint longer than ten bytes.
	ErrIntOverflow = errors.New("proto: integer overflow")
	// ErrUnexpectedEndOfGroup is returned for an end-group tag without its
	// start.
	ErrUnexpectedEndOfGroup = errors.New("proto: unexpected end of group")
)

// varint reads the varint at b[i:] and returns it with the index after it.
// The one-byte case is inlined into callers.
func varint(b []byte, i int) (uint64, int, error) {
	if uint(i) < uint(len(b)) {
		if c := b[i]; c < 0x80 {
			return uint64(c), i + 1, nil
		}
	}
	return varintSlow(b, i)
}

//go:noinline
func varintSlow(b []byte, i int) (uint64, int, error) {
	var x uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, 0, ErrIntOverflow
		}
		if i >= len(b) {
			return 0, 0, io.ErrUnexpectedEOF
		}
		c := b[i]
		i++
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return x, i, nil
		}
	}
}

// skipValue returns the index after the value of a field of wire type wt
// (0, 1, 2 or 5) whose tag ends at i, or -1 when it does not lie within b.
// It is the fast path of the first passes (sizer.size, count), which stop at
// anything else and leave the error to the decoding.
func skipValue(b []byte, i int, wt uint64) int {
	switch wt {
	case 0:
		for ; i < len(b); i++ {
			if b[i] < 0x80 {
				return i + 1
			}
		}
		return -1
	case 1:
		i += 8
	case 2:
		n, next, err := varint(b, i)
		if err != nil || int(n) < 0 {
			return -1
		}
		i = next + int(n)
	case 5:
		i += 4
	default:
		return -1
	}
	if i < 0 || i > len(b) {
		return -1
	}
	return i
}

// tag reads the field tag at b[i:]: its field number (truncated to int32,
// as the generated code does), its wire type, and the index after it. An
// end-group tag and a field number below 1 are errors.
func tag(b []byte, i int, msg string) (int32, int, int, error) {
	x, i, err := varint(b, i)
	if err != nil {
		return 0, 0, 0, err
	}
	num := int32(x >> 3)
	wt := int(x & 7)
	if wt == 4 {
		return 0, 0, 0, fmt.Errorf("proto: %s: wiretype end group for non-group", msg)
	}
	if num <= 0 {
		return 0, 0, 0, fmt.Errorf("proto: %s: illegal tag %d (wire type %d)", msg, num, x)
	}
	return num, wt, i, nil
}

// badTag is the error for a tag tag refuses (an end-group wire type or a
// field number below 1), for the generated code's inlined tag reads.
func badTag(msg string, x uint64) error {
	if x&7 == 4 {
		return fmt.Errorf("proto: %s: wiretype end group for non-group", msg)
	}
	return fmt.Errorf("proto: %s: illegal tag %d (wire type %d)", msg, int32(x>>3), x)
}

// wrongWireType is the error for a known field sent with another wire type
// than its own.
func wrongWireType(wt int, field string) error {
	return fmt.Errorf("proto: wrong wireType = %d for field %s", wt, field)
}

// span reads a length prefix at b[i:] and returns where the value starts and
// ends, which must lie within b.
func span(b []byte, i int) (int, int, error) {
	n, i, err := varint(b, i)
	if err != nil {
		return 0, 0, err
	}
	ln := int(n)
	if ln < 0 {
		return 0, 0, ErrInvalidLength
	}
	end := i + ln
	if end < 0 {
		return 0, 0, ErrInvalidLength
	}
	if end > len(b) {
		return 0, 0, io.ErrUnexpectedEOF
	}
	return i, end, nil
}

// skip skips the unknown field whose tag starts at b[i:] and returns the
// index after it, which must not pass limit (the end of the message or map
// entry the field is in; the field itself is read up to the end of b, as
// the generated code reads it).
func skip(b []byte, i, limit int) (int, error) {
	n, err := skipLen(b[i:])
	if err != nil {
		return 0, err
	}
	if n < 0 || i+n < 0 {
		return 0, ErrInvalidLength
	}
	if i+n > limit {
		return 0, io.ErrUnexpectedEOF
	}
	return i + n, nil
}

// skipLen returns the length of the field (tag included) at the start of b,
// groups included, following the generated code's skip function: the length
// may run past b, which the caller checks.
func skipLen(b []byte) (int, error) {
	i, depth := 0, 0
	for i < len(b) {
		x, next, err := varint(b, i)
		if err != nil {
			return 0, err
		}
		i = next
		switch wt := int(x & 7); wt {
		case 0:
			for shift := uint(0); ; shift += 7 {
				if shift >= 64 {
					return 0, ErrIntOverflow
				}
				if i >= len(b) {
					return 0, io.ErrUnexpectedEOF
				}
				i++
				if b[i-1] < 0x80 {
					break
				}
			}
		case 1:
			i += 8
		case 2:
			var ln int
			for shift := uint(0); ; shift += 7 {
				if shift >= 64 {
					return 0, ErrIntOverflow
				}
				if i >= len(b) {
					return 0, io.ErrUnexpectedEOF
				}
				c := b[i]
				i++
				ln |= int(c&0x7f) << shift
				if c < 0x80 {
					break
				}
			}
			if ln < 0 {
				return 0, ErrInvalidLength
			}
			i += ln
		case 3:
			depth++
		case 4:
			if depth == 0 {
				return 0, ErrUnexpectedEndOfGroup
			}
			depth--
		case 5:
			i += 4
		default:
			return 0, fmt.Errorf("proto: illegal wireType %d", wt)
		}
		if i < 0 {
			return 0, ErrInvalidLength
		}
		if depth == 0 {
			return i, nil
		}
	}
	return 0, io.ErrUnexpectedEOF
}

// count returns how many more length-delimited fields with number num the
// message b holds from i on: the capacity a repeated field or map needs when
// its first element is read. A malformed rest stops the count; the decoding
// reports it.
func count(b []byte, i int, num int32) int {
	n := 0
	for i < len(b) {
		x := uint64(b[i])
		if x < 0x80 {
			i++
		} else {
			var err error
			if x, i, err = varintSlow(b, i); err != nil {
				return n
			}
		}
		if x&7 != 2 {
			if i = skipValue(b, i, x&7); i < 0 {
				return n
			}
			continue
		}
		if int32(x>>3) == num {
			n++
		}
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
		if i += ln; i > len(b) || i < 0 {
			return n
		}
	}
	return n
}

// capHint bounds n, the element count a repeated field or map is
// preallocated for, so that the preallocation never exceeds four times the
// message's input bytes: a count of tiny or empty elements (garbage from a
// server, or a message that fails later) cannot reserve memory out of
// proportion to what was received. Beyond the bound the slice or map grows
// as elements come, as the generated code's append does.
func capHint[E any](n, input int) int {
	size := int(unsafe.Sizeof(*new(E)))
	if size == 0 {
		return n
	}
	if most := 4*input/size + 1; n > most {
		return most
	}
	return n
}
