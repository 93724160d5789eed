package projection

import (
	"bytes"
	"fmt"
)

// filterObject appends to dst the enveloped object src (the "k8s\x00" magic
// and a runtime.Unknown holding the object's message) with only the fields
// p keeps, and with MarkerAnnotation set to fingerprint. An object of
// another kind than p's (a Status in a watch's ERROR event) is appended
// unchanged. Malformed input returns an error, never a partial object.
func (p *pbPlan) filterObject(dst, src []byte, fingerprint string) ([]byte, error) {
	if !bytes.HasPrefix(src, pbMagic) {
		return dst, fmt.Errorf("projection: protobuf object does not start with the magic bytes %q", pbMagic)
	}
	env := src[len(pbMagic):]
	kind, err := pbEnvelopeKind(env)
	if err != nil {
		return dst, fmt.Errorf("projection: protobuf object envelope: %w", err)
	}
	if string(kind) != p.kind {
		return append(dst, src...), nil
	}
	start := len(dst)
	dst = append(dst, pbMagic...)
	sawRaw := false
	for b := env; len(b) > 0; {
		f, _ := pbNextField(b) // pbEnvelopeKind checked every field
		b = b[len(f.raw):]
		if f.num != pbUnknownRaw {
			dst = append(dst, f.raw...)
			continue
		}
		sawRaw = true
		dst, err = p.appendObject(dst, pbUnknownRaw, f.value, fingerprint)
		if err != nil {
			return dst[:start], err
		}
	}
	if !sawRaw {
		// An object with no field at all: it still gets its marker.
		dst, _ = p.appendObject(dst, pbUnknownRaw, nil, fingerprint)
	}
	return dst, nil
}

// pbEnvelopeKind checks the fields of the runtime.Unknown env and returns
// the kind it names (aliasing env). A content encoding (never used by
// Kubernetes) is refused, as the object bytes would not be a protobuf
// message.
func pbEnvelopeKind(env []byte) ([]byte, error) {
	var kind []byte
	for len(env) > 0 {
		f, err := pbNextField(env)
		if err != nil {
			return nil, err
		}
		env = env[len(f.raw):]
		switch f.num {
		case pbUnknownTypeMeta, pbUnknownRaw, pbUnknownContentEncoding, pbUnknownContentType:
			if err := pbCheckWire(f, pbWireBytes, false); err != nil {
				return nil, err
			}
		}
		switch f.num {
		case pbUnknownTypeMeta:
			k, found, err := pbTypeMetaKind(f.value)
			if err != nil {
				return nil, fmt.Errorf("type meta: %w", err)
			}
			if found {
				kind = k
			}
		case pbUnknownContentEncoding:
			if len(f.value) > 0 {
				return nil, fmt.Errorf("unsupported content encoding %q", f.value)
			}
		}
	}
	return kind, nil
}

// pbTypeMetaKind returns the kind in the runtime.TypeMeta message b
// (aliasing b), and whether b has one.
func pbTypeMetaKind(b []byte) ([]byte, bool, error) {
	var kind []byte
	found := false
	for len(b) > 0 {
		f, err := pbNextField(b)
		if err != nil {
			return nil, false, err
		}
		b = b[len(f.raw):]
		if f.num == pbTypeMetaKindNum {
			if err := pbCheckWire(f, pbWireBytes, false); err != nil {
				return nil, false, err
			}
			kind, found = f.value, true
		}
	}
	return kind, found, nil
}

// appendObject appends field num holding the object message src filtered by
// p, with the marker added to its metadata (created if src has none).
func (p *pbPlan) appendObject(dst []byte, num uint64, src []byte, fingerprint string) ([]byte, error) {
	dst, at, room := pbBeginNested(dst, num, len(src)+len(MarkerAnnotation)+len(fingerprint)+8)
	dst, err := p.filterTop(dst, src, fingerprint)
	if err != nil {
		return dst, err
	}
	return pbEndNested(dst, at, room), nil
}

// filterTop appends the fields p keeps of the object message src, with the
// marker added to its metadata.
func (p *pbPlan) filterTop(dst, src []byte, fingerprint string) ([]byte, error) {
	sawMeta := false
	for len(src) > 0 {
		f, err := pbNextField(src)
		if err != nil {
			return dst, fmt.Errorf("projection: protobuf %s: %w", p.typeName, err)
		}
		src = src[len(f.raw):]
		if f.num == p.metaNum {
			if err := pbCheckWire(f, pbWireBytes, false); err != nil {
				return dst, fmt.Errorf("projection: protobuf %s: %w", p.typeName, err)
			}
			dst, err = p.appendMeta(dst, f.value, fingerprint, !sawMeta)
			if err != nil {
				return dst, err
			}
			sawMeta = true
			continue
		}
		if p.top == nil {
			dst = append(dst, f.raw...)
			continue
		}
		if dst, err = p.top.filterField(dst, f); err != nil {
			return dst, err
		}
	}
	if !sawMeta {
		dst, _ = p.appendMeta(dst, nil, fingerprint, true)
	}
	return dst, nil
}

// appendMeta appends the metadata field holding the ObjectMeta message src
// filtered by p.meta. Every annotation MarkerAnnotation of src is dropped
// and, if withMarker, the marker is added with fingerprint as its value.
func (p *pbPlan) appendMeta(dst, src []byte, fingerprint string, withMarker bool) ([]byte, error) {
	dst, at, room := pbBeginNested(dst, p.metaNum, len(src)+len(MarkerAnnotation)+len(fingerprint)+8)
	for b := src; len(b) > 0; {
		f, err := pbNextField(b)
		if err != nil {
			return dst, fmt.Errorf("projection: protobuf %s: %w", pbTypeName(objectMetaType), err)
		}
		b = b[len(f.raw):]
		if f.num == p.annotationsNum {
			if err := pbCheckWire(f, pbWireBytes, false); err != nil {
				return dst, fmt.Errorf("projection: protobuf %s: %w", pbTypeName(objectMetaType), err)
			}
			key, err := pbEntryKey(f.value)
			if err != nil {
				return dst, fmt.Errorf("projection: protobuf %s: annotations: %w", pbTypeName(objectMetaType), err)
			}
			if string(key) == MarkerAnnotation {
				continue
			}
		}
		if p.meta.keep {
			dst = append(dst, f.raw...)
			continue
		}
		if dst, err = p.meta.msg.filterField(dst, f); err != nil {
			return dst, err
		}
	}
	if withMarker {
		dst, eat, eroom := pbBeginNested(dst, p.annotationsNum, len(MarkerAnnotation)+len(fingerprint)+4)
		dst = pbAppendBytesField(dst, pbMapKey, []byte(MarkerAnnotation))
		dst = pbAppendBytesField(dst, pbMapValue, []byte(fingerprint))
		dst = pbEndNested(dst, eat, eroom)
		return pbEndNested(dst, at, room), nil
	}
	return pbEndNested(dst, at, room), nil
}

// filter appends the fields m keeps of the message src.
func (m *pbMsg) filter(dst, src []byte) ([]byte, error) {
	for len(src) > 0 {
		f, err := pbNextField(src)
		if err != nil {
			return dst, fmt.Errorf("projection: protobuf %s: %w", m.typeName, err)
		}
		src = src[len(f.raw):]
		if dst, err = m.filterField(dst, f); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// filterField appends what m keeps of field f of its message: nothing if m
// does not name it.
func (m *pbMsg) filterField(dst []byte, f pbRawField) ([]byte, error) {
	fp := m.fields[f.num]
	if fp == nil {
		return dst, nil
	}
	if err := pbCheckWire(f, fp.wire, fp.packed); err != nil {
		return dst, fmt.Errorf("projection: protobuf %s: %w", m.typeName, err)
	}
	switch {
	case fp.drop:
		return dst, nil
	case fp.keep:
		return append(dst, f.raw...), nil
	case fp.isMap:
		return m.filterEntry(dst, f, fp)
	default:
		dst, at, room := pbBeginNested(dst, f.num, len(f.value))
		dst, err := fp.msg.filter(dst, f.value)
		if err != nil {
			return dst, err
		}
		return pbEndNested(dst, at, room), nil
	}
}

// filterEntry appends what fp keeps of the map entry f: nothing if its key
// is not kept, the whole entry or the entry with its value filtered.
func (m *pbMsg) filterEntry(dst []byte, f pbRawField, fp *pbFieldPlan) ([]byte, error) {
	key, err := pbEntryKey(f.value)
	if err != nil {
		return dst, fmt.Errorf("projection: protobuf %s: field %d: %w", m.typeName, f.num, err)
	}
	valueMsg, kept := fp.keys[string(key)]
	switch {
	case !kept:
		return dst, nil
	case valueMsg == nil:
		return append(dst, f.raw...), nil
	}
	dst, at, room := pbBeginNested(dst, f.num, len(f.value))
	for b := f.value; len(b) > 0; {
		ef, _ := pbNextField(b) // pbEntryKey checked every field
		b = b[len(ef.raw):]
		switch ef.num {
		case pbMapKey:
			dst = append(dst, ef.raw...)
		case pbMapValue:
			if err := pbCheckWire(ef, pbWireBytes, false); err != nil {
				return dst, fmt.Errorf("projection: protobuf %s: field %d: map value: %w", m.typeName, f.num, err)
			}
			vdst, vat, vroom := pbBeginNested(dst, pbMapValue, len(ef.value))
			vdst, err := valueMsg.filter(vdst, ef.value)
			if err != nil {
				return vdst, err
			}
			dst = pbEndNested(vdst, vat, vroom)
		}
	}
	return pbEndNested(dst, at, room), nil
}

// pbEntryKey checks the fields of the map entry b (a message {1: key,
// 2: value}) and returns its string key; the last key wins, as in a
// decoder, and a missing key is the empty string.
func pbEntryKey(b []byte) ([]byte, error) {
	var key []byte
	for len(b) > 0 {
		f, err := pbNextField(b)
		if err != nil {
			return nil, fmt.Errorf("map entry: %w", err)
		}
		b = b[len(f.raw):]
		if f.num == pbMapKey {
			if err := pbCheckWire(f, pbWireBytes, false); err != nil {
				return nil, fmt.Errorf("map key: %w", err)
			}
			key = f.value
		}
	}
	return key, nil
}
