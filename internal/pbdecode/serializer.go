package pbdecode

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// protobufPrefix starts every protobuf-encoded object (the runtime.Unknown
// envelope follows), as apimachinery's protobuf serializer writes and
// requires it.
var protobufPrefix = []byte{0x6b, 0x38, 0x73, 0x00} // "k8s\x00"

// NewNegotiatedSerializer returns base, a client's negotiated serializer
// (such as rest.CodecFactoryForGeneratedClient(scheme.Scheme,
// scheme.Codecs).WithoutConversion()) whose protobuf serializers use the
// scheme s (the object typer and creater base's protobuf serializers were
// built with), with its protobuf media type decoding through Unmarshal:
//
//   - the object decoder reads the runtime.Unknown envelope without copying
//     the object's bytes, and decodes them with Unmarshal when the object
//     it decodes into (into, or a new object of the envelope's kind, as
//     apimachinery picks it) is of a type Supports accepts;
//   - the stream decoder reads each metav1.WatchEvent frame without copying
//     the event's Object.Raw: Raw then aliases the frame, which the caller
//     must decode before it reads the next frame (client-go's rest/watch
//     Decoder does: it decodes the embedded object within the Decode call
//     that read its frame, and the streaming decoder reuses its buffer only
//     on the next call).
//
// Everything else (other media types, encoding, an into of type
// *runtime.Unknown or unknown to s, envelopes or messages that do not parse)
// goes to base's own serializers, and whenever the generated decoder fails,
// base's serializer decodes the same bytes again to return its own error.
// The objects, group-version-kinds and errors returned are those base
// returns for the same bytes. It is safe for concurrent use.
func NewNegotiatedSerializer(s *runtime.Scheme, base runtime.NegotiatedSerializer) runtime.NegotiatedSerializer {
	infos := append([]runtime.SerializerInfo(nil), base.SupportedMediaTypes()...)
	for i := range infos {
		info := &infos[i]
		if info.MediaType != runtime.ContentTypeProtobuf || info.Serializer == nil {
			continue
		}
		wrapped := &objectSerializer{Serializer: info.Serializer, scheme: s}
		if info.StrictSerializer == info.Serializer {
			// Protobuf has no strict decoding: apimachinery gives the
			// same serializer for both.
			info.StrictSerializer = wrapped
		}
		info.Serializer = wrapped
		if info.StreamSerializer != nil && info.StreamSerializer.Serializer != nil {
			stream := *info.StreamSerializer
			stream.Serializer = &watchEventSerializer{Serializer: stream.Serializer, scheme: s}
			info.StreamSerializer = &stream
		}
	}
	return &negotiatedSerializer{NegotiatedSerializer: base, infos: infos}
}

// negotiatedSerializer is base with its protobuf serializers wrapped; its
// encoders and decoders for a version are base's, around those serializers.
type negotiatedSerializer struct {
	runtime.NegotiatedSerializer
	infos []runtime.SerializerInfo
}

// SupportedMediaTypes returns base's media types, the protobuf one with
// the wrapped serializers.
func (n *negotiatedSerializer) SupportedMediaTypes() []runtime.SerializerInfo {
	return n.infos
}

// objectSerializer is apimachinery's protobuf serializer (prefix, envelope,
// object) decoding the objects of supported types with Unmarshal.
type objectSerializer struct {
	runtime.Serializer
	scheme *runtime.Scheme
}

// Decode decodes data as the wrapped serializer does, giving the same
// object, group-version-kind and error.
func (d *objectSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, actual, ok := d.decode(data, defaults, into)
	if !ok {
		return d.Serializer.Decode(data, defaults, into)
	}
	return obj, actual, nil
}

// decode is the generated decoder's path of Decode, each step as
// apimachinery's protobuf.Serializer.Decode takes it; ok is false when data
// or into leaves that path (the wrapped serializer then decodes data), or
// when the generated decoder failed (the wrapped serializer then fails on
// data with its own error).
func (d *objectSerializer) decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, bool) {
	if len(data) <= len(protobufPrefix) || !bytes.Equal(data[:len(protobufPrefix)], protobufPrefix) {
		return nil, nil, false
	}
	var env envelope
	if !env.parse(data[len(protobufPrefix):]) {
		return nil, nil, false
	}
	actual := schema.FromAPIVersionAndKind(env.apiVersion, env.kind)
	copyKindDefaults(&actual, defaults)
	if _, isUnknown := into.(*runtime.Unknown); isUnknown || !completeKind(d.scheme, into, &actual) {
		return nil, nil, false
	}
	obj, err := runtime.UseOrCreateObject(d.scheme, d.scheme, actual, into)
	if err != nil || !Supports(obj) {
		return nil, nil, false
	}
	v := activeVerification.Load()
	if err := Unmarshal(env.raw, obj); err != nil {
		if v != nil {
			v.checkFailure(d.Serializer, data, defaults, into, err)
		}
		return nil, nil, false
	}
	obj.GetObjectKind().SetGroupVersionKind(actual)
	if v != nil {
		v.checkObject(d.Serializer, data, defaults, into, obj, actual)
	}
	return obj, &actual, true
}

// completeKind completes actual from the kind of into (when not nil) as
// apimachinery's protobuf serializers do, and reports whether the result
// has a kind and a version. It reports false too when into's kind cannot be
// read (a type the scheme does not know): the wrapped serializer then
// decodes, as it does such types.
func completeKind(s *runtime.Scheme, into runtime.Object, actual *schema.GroupVersionKind) bool {
	if into != nil {
		types, _, err := s.ObjectKinds(into)
		if err != nil {
			return false
		}
		copyKindDefaults(actual, &types[0])
		// The group of into when nothing gave a group or version.
		if actual.Version == "" && actual.Group == "" {
			actual.Group = types[0].Group
		}
	}
	return actual.Kind != "" && actual.Version != ""
}

// copyKindDefaults fills dst's kind, and its group and version together,
// from src where dst has none, as apimachinery's protobuf serializer does.
func copyKindDefaults(dst, src *schema.GroupVersionKind) {
	if src == nil {
		return
	}
	if dst.Kind == "" {
		dst.Kind = src.Kind
	}
	if dst.Version == "" && src.Version != "" {
		dst.Group = src.Group
		dst.Version = src.Version
	}
}

// envelope is what Decode needs of a runtime.Unknown message: its
// TypeMeta and Raw, Raw aliasing the message.
type envelope struct {
	apiVersion, kind string
	raw              []byte
}

// parse reads b as runtime.Unknown's generated Unmarshal does (a TypeMeta
// field merges into the one before it, a later string or raw replaces an
// earlier one), for messages of the four fields of runtime.Unknown in
// their wire type only; it reports false for anything else (unknown
// fields, other wire types, malformed or truncated input), which the
// generated code may accept or not: the caller then leaves the message to
// it.
func (e *envelope) parse(b []byte) bool {
	for i := 0; i < len(b); {
		num, start, end, ok := lengthDelimited(b, i)
		if !ok {
			return false
		}
		switch num {
		case 1: // typeMeta
			if !e.parseTypeMeta(b[start:end]) {
				return false
			}
		case 2: // raw
			e.raw = b[start:end:end]
		case 3, 4: // contentEncoding, contentType: not used by the decoder
		default:
			return false
		}
		i = end
	}
	return true
}

// parseTypeMeta reads a metav1/runtime TypeMeta message into e.
func (e *envelope) parseTypeMeta(b []byte) bool {
	for i := 0; i < len(b); {
		num, start, end, ok := lengthDelimited(b, i)
		if !ok {
			return false
		}
		switch num {
		case 1:
			e.apiVersion = string(b[start:end])
		case 2:
			e.kind = string(b[start:end])
		default:
			return false
		}
		i = end
	}
	return true
}

// lengthDelimited reads the field at b[i:], which must be length-delimited
// (wire type 2) with a field number that fits an int32 as the tag's whole
// value: it returns the field number and the span of its value.
func lengthDelimited(b []byte, i int) (num uint64, start, end int, ok bool) {
	tag, i, err := varint(b, i)
	if err != nil || tag&7 != 2 || tag>>3 == 0 || tag>>3 > 1<<31-1 {
		return 0, 0, 0, false
	}
	start, end, err = span(b, i)
	if err != nil {
		return 0, 0, 0, false
	}
	return tag >> 3, start, end, true
}

// watchEventSerializer is apimachinery's raw protobuf serializer of watch
// streams, reading each frame's metav1.WatchEvent without copying its
// Object.Raw.
type watchEventSerializer struct {
	runtime.Serializer
	scheme *runtime.Scheme
}

// Decode decodes data as the wrapped serializer does, giving the same
// event, group-version-kind and error, except that a metav1.WatchEvent's
// Object.Raw aliases data (see NewNegotiatedSerializer).
func (d *watchEventSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if obj, actual, ok := d.decode(data, defaults, into); ok {
		return obj, actual, nil
	}
	return d.Serializer.Decode(data, defaults, into)
}

// decode is Decode's path for a metav1.WatchEvent, each step as
// apimachinery's protobuf.RawSerializer.Decode takes it; ok is false when
// data or into leaves it.
func (d *watchEventSerializer) decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, bool) {
	event, isEvent := into.(*metav1.WatchEvent)
	if !isEvent || event == nil || len(data) == 0 {
		return nil, nil, false
	}
	actual := &schema.GroupVersionKind{}
	copyKindDefaults(actual, defaults)
	if !completeKind(d.scheme, into, actual) {
		return nil, nil, false
	}
	if obj, err := runtime.UseOrCreateObject(d.scheme, d.scheme, *actual, into); err != nil || obj != into {
		return nil, nil, false
	}
	var parsed metav1.WatchEvent
	if !parseWatchEvent(data, &parsed) {
		return nil, nil, false
	}
	if v := activeVerification.Load(); v != nil {
		v.checkWatchEvent(d.Serializer, data, defaults, &parsed, *actual)
	}
	*event = parsed
	event.GetObjectKind().SetGroupVersionKind(*actual)
	return event, actual, true
}

// parseWatchEvent reads b into e as metav1.WatchEvent's generated
// Unmarshal does (into a reset event; an object field merges into the one
// before it, a later type or raw replaces an earlier one), Object.Raw
// aliasing b; it reports false for anything but the two fields in their
// wire types, well formed.
func parseWatchEvent(b []byte, e *metav1.WatchEvent) bool {
	for i := 0; i < len(b); {
		num, start, end, ok := lengthDelimited(b, i)
		if !ok {
			return false
		}
		switch num {
		case 1: // type
			e.Type = eventType(b[start:end])
		case 2: // object, a runtime.RawExtension
			obj := b[start:end]
			for j := 0; j < len(obj); {
				num, start, end, ok := lengthDelimited(obj, j)
				if !ok || num != 1 {
					return false
				}
				e.Object.Raw = obj[start:end:end]
				j = end
			}
		default:
			return false
		}
		i = end
	}
	return true
}

// eventType returns b as a string, the constant of a watch event type
// when b spells one (so that each event does not allocate its type).
func eventType(b []byte) string {
	for _, t := range [...]string{"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"} {
		if string(b) == t {
			return t
		}
	}
	return string(b)
}
