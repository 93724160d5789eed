package projection

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// pbStream reads protobuf fields from a buffered reader, one at a time.
type pbStream struct {
	r       *bufio.Reader
	scratch [10]byte
}

// varint reads a varint and returns it with its bytes as they were on the
// wire (valid until the next call). At the end of the input it returns
// io.EOF if no byte of the varint was read, io.ErrUnexpectedEOF otherwise.
func (s *pbStream) varint() (uint64, []byte, error) {
	for i := range s.scratch {
		c, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF && i > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, nil, err
		}
		s.scratch[i] = c
		if c < 0x80 {
			v, _, err := pbVarint(s.scratch[:i+1])
			return v, s.scratch[:i+1], err
		}
	}
	return 0, nil, errors.New("varint overflows 64 bits")
}

// length reads the length of a length-delimited field, which must not
// exceed left (the bytes left in the enclosing message) nor pbMaxLen.
func (s *pbStream) length(left uint64) (uint64, []byte, error) {
	l, raw, err := s.varint()
	if err != nil {
		return 0, nil, pbUnexpectedEOF(err)
	}
	if uint64(len(raw)) > left || l > pbMaxLen || l > left-uint64(len(raw)) {
		return 0, nil, fmt.Errorf("length %d beyond the input", l)
	}
	return l, raw, nil
}

// skip reads and drops the value of a field of wire type wt (its tag read),
// returning how many bytes it took.
func (s *pbStream) skip(wt int, left uint64) (uint64, error) {
	switch wt {
	case pbWireVarint:
		_, raw, err := s.varint()
		if err != nil {
			return 0, pbUnexpectedEOF(err)
		}
		if uint64(len(raw)) > left {
			return 0, errors.New("varint beyond the input")
		}
		return uint64(len(raw)), nil
	case pbWireFixed64, pbWireFixed32:
		n := 8
		if wt == pbWireFixed32 {
			n = 4
		}
		if uint64(n) > left {
			return 0, fmt.Errorf("%s value beyond the input", pbWireTypeName(wt))
		}
		m, err := s.r.Discard(n)
		if err != nil {
			return uint64(m), pbUnexpectedEOF(err)
		}
		return uint64(n), nil
	default: // pbWireBytes; pbSplitTag refused the others
		l, raw, err := s.length(left)
		if err != nil {
			return 0, err
		}
		if _, err := s.r.Discard(int(l)); err != nil {
			return 0, pbUnexpectedEOF(err)
		}
		return uint64(len(raw)) + l, nil
	}
}

// pbUnexpectedEOF turns an end of input inside a field into
// io.ErrUnexpectedEOF.
func pbUnexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// filterList reads the enveloped list r (the "k8s\x00" magic and a
// runtime.Unknown holding e.g. a PodList message) and returns it with each
// item filtered as filterObject filters an object's message: only the
// fields p keeps, and MarkerAnnotation set to fingerprint. The list's
// ListMeta and the envelope's other fields are kept. r is read incrementally:
// only the item being filtered is held, beside the output. A body whose kind
// is not p's list kind is returned unchanged.
func (p *pbPlan) filterList(r io.Reader, fingerprint string) ([]byte, error) {
	s := &pbStream{r: bufio.NewReaderSize(r, 32<<10)}
	var magic [4]byte
	if _, err := io.ReadFull(s.r, magic[:]); err != nil || string(magic[:]) != string(pbMagic) {
		return nil, fmt.Errorf("projection: protobuf list does not start with the magic bytes %q", pbMagic)
	}
	out := append([]byte(nil), pbMagic...)
	var (
		kind    string
		buf     []byte // the field being read: a small envelope field, an item
		encoded bool   // a content encoding was seen
	)
	for {
		tag, rawTag, err := s.varint()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("projection: protobuf list envelope: field tag: %w", err)
		}
		num, wt, err := pbSplitTag(tag)
		if err != nil {
			return nil, fmt.Errorf("projection: protobuf list envelope: %w", err)
		}
		switch num {
		case pbUnknownTypeMeta, pbUnknownRaw, pbUnknownContentEncoding, pbUnknownContentType:
			if wt != pbWireBytes {
				return nil, fmt.Errorf("projection: protobuf list envelope: field %d has wire type %s, want %s", num, pbWireTypeName(wt), pbWireTypeName(pbWireBytes))
			}
		}
		if num == pbUnknownRaw && kind == p.listKind {
			if encoded {
				return nil, errors.New("projection: protobuf list envelope: unsupported content encoding")
			}
			if out, buf, err = p.filterListMessage(s, out, buf, fingerprint); err != nil {
				return nil, err
			}
			continue
		}
		if num == pbUnknownRaw {
			// Not a list of p's kind (or a kind yet unknown): pass the
			// body through as it is.
			if kind == "" {
				return nil, errors.New("projection: protobuf list envelope: no kind before the object")
			}
			out = append(out, rawTag...)
			rest, err := io.ReadAll(s.r)
			if err != nil {
				return nil, err
			}
			return append(out, rest...), nil
		}
		// Any other envelope field is copied as it is.
		out = append(out, rawTag...)
		if wt != pbWireBytes {
			n, err := s.copyScalar(wt)
			if err != nil {
				return nil, fmt.Errorf("projection: protobuf list envelope: field %d: %w", num, err)
			}
			out = append(out, n...)
			continue
		}
		l, rawLen, err := s.length(pbMaxLen + 16)
		if err != nil {
			return nil, fmt.Errorf("projection: protobuf list envelope: field %d: %w", num, err)
		}
		if buf, err = pbReadFull(s.r, buf, int(l)); err != nil {
			return nil, fmt.Errorf("projection: protobuf list envelope: field %d: %w", num, err)
		}
		out = append(out, rawLen...)
		out = append(out, buf...)
		switch num {
		case pbUnknownTypeMeta:
			k, found, err := pbTypeMetaKind(buf)
			if err != nil {
				return nil, fmt.Errorf("projection: protobuf list envelope: type meta: %w", err)
			}
			if found {
				kind = string(k)
			}
		case pbUnknownContentEncoding:
			if len(buf) > 0 {
				if kind == p.listKind {
					return nil, fmt.Errorf("projection: protobuf list envelope: unsupported content encoding %q", buf)
				}
				encoded = true
			}
		}
	}
	return out, nil
}

// copyScalar reads the value of a varint or fixed-size field and returns
// its bytes (valid until the next read).
func (s *pbStream) copyScalar(wt int) ([]byte, error) {
	if wt == pbWireVarint {
		_, raw, err := s.varint()
		return raw, pbUnexpectedEOF(err)
	}
	n := 8
	if wt == pbWireFixed32 {
		n = 4
	}
	if _, err := io.ReadFull(s.r, s.scratch[:n]); err != nil {
		return nil, pbUnexpectedEOF(err)
	}
	return s.scratch[:n], nil
}

// filterListMessage reads the list message (its length first: the raw
// field's tag is read) and appends to out the raw field holding the list
// message with its items filtered. buf is reused to read each item.
func (p *pbPlan) filterListMessage(s *pbStream, out, buf []byte, fingerprint string) ([]byte, []byte, error) {
	errorf := func(format string, args ...any) error {
		return fmt.Errorf("projection: protobuf %s: "+format, append([]any{p.listKind}, args...)...)
	}
	size, _, err := s.length(pbMaxLen + 16)
	if err != nil {
		return out, buf, errorf("%w", err)
	}
	out, at, room := pbBeginNested(out, pbUnknownRaw, int(size))
	for left := size; left > 0; {
		tag, raw, err := s.varint()
		if err != nil {
			return out, buf, errorf("field tag: %w", pbUnexpectedEOF(err))
		}
		var tagBuf [10]byte // raw is overwritten by the next read
		rawTag := tagBuf[:copy(tagBuf[:], raw)]
		if uint64(len(rawTag)) > left {
			return out, buf, errorf("field tag beyond the list's end")
		}
		left -= uint64(len(rawTag))
		num, wt, err := pbSplitTag(tag)
		if err != nil {
			return out, buf, errorf("%w", err)
		}
		if num != pbListMeta && num != pbListItems {
			// Not a field of a list: dropped.
			n, err := s.skip(wt, left)
			if err != nil {
				return out, buf, errorf("field %d: %w", num, err)
			}
			left -= n
			continue
		}
		if wt != pbWireBytes {
			return out, buf, errorf("field %d has wire type %s, want %s", num, pbWireTypeName(wt), pbWireTypeName(pbWireBytes))
		}
		l, rawLen, err := s.length(left)
		if err != nil {
			return out, buf, errorf("field %d: %w", num, err)
		}
		left -= uint64(len(rawLen)) + l
		if buf, err = pbReadFull(s.r, buf, int(l)); err != nil {
			return out, buf, errorf("field %d: %w", num, err)
		}
		if num == pbListMeta {
			out = append(out, rawTag...)
			out = append(out, rawLen...)
			out = append(out, buf...)
			continue
		}
		if out, err = p.appendObject(out, pbListItems, buf, fingerprint); err != nil {
			return out, buf, err
		}
	}
	return pbEndNested(out, at, room), buf, nil
}
