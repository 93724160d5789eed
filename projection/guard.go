package projection

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	"k8s.io/client-go/rest"
)

const (
	mediaCBOR           = "application/cbor"
	mediaApplyPatchCBOR = "application/apply-patch+cbor"
)

// ErrProjectedWrite is the error (wrapped in the client's own) of a write
// Guard refused because its body carries MarkerAnnotation: the object sent
// was read from a projected informer and lacks every field its projection
// left out.
var ErrProjectedWrite = errors.New("projection: refusing to send a projected object to the server: it lacks the fields its projection dropped; read the object from the server (or patch only the fields you change) instead")

// Guard returns a RoundTripper that sends requests through rt, except the
// writes (POST, PUT and PATCH) whose body carries MarkerAnnotation: for
// those it returns an error wrapping ErrProjectedWrite without sending
// anything. That catches an Update of a projected object, a Create of one,
// and a Patch whose body holds one (a server-side apply of it, or a merge
// patch computed against an empty object). A CBOR body (application/cbor,
// application/apply-patch+cbor: what client-go sends with its CBOR feature
// gates on) is decoded and refused when it sets
// metadata.annotations[MarkerAnnotation]; one that does not decode is
// refused with ErrUndecodableWrite. In JSON, YAML and protobuf the marker
// counts as a key (the same text elsewhere, such as inside a ConfigMap's
// data or as the start of a longer key, does not count). A nil rt means
// http.DefaultTransport.
func Guard(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &guard{next: rt}
}

// GuardConfig returns a copy of config whose clients' writes pass through
// Guard. Use it for the clients of a controller that reads from projected
// informers.
func GuardConfig(config *rest.Config) *rest.Config {
	c := rest.CopyConfig(config)
	c.Wrap(Guard)
	return c
}

type guard struct{ next http.RoundTripper }

func (g *guard) WrappedRoundTripper() http.RoundTripper { return g.next }

// markerKeys are the forms MarkerAnnotation takes as a key in a request
// body: a JSON string, a YAML key, and a protobuf map entry's key field
// (field 1, its length, the key). A longer key that starts with it, or the
// text inside a longer string, is none of them.
var markerKeys = [][]byte{
	[]byte(`"` + MarkerAnnotation + `"`),
	[]byte(MarkerAnnotation + ":"),
	append([]byte{0x0a, byte(len(MarkerAnnotation))}, MarkerAnnotation...),
}

// carriesMarker reports whether a request body holds MarkerAnnotation as a
// key.
func carriesMarker(body []byte) bool {
	for _, k := range markerKeys {
		if bytes.Contains(body, k) {
			return true
		}
	}
	return false
}

func (g *guard) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch:
	default:
		return g.next.RoundTrip(req)
	}
	if req.Body == nil || req.Body == http.NoBody {
		return g.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	if err := checkWriteBody(req.Header, body); err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	return g.next.RoundTrip(out)
}

// ErrUndecodableWrite is the error (wrapped in the client's own) of a write
// Guard refused because it cannot read the body, so cannot tell whether it
// carries MarkerAnnotation.
var ErrUndecodableWrite = errors.New("projection: refusing to send a write whose body Guard cannot decode")

// checkWriteBody returns ErrProjectedWrite when body, sent with header,
// carries MarkerAnnotation, ErrUndecodableWrite (wrapped) when it cannot be
// read, and nil otherwise.
func checkWriteBody(header http.Header, body []byte) error {
	mediaType, _, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err == nil && (mediaType == mediaCBOR || mediaType == mediaApplyPatchCBOR) {
		var obj any
		if err := direct.Unmarshal(body, &obj); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUndecodableWrite, mediaType, err)
		}
		if setsMarker(obj) {
			return ErrProjectedWrite
		}
		return nil
	}
	if carriesMarker(body) {
		return ErrProjectedWrite
	}
	return nil
}

// setsMarker reports whether obj, a decoded object or patch, sets
// metadata.annotations[MarkerAnnotation] to a value (a null value removes
// the annotation in a patch, and sets nothing in an object).
func setsMarker(obj any) bool {
	m, _ := obj.(map[string]any)
	metadata, _ := m["metadata"].(map[string]any)
	annotations, _ := metadata["annotations"].(map[string]any)
	v, ok := annotations[MarkerAnnotation]
	return ok && v != nil
}
