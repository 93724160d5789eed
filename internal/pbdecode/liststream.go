package pbdecode

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ListResult is what ReadList makes of a LIST answer's body.
type ListResult struct {
	// Decoded reports that the list the body carries was decoded into the
	// object ReadList was given: the client is to use that object, once its
	// decoding of Body (a list of the same kind without items and without
	// list metadata) succeeds. When false, the object holds nothing of use
	// and the client's decoding of Body gives the body's result.
	Decoded bool
	// Body is what the client reads and decodes in place of the original
	// body. Decoding it gives the result decoding the original would have
	// given: the same error, or (unless Decoded) the same object. Reading it
	// fails with the original's read error when reading the original
	// failed.
	Body io.Reader
}

// ErrListEnvelope is the error reading a ListResult's Body returns for a
// body whose envelope has, after the list's bytes, a field the streaming
// read cannot honour once the list is decoded (a second type, which would
// have the list's bytes decoded as another kind, or a group). No API server
// writes such an envelope.
var ErrListEnvelope = errors.New("pbdecode: protobuf list envelope has a type or a group after the object")

// maxHeadField bounds each envelope field before the object (its TypeMeta,
// content encoding and content type, a few bytes each from an API server):
// a larger one leaves the body to the client as it is.
const maxHeadField = 64 << 10

// maxRawLength bounds the declared length of the object's bytes that ReadList
// decodes as they arrive; a larger one leaves the body to the client as it
// is (the client then fails on it as it would).
const maxRawLength = 1 << 46

// readListBuffer is the size of the buffer ReadList reads through.
const readListBuffer = 32 << 10

// ReadList reads body, a protobuf answer to a LIST (the "k8s\x00" prefix, a
// runtime.Unknown envelope, the list's message), decoding the list's fields
// into into as they arrive, item after item, so that the body is never held
// whole: it holds one item's bytes at a time, besides the decoded objects.
// into must be a pointer to a list type Supports accepts; gvk is the kind
// the client decodes the answer into into as (the scheme's kind of into).
//
// The client then decodes ListResult.Body in place of body, through the
// same decoder it would have decoded body with. Every outcome is the one
// the client would have had with body: the same decoded list when
// ListResult.Decoded (into, as Unmarshal decodes it; Body then carries the
// envelope with no list bytes, so that its decoding checks the envelope as
// the client's would have), or, when not, the same object or error from
// decoding Body. Bodies ReadList does not decode as they arrive are passed
// on unchanged: not protobuf, an envelope of another kind or with fields it
// does not expect before the object, a declared length beyond bounds. When
// the list's bytes fail to decode, Body is an envelope holding the failing
// field alone (as the decoders read a message's fields in order and their
// errors do not depend on the fields before, its decoding fails with the
// same error); when the body ends inside the list's bytes, Body is the
// envelope cut at the same place; when reading body fails, reading Body
// fails with the same error. The one exception is ErrListEnvelope.
//
// While a Verification is active, ReadList keeps a copy of the body and
// compares every list it decodes with the generated protobuf code's
// decoding of the whole.
func ReadList(body io.Reader, into runtime.Object, gvk schema.GroupVersionKind) ListResult {
	r, ok := roots[reflect.TypeOf(into)]
	if !ok || reflect.ValueOf(into).IsNil() {
		return ListResult{Body: body}
	}
	v := activeVerification.Load()
	var copied *bytes.Buffer
	if v != nil {
		copied = &bytes.Buffer{}
		body = io.TeeReader(body, copied)
	}
	src := &recordingReader{r: body}
	lr := &listReader{br: bufio.NewReaderSize(src, readListBuffer), src: src, root: r, into: into}
	lr.kind = gvk
	res := lr.read()
	if v != nil && res.Decoded {
		v.checkStreamedList(copied.Bytes(), into)
	}
	return res
}

// recordingReader is a body that remembers its read error: the end of the
// body (io.EOF) is not one, any other error is, io.ErrUnexpectedEOF
// included (net/http's, for a body shorter than its Content-Length).
type recordingReader struct {
	r   io.Reader
	err error
}

func (r *recordingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF && r.err == nil {
		r.err = err
	}
	return n, err
}

// listReader is one ReadList.
type listReader struct {
	br   *bufio.Reader
	src  *recordingReader
	root root
	into runtime.Object
	// items is into's Items field (invalid when into has none).
	items reflect.Value
	// head is every byte read before the object's bytes: the prefix, the
	// envelope fields before the object, the object's tag and length.
	head []byte
	// rawAt is where the object's field starts in head.
	rawAt int
	// field is the field of the list being read.
	field []byte
	// env is the envelope's type as read before the object, and kind the
	// kind it must give.
	env  envelope
	kind schema.GroupVersionKind
}

// errVarintOverflow is a varint longer than ten bytes.
var errVarintOverflow = errors.New("varint overflows 64 bits")

// errVarintCut is a varint that does not end within the bytes allowed.
var errVarintCut = errors.New("varint beyond its message")

// varint reads a varint of at most max bytes, appending its bytes to *dst.
// At the end of the input it returns io.EOF when no byte was read and
// io.ErrUnexpectedEOF otherwise; other read errors are returned as they are.
func (l *listReader) varint(dst *[]byte, max uint64) (uint64, error) {
	var x uint64
	for i := uint64(0); ; i++ {
		if i == max {
			return 0, errVarintCut
		}
		if i == 10 {
			return 0, errVarintOverflow
		}
		c, err := l.br.ReadByte()
		if err != nil {
			if err == io.EOF && i > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		*dst = append(*dst, c)
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, nil
		}
	}
}

// readN appends the next n bytes to dst, growing it as the bytes arrive (a
// declared length allocates nothing ahead of what was read).
func (l *listReader) readN(dst []byte, n uint64) ([]byte, error) {
	for n > 0 {
		step := n
		if free := uint64(cap(dst) - len(dst)); free == 0 {
			grow := uint64(len(dst))
			if grow < 4096 {
				grow = 4096
			}
			if grow > step {
				grow = step
			}
			dst = append(dst[:cap(dst)], make([]byte, grow)...)[:len(dst)]
			step = grow
		} else if step > free {
			step = free
		}
		m, err := io.ReadFull(l.br, dst[len(dst):len(dst)+int(step)])
		dst = dst[:len(dst)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return dst, err
		}
		n -= step
	}
	return dst, nil
}

// passOn leaves the body as it is: what was read, then the rest.
func (l *listReader) passOn() ListResult {
	return ListResult{Body: io.MultiReader(bytes.NewReader(l.head), l.br)}
}

// failed is the result of a read error: reading the body fails with it.
func failed(err error) ListResult {
	return ListResult{Body: errReader{err}}
}

// errReader is a reader failing with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// read reads the body; see ReadList.
func (l *listReader) read() ListResult {
	l.head = make([]byte, len(protobufPrefix), 64)
	n, err := io.ReadFull(l.br, l.head)
	l.head = l.head[:n]
	switch {
	case l.src.err != nil:
		return failed(l.src.err)
	case err == io.EOF || err == io.ErrUnexpectedEOF || !bytes.Equal(l.head, protobufPrefix):
		return l.passOn()
	case err != nil:
		return failed(err)
	}
	for {
		at := len(l.head)
		tag, err := l.varint(&l.head, math.MaxUint64)
		if err != nil {
			return l.stopHead(err)
		}
		num := tag >> 3
		if tag&7 != 2 || num < 1 || num > 4 {
			// Not what an API server writes (unknown fields, other wire
			// types): the client's decoder decides.
			return l.passOn()
		}
		length, err := l.varint(&l.head, math.MaxUint64)
		if err != nil {
			return l.stopHead(err)
		}
		if num == 2 {
			if !l.env.is(l.kind) || length > maxRawLength {
				return l.passOn()
			}
			l.rawAt = at
			return l.readRaw(length)
		}
		if length > maxHeadField {
			return l.passOn()
		}
		valueAt := len(l.head)
		if l.head, err = l.readN(l.head, length); err != nil {
			return l.stopHead(err)
		}
		if num == 1 && !l.env.parseTypeMeta(l.head[valueAt:]) {
			return l.passOn()
		}
	}
}

// stopHead is the result of err while reading the envelope before the
// object: the body as it is when the input ended or did not parse (the
// client's decoder meets the same end), the read error otherwise.
func (l *listReader) stopHead(err error) ListResult {
	if l.src.err != nil {
		return failed(l.src.err)
	}
	switch err {
	case io.EOF, io.ErrUnexpectedEOF, errVarintOverflow:
		return l.passOn()
	}
	return failed(err)
}

// readRaw decodes the list's message, length bytes, field by field, then
// reads the rest of the envelope.
func (l *listReader) readRaw(length uint64) ListResult {
	var s state
	// Reset into as Unmarshal does (decoding no bytes cannot fail).
	_ = l.root.decode(&s, nil, l.into)
	if v := reflect.ValueOf(l.into).Elem(); v.Kind() == reflect.Struct {
		if f := v.FieldByName("Items"); f.IsValid() && f.Kind() == reflect.Slice {
			l.items = f
		}
	}
	left := length
	for left > 0 {
		seg := l.field[:0]
		tag, stop, ok := l.rawVarint(&seg, left)
		if !ok {
			return stop
		}
		num := tag >> 3
		if tag&7 != 2 || num < 1 || num > math.MaxInt32 {
			// Other wire types and unusual tags: the generated decoder
			// reads the rest of the message as it would.
			return l.decodeRest(seg, left)
		}
		n, stop, ok := l.rawVarint(&seg, left)
		if !ok {
			return stop
		}
		if n > left-uint64(len(seg)) {
			return l.decodeRest(seg, left)
		}
		seg, err := l.readN(seg, n)
		if err != nil {
			return l.cut(err)
		}
		l.field = seg
		left -= uint64(len(seg))
		if num == 2 {
			l.reserveItem(uint64(len(seg)), left)
		}
		s.begin(l.root.size, seg)
		if err := l.root.merge(&s, seg, l.into); err != nil {
			return l.decodeFailed(seg, left)
		}
	}
	return l.finish(nil)
}

// rawVarint reads a varint of the list's message into *seg, the current
// field's bytes, within the left bytes of the message from seg's start.
// When the varint does not end in time, or the body ends or fails, ok is
// false and stop is the result: the generated decoder decodes the rest of
// the message as it is, or the body is cut, or failed.
func (l *listReader) rawVarint(seg *[]byte, left uint64) (x uint64, stop ListResult, ok bool) {
	x, err := l.varint(seg, left-uint64(len(*seg)))
	switch err {
	case nil:
		return x, ListResult{}, true
	case errVarintCut, errVarintOverflow:
		return 0, l.decodeRest(*seg, left), false
	}
	return 0, l.cut(err), false
}

// maxPresize bounds the bytes ReadList sets aside for a list's items before
// they arrive, on the estimate its first item and the declared length of
// the list give: an answer that declares more than it sends costs at most
// this much.
const maxPresize = 32 << 20

// reserveItem makes room for one more item in into's Items: for the first
// item, about as many as the list's declared length holds items of the
// first one's size (itemLen bytes with its tag and length; left bytes of
// the list after it), within maxPresize; afterwards, when full, twice the
// room. The generated code appends each item, and growing by append (by a
// quarter, for large slices) would copy the items many times over; every
// copy of an item costs a write barrier per pointer while the collector
// marks.
func (l *listReader) reserveItem(itemLen, left uint64) {
	if !l.items.IsValid() || l.items.Len() < l.items.Cap() {
		return
	}
	c := 2 * l.items.Cap()
	if l.items.Cap() == 0 {
		c = 1
		if itemLen > 0 {
			c += int(min(left/itemLen+left/itemLen/16, math.MaxInt32))
		}
		if size := l.items.Type().Elem().Size(); size > 0 && uint64(c)*uint64(size) > maxPresize {
			c = int(maxPresize / size)
		}
	}
	if c < 16 {
		c = 16
	}
	grown := reflect.MakeSlice(l.items.Type(), l.items.Len(), c)
	reflect.Copy(grown, l.items)
	l.items.Set(grown)
}

// decodeRest reads what is left of the list's message after seg, which
// starts its current field, and decodes seg and that rest at once.
func (l *listReader) decodeRest(seg []byte, left uint64) ListResult {
	seg, err := l.readN(seg, left-uint64(len(seg)))
	if err != nil {
		return l.cut(err)
	}
	l.field = seg
	var s state
	s.begin(l.root.size, seg)
	if err := l.root.merge(&s, seg, l.into); err != nil {
		return l.decodeFailed(seg, 0)
	}
	return l.finish(nil)
}

// cut is the result of err while reading the list's message: when the body
// ended, the envelope cut inside the object, as the body was; otherwise
// the read error.
func (l *listReader) cut(err error) ListResult {
	if l.src.err != nil {
		return failed(l.src.err)
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return ListResult{Body: bytes.NewReader(l.head)}
	}
	return failed(err)
}

// decodeFailed is the result of seg, a field of the list's message, failing
// to decode, with left bytes of the message after it: once the rest of
// the body is read (its end or its read error wins, as the client's reading
// and its envelope check come first), an envelope holding seg alone.
func (l *listReader) decodeFailed(seg []byte, left uint64) ListResult {
	for left > 0 {
		step := left
		if step > math.MaxInt32 {
			step = math.MaxInt32
		}
		if _, err := l.br.Discard(int(step)); err != nil {
			return l.cut(err)
		}
		left -= step
	}
	return l.finish(seg)
}

// finish reads the envelope after the object and returns the result: with
// a nil failing, the list is decoded and Body the envelope with an empty
// object; otherwise Body is the envelope with failing as the object.
func (l *listReader) finish(failing []byte) ListResult {
	trailer, err := io.ReadAll(l.br)
	if err != nil {
		return failed(err)
	}
	tagLen := 0
	for l.head[l.rawAt+tagLen] >= 0x80 {
		tagLen++
	}
	tagLen++
	out := make([]byte, 0, l.rawAt+tagLen+binary.MaxVarintLen64+len(failing)+len(trailer))
	out = append(out, l.head[:l.rawAt+tagLen]...)
	out = binary.AppendUvarint(out, uint64(len(failing)))
	out = append(out, failing...)
	out = append(out, trailer...)
	switch laterObject, laterType := l.scanTrailer(trailer); {
	case laterType:
		return failed(ErrListEnvelope)
	case failing != nil || laterObject:
		// The failing field, or a later object, which replaces the first
		// as in the client's decoding of the whole body: Body carries it.
		return ListResult{Body: bytes.NewReader(out)}
	}
	return ListResult{Decoded: true, Body: bytes.NewReader(out)}
}

// scanTrailer reads the envelope's fields after the object: laterObject when
// one is a second object, laterType when one is a type giving another kind
// than l.kind, or a group (either would change how the first object
// decodes). It stops at the first field that does not parse, which the
// client's decoding of the envelope meets too.
func (l *listReader) scanTrailer(b []byte) (laterObject, laterType bool) {
	env := l.env
	for i := 0; i < len(b); {
		tag, next, err := varint(b, i)
		if err != nil {
			return
		}
		switch tag >> 3 {
		case 1:
			if tag&7 == 2 {
				if start, end, err := span(b, next); err == nil && env.parseTypeMeta(b[start:end]) && env.is(l.kind) {
					break
				}
			}
			laterType = true
		case 2:
			laterObject = true
		}
		switch tag & 7 {
		case 0:
			if _, next, err = varint(b, next); err != nil {
				return
			}
		case 1:
			next += 8
		case 2:
			if _, next, err = span(b, next); err != nil {
				return
			}
		case 5:
			next += 4
		default:
			laterType = true
			return
		}
		i = next
	}
	return
}

// checkStreamedList compares into, a list ReadList decoded from body, with
// the generated protobuf code's decoding of body's object. A body whose
// envelope the generated code refuses is not checked: the client's
// decoding of ListResult.Body, which carries the same envelope fields,
// fails on it.
func (v *Verification) checkStreamedList(body []byte, into runtime.Object) {
	var unk runtime.Unknown
	if len(body) < len(protobufPrefix) || unk.Unmarshal(body[len(protobufPrefix):]) != nil {
		return
	}
	v.decoded.Add(1)
	want := reflect.New(reflect.TypeOf(into).Elem()).Interface()
	u, ok := want.(interface{ Unmarshal([]byte) error })
	if !ok {
		return
	}
	if err := u.Unmarshal(unk.Raw); err != nil {
		v.differ("%T streamed (%d bytes): decoded as it arrived, the generated code fails: %v", into, len(body), err)
		return
	}
	if !reflect.DeepEqual(want, into) {
		v.differ("%T streamed (%d bytes): decoded differently from the generated code in %v", into, len(body), differingFields(want, into))
	}
}

// is reports whether e's type is gvk's, as an API server writes it.
func (e *envelope) is(gvk schema.GroupVersionKind) bool {
	return e.kind == gvk.Kind && e.apiVersion == gvk.GroupVersion().String()
}
