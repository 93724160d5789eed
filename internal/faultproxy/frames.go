package faultproxy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

const (
	jsonMediaType     = "application/json"
	protobufMediaType = "application/vnd.kubernetes.protobuf"
	// maxFrame bounds a protobuf frame the proxy reads (the client's own limit is larger;
	// events bigger than this are not produced by the tests).
	maxFrame = 64 << 20
)

// encoding is the wire format of one response.
type encoding int

const (
	encJSON encoding = iota
	encProtobuf
)

// responseEncoding reads the encoding from a Content-Type header; anything but protobuf is
// taken as JSON.
func responseEncoding(contentType string) encoding {
	mt, _, err := mime.ParseMediaType(contentType)
	if err == nil && mt == protobufMediaType {
		return encProtobuf
	}
	return encJSON
}

// acceptedEncoding is the encoding a synthesized response uses: protobuf when the client
// lists it first in Accept, JSON otherwise.
func acceptedEncoding(r *http.Request) encoding {
	first, _, _ := strings.Cut(r.Header.Get("Accept"), ",")
	if responseEncoding(strings.TrimSpace(first)) == encProtobuf {
		return encProtobuf
	}
	return encJSON
}

// watchContentType is the Content-Type of a watch response in enc.
func watchContentType(enc encoding) string {
	if enc == encProtobuf {
		return protobufMediaType + ";stream=watch"
	}
	return jsonMediaType
}

// frameReader reads the frames of a watch stream: newline-terminated JSON documents, or
// protobuf messages behind a 4-byte big-endian length.
type frameReader struct {
	enc encoding
	br  *bufio.Reader
}

func newFrameReader(enc encoding, r io.Reader) *frameReader {
	return &frameReader{enc: enc, br: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next complete frame, bytes as on the wire (delimiter or length prefix
// included). At the end of the stream it returns what is left (possibly a partial frame)
// with the error.
func (f *frameReader) next() ([]byte, error) {
	if f.enc == encJSON {
		return f.br.ReadBytes('\n')
	}
	var head [4]byte
	if n, err := io.ReadFull(f.br, head[:]); err != nil {
		return head[:n], err
	}
	size := binary.BigEndian.Uint32(head[:])
	if size > maxFrame {
		return head[:], fmt.Errorf("faultproxy: protobuf frame of %d bytes", size)
	}
	frame := make([]byte, 4+int(size))
	copy(frame, head[:])
	n, err := io.ReadFull(f.br, frame[4:])
	return frame[:4+n], err
}

// garbage returns bytes that are no frame of enc: for JSON, a line that is not JSON; for
// protobuf, a well-formed length prefix followed by bytes that are not a WatchEvent.
func garbage(enc encoding) []byte {
	if enc == encJSON {
		return []byte("\x00\x01<faultproxy garbage>{]\n")
	}
	body := []byte("\x0f\xff\xfe<faultproxy garbage>")
	out := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(out, uint32(len(body)))
	return append(out, body...)
}

// expiredStatus is the Status of a 410 for an expired resourceVersion.
func expiredStatus() *metav1.Status {
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  "too old resource version (injected by faultproxy)",
		Reason:   metav1.StatusReasonExpired,
		Code:     http.StatusGone,
	}
}

// noWatchListStatus is kube-apiserver's answer to a streaming list when its WatchList
// feature is off.
func noWatchListStatus() *metav1.Status {
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Message:  "ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled (injected by faultproxy)",
		Reason:   metav1.StatusReasonInvalid,
		Code:     http.StatusUnprocessableEntity,
	}
}

// errorStatus is a Status for an HTTP error code.
func errorStatus(code int, retryAfter int) *metav1.Status {
	s := &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Code:     int32(code),
	}
	switch code {
	case http.StatusGone:
		return expiredStatus()
	case http.StatusTooManyRequests:
		s.Reason, s.Message = metav1.StatusReasonTooManyRequests, "too many requests (injected by faultproxy)"
	case http.StatusInternalServerError:
		s.Reason, s.Message = metav1.StatusReasonInternalError, "internal error (injected by faultproxy)"
	case http.StatusServiceUnavailable:
		s.Reason, s.Message = metav1.StatusReasonServiceUnavailable, "service unavailable (injected by faultproxy)"
	default:
		s.Reason, s.Message = metav1.StatusReasonUnknown, http.StatusText(code)
	}
	if retryAfter > 0 {
		s.Details = &metav1.StatusDetails{RetryAfterSeconds: int32(retryAfter)}
	}
	return s
}

// encodeObject encodes obj (with its apiVersion and kind set) as an object embedded in a
// watch event: plain JSON, or protobuf in the "k8s\x00" envelope.
func encodeObject(enc encoding, obj runtime.Object) ([]byte, error) {
	if enc == encJSON {
		return json.Marshal(obj)
	}
	var buf bytes.Buffer
	if err := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme).Encode(obj, &buf); err != nil {
		return nil, fmt.Errorf("faultproxy: protobuf encoding of %T: %w", obj, err)
	}
	return buf.Bytes(), nil
}

// encodeEvent returns one framed watch event. raw is the embedded object, as encodeObject
// makes it; nil makes an event without an object.
func encodeEvent(enc encoding, eventType string, raw []byte) ([]byte, error) {
	ev := metav1.WatchEvent{Type: eventType, Object: runtime.RawExtension{Raw: raw}}
	if enc == encJSON {
		b, err := json.Marshal(&ev)
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	}
	b, err := ev.Marshal()
	if err != nil {
		return nil, err
	}
	out := make([]byte, 4, 4+len(b))
	binary.BigEndian.PutUint32(out, uint32(len(b)))
	return append(out, b...), nil
}

// frameObjectInfo is what the proxy learns from one watch event: its type and its object's
// apiVersion, kind and namespace, and whether it carries the annotation of the bookmark
// that ends a streaming list's initial events.
type frameObjectInfo struct {
	eventType        string
	gvk              schema.GroupVersionKind
	namespace        string
	initialEventsEnd bool
}

// inspectFrame decodes a framed watch event far enough to learn frameObjectInfo.
func inspectFrame(enc encoding, frame []byte) (frameObjectInfo, error) {
	var info frameObjectInfo
	if enc == encJSON {
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Namespace   string            `json:"namespace"`
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			} `json:"object"`
		}
		if err := json.Unmarshal(frame, &ev); err != nil {
			return info, err
		}
		info.eventType, info.namespace = ev.Type, ev.Object.Metadata.Namespace
		info.initialEventsEnd = ev.Object.Metadata.Annotations[metav1.InitialEventsAnnotationKey] == "true"
		info.gvk = schema.FromAPIVersionAndKind(ev.Object.APIVersion, ev.Object.Kind)
		return info, nil
	}
	if len(frame) < 4 {
		return info, errors.New("faultproxy: short protobuf frame")
	}
	var ev metav1.WatchEvent
	if err := ev.Unmarshal(frame[4:]); err != nil {
		return info, err
	}
	info.eventType = ev.Type
	obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(ev.Object.Raw, nil, nil)
	if err != nil {
		return info, err
	}
	info.gvk = *gvk
	if m, ok := obj.(metav1.Object); ok {
		info.namespace = m.GetNamespace()
		info.initialEventsEnd = m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
	}
	return info, nil
}

// badEvent builds the framed event a WrongType, NoObject or BookmarkNoRV fault inserts
// into a stream whose next event is like.
func badEvent(kind Kind, enc encoding, like frameObjectInfo) ([]byte, error) {
	switch kind {
	case NoObject:
		return encodeEvent(enc, "ADDED", nil)
	case WrongType:
		var obj runtime.Object
		meta := metav1.ObjectMeta{Name: "faultproxy-intruder", Namespace: like.namespace, ResourceVersion: "1"}
		if like.gvk.Kind == "ConfigMap" && like.gvk.Group == "" {
			obj = &corev1.Secret{TypeMeta: metav1.TypeMeta{Kind: "Secret", APIVersion: "v1"}, ObjectMeta: meta}
		} else {
			obj = &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"}, ObjectMeta: meta}
		}
		raw, err := encodeObject(enc, obj)
		if err != nil {
			return nil, err
		}
		return encodeEvent(enc, "MODIFIED", raw)
	case BookmarkNoRV:
		if like.gvk.Kind == "" {
			return nil, errors.New("faultproxy: the stream's kind is unknown")
		}
		var raw []byte
		var err error
		if enc == encJSON {
			raw, err = json.Marshal(map[string]any{
				"apiVersion": like.gvk.GroupVersion().String(), "kind": like.gvk.Kind, "metadata": map[string]any{},
			})
		} else {
			var obj runtime.Object
			if obj, err = scheme.Scheme.New(like.gvk); err == nil {
				obj.GetObjectKind().SetGroupVersionKind(like.gvk)
				raw, err = encodeObject(enc, obj)
			}
		}
		if err != nil {
			return nil, err
		}
		return encodeEvent(enc, "BOOKMARK", raw)
	}
	return nil, fmt.Errorf("faultproxy: %s inserts no event", kind)
}

// encodeStatusBody encodes a Status as an HTTP error body (always JSON, which every client
// decodes).
func encodeStatusBody(s *metav1.Status) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		return []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure"}`)
	}
	return b
}
