package projection

import (
	"errors"
	"fmt"
	"io"
	"slices"
)

// Protobuf wire types (the low three bits of a field's tag).
const (
	pbWireVarint  = 0
	pbWireFixed64 = 1
	pbWireBytes   = 2
	pbWireStart   = 3 // start of a group: deprecated, never used by Kubernetes
	pbWireEnd     = 4 // end of a group
	pbWireFixed32 = 5
)

// pbMaxLen bounds every length read from the wire: a length-delimited
// field, a list item, a watch frame. Protobuf messages cannot exceed 2 GiB.
const pbMaxLen = 1 << 31

// pbMaxFieldNum is the largest field number protobuf allows.
const pbMaxFieldNum = 1<<29 - 1

// pbMagic starts every body the Kubernetes protobuf serializer writes: "k8s"
// and a zero byte, then a runtime.Unknown message.
var pbMagic = []byte{'k', '8', 's', 0}

// Field numbers of the messages around objects on the wire.
const (
	// runtime.Unknown: the envelope of every protobuf body.
	pbUnknownTypeMeta        = 1
	pbUnknownRaw             = 2
	pbUnknownContentEncoding = 3
	pbUnknownContentType     = 4
	// runtime.TypeMeta inside the envelope.
	pbTypeMetaKindNum = 2
	// A list kind's message (PodList...): its ListMeta and its items.
	pbListMeta  = 1
	pbListItems = 2
	// metav1.WatchEvent and the runtime.RawExtension holding its object.
	pbEventType   = 1
	pbEventObject = 2
	pbRawExtRaw   = 1
	// A protobuf map's entry message.
	pbMapKey   = 1
	pbMapValue = 2
)

// errPBTruncatedVarint reports input ending inside a varint.
var errPBTruncatedVarint = errors.New("truncated varint")

// pbWireTypeName names a wire type in error messages.
func pbWireTypeName(wt int) string {
	switch wt {
	case pbWireVarint:
		return "varint"
	case pbWireFixed64:
		return "fixed64"
	case pbWireBytes:
		return "length-delimited"
	case pbWireStart:
		return "group start"
	case pbWireEnd:
		return "group end"
	case pbWireFixed32:
		return "fixed32"
	}
	return fmt.Sprintf("invalid (%d)", wt)
}

// pbVarint decodes the varint at the start of b and returns it with the
// number of bytes it takes.
func pbVarint(b []byte) (uint64, int, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		if i == len(b) {
			return 0, 0, errPBTruncatedVarint
		}
		c := b[i]
		if i == 9 && c > 1 {
			return 0, 0, errors.New("varint overflows 64 bits")
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("varint overflows 64 bits")
}

// pbAppendVarint appends v as a varint.
func pbAppendVarint(dst []byte, v uint64) []byte {
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// pbVarintLen is the number of bytes of v as a varint.
func pbVarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// pbAppendTag appends the tag of field num with wire type wt.
func pbAppendTag(dst []byte, num uint64, wt int) []byte {
	return pbAppendVarint(dst, num<<3|uint64(wt))
}

// pbAppendBytesField appends field num holding the bytes v.
func pbAppendBytesField(dst []byte, num uint64, v []byte) []byte {
	dst = pbAppendTag(dst, num, pbWireBytes)
	dst = pbAppendVarint(dst, uint64(len(v)))
	return append(dst, v...)
}

// pbSplitTag splits a tag into its field number and wire type, refusing
// field number 0, numbers beyond protobuf's range and invalid wire types.
func pbSplitTag(tag uint64) (uint64, int, error) {
	num, wt := tag>>3, int(tag&7)
	switch {
	case num == 0:
		return 0, 0, errors.New("field number 0")
	case num > pbMaxFieldNum:
		return 0, 0, fmt.Errorf("field number %d out of range", num)
	case wt == pbWireStart || wt == pbWireEnd:
		return 0, 0, fmt.Errorf("field %d has group wire type %s, which Kubernetes never uses", num, pbWireTypeName(wt))
	case wt > pbWireFixed32:
		return 0, 0, fmt.Errorf("field %d has invalid wire type %d", num, wt)
	}
	return num, wt, nil
}

// pbRawField is one field read from a message.
type pbRawField struct {
	num uint64
	wt  int
	// raw is the whole field: tag, length (if any) and value.
	raw []byte
	// tagLen is the length of the tag in raw.
	tagLen int
	// value is the field's value; for a length-delimited field the bytes
	// after the length.
	value []byte
}

// pbNextField reads the field at the start of b.
func pbNextField(b []byte) (pbRawField, error) {
	tag, n, err := pbVarint(b)
	if err != nil {
		return pbRawField{}, fmt.Errorf("field tag: %w", err)
	}
	num, wt, err := pbSplitTag(tag)
	if err != nil {
		return pbRawField{}, err
	}
	f := pbRawField{num: num, wt: wt, tagLen: n}
	rest := b[n:]
	var size int
	switch wt {
	case pbWireVarint:
		_, m, err := pbVarint(rest)
		if err != nil {
			return pbRawField{}, fmt.Errorf("field %d: %w", num, err)
		}
		f.value = rest[:m]
		size = m
	case pbWireFixed64, pbWireFixed32:
		m := 8
		if wt == pbWireFixed32 {
			m = 4
		}
		if len(rest) < m {
			return pbRawField{}, fmt.Errorf("field %d: truncated %s value (%d bytes left, want %d)", num, pbWireTypeName(wt), len(rest), m)
		}
		f.value = rest[:m]
		size = m
	case pbWireBytes:
		l, m, err := pbVarint(rest)
		if err != nil {
			return pbRawField{}, fmt.Errorf("field %d: length: %w", num, err)
		}
		if l > pbMaxLen || l > uint64(len(rest)-m) {
			return pbRawField{}, fmt.Errorf("field %d: length %d beyond the input (%d bytes left)", num, l, len(rest)-m)
		}
		f.value = rest[m : m+int(l)]
		size = m + int(l)
	}
	f.raw = b[:n+size]
	return f, nil
}

// pbCheckWire reports a field whose wire type is not the one its message
// declares.
func pbCheckWire(f pbRawField, want int, packed bool) error {
	if f.wt == want || packed && f.wt == pbWireBytes {
		return nil
	}
	return fmt.Errorf("field %d has wire type %s, want %s", f.num, pbWireTypeName(f.wt), pbWireTypeName(want))
}

// pbBeginNested appends the tag of the length-delimited field num and room
// for its length, which will be at most sizeHint; it returns where the length
// goes and how much room was left. pbEndNested writes the length once the
// value follows.
func pbBeginNested(dst []byte, num uint64, sizeHint int) ([]byte, int, int) {
	dst = pbAppendTag(dst, num, pbWireBytes)
	at := len(dst)
	room := pbVarintLen(uint64(sizeHint))
	for range room {
		dst = append(dst, 0)
	}
	return dst, at, room
}

// pbEndNested writes the length of the value appended since pbBeginNested,
// moving the value if its length takes more or less room than was left.
func pbEndNested(dst []byte, at, room int) []byte {
	size := len(dst) - at - room
	need := pbVarintLen(uint64(size))
	switch {
	case need < room:
		copy(dst[at+need:], dst[at+room:])
		dst = dst[:len(dst)-(room-need)]
	case need > room:
		dst = slices.Grow(dst, need-room)[:len(dst)+need-room]
		copy(dst[at+need:], dst[at+room:at+room+size])
	}
	pbAppendVarint(dst[at:at], uint64(size))
	return dst
}

// pbReadFull reads exactly n bytes of r into buf (reusing its storage) and
// returns them. It grows buf as the bytes arrive, so that a length announced
// by corrupt input costs no more memory than the input really holds.
func pbReadFull(r io.Reader, buf []byte, n int) ([]byte, error) {
	buf = buf[:0]
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(n-len(buf), max(cap(buf), 64<<10)))
		}
		chunk := min(n-len(buf), cap(buf)-len(buf))
		m, err := io.ReadFull(r, buf[len(buf):len(buf)+chunk])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
	}
	return buf, nil
}
