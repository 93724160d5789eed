package projection

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	k8sprotobuf "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// The media types of the bodies of writes Guard reads, besides mediaJSON
// and mediaProtobuf.
const (
	mediaYAML                = "application/yaml"
	mediaCBOR                = "application/cbor"
	mediaJSONPatch           = "application/json-patch+json"
	mediaMergePatch          = "application/merge-patch+json"
	mediaStrategicMergePatch = "application/strategic-merge-patch+json"
	mediaApplyPatchYAML      = "application/apply-patch+yaml"
	mediaApplyPatchCBOR      = "application/apply-patch+cbor"
)

// ErrProjectedWrite is the error (wrapped in the client's own) of a write
// Guard refused because its body sets MarkerAnnotation: the object sent
// was read from a projected informer and lacks every field its projection
// left out.
var ErrProjectedWrite = errors.New("projection: refusing to send a projected object to the server: it lacks the fields its projection dropped; read the object from the server (or patch only the fields you change) instead")

// ErrUndecodableWrite is the error (wrapped in the client's own, with what
// could not be read) of a write Guard refused because it cannot read the
// body, so cannot tell whether it sets MarkerAnnotation: a body that does
// not decode as its Content-Type says, a media type Guard does not read, a
// protobuf object of a kind client-go's scheme does not know, a JSON Patch
// copying or moving a value into metadata.annotations or one of its
// parents, or a body carrying a Content-Encoding.
var ErrUndecodableWrite = errors.New("projection: refusing to send a write whose body Guard cannot decode")

// Guard returns a RoundTripper that sends requests through rt, except the
// writes (POST, PUT and PATCH with a body) that would store MarkerAnnotation
// on the server, and those it cannot read.
//
// Guard decodes the body by its Content-Type and looks only at
// metadata.annotations[MarkerAnnotation]:
//
//   - an object (application/json, the default when there is no
//     Content-Type; application/yaml; application/cbor, which client-go
//     sends with its CBOR feature gates on; application/vnd.kubernetes.protobuf,
//     decoded by the kind its envelope names with client-go's scheme), a
//     merge patch, a strategic merge patch and a server-side apply patch
//     (application/apply-patch+yaml or +cbor) are refused when they set the
//     annotation to a value (null, which removes it in a patch, does not
//     count);
//   - a JSON Patch (application/json-patch+json) is refused when an add,
//     replace, copy or move operation writes the annotation: its path is
//     /metadata/annotations/kinformer.io~1projection (JSON Pointer escapes
//     decoded), or an add or replace writes a value setting the annotation
//     at /metadata/annotations, /metadata or the whole object; a copy or
//     move into one of those three writes a value Guard cannot see, and is
//     refused as undecodable.
//
// Such a write gets an error wrapping ErrProjectedWrite and is not sent:
// that catches an Update or Create of a projected object and a Patch made
// of one (a server-side apply of it, or a merge patch computed against an
// empty object). The marker's text elsewhere (a label, a ConfigMap's data,
// a longer annotation key) does not count. A body Guard cannot decode (see
// ErrUndecodableWrite) gets an error wrapping ErrUndecodableWrite and is
// not sent either: use a client without Guard for writes that do not carry
// API objects (such as a POST through a service proxy). Other requests,
// and writes without a body, pass through. A body sent is sent unchanged.
//
// A marker an unguarded write saved on the server is removed by a patch
// Guard lets through: a merge patch
// {"metadata":{"annotations":{"kinformer.io/projection":null}}}, or a JSON
// Patch [{"op":"remove","path":"/metadata/annotations/kinformer.io~1projection"}]
// (the fields that write erased are not restored by it).
//
// A nil rt means http.DefaultTransport. The RoundTripper is safe for
// concurrent use.
func Guard(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &guard{next: rt, protobuf: k8sprotobuf.NewSerializer(scheme.Scheme, scheme.Scheme)}
}

// GuardConfig returns a copy of config (which must not be nil) whose
// clients' requests pass through Guard. Use it for the clients of a
// controller that reads from projected informers.
func GuardConfig(config *rest.Config) *rest.Config {
	c := rest.CopyConfig(config)
	c.Wrap(Guard)
	return c
}

type guard struct {
	next http.RoundTripper
	// protobuf decodes protobuf bodies by the kind their envelope names.
	protobuf runtime.Decoder
}

func (g *guard) WrappedRoundTripper() http.RoundTripper { return g.next }

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
	if err := g.check(req.Header, body); err != nil {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))
	return g.next.RoundTrip(out)
}

// check returns an error wrapping ErrProjectedWrite when body, sent with
// header, sets MarkerAnnotation, one wrapping ErrUndecodableWrite when it
// cannot tell, and nil otherwise.
func (g *guard) check(header http.Header, body []byte) error {
	if enc := header.Get("Content-Encoding"); enc != "" {
		return fmt.Errorf("%w: Content-Encoding %q", ErrUndecodableWrite, enc)
	}
	contentType := header.Get("Content-Type")
	mediaType := mediaJSON
	if contentType != "" {
		var err error
		if mediaType, _, err = mime.ParseMediaType(contentType); err != nil {
			return fmt.Errorf("%w: Content-Type %q: %v", ErrUndecodableWrite, contentType, err)
		}
	}
	undecodable := func(err error) error {
		return fmt.Errorf("%w: %s: %v", ErrUndecodableWrite, mediaType, err)
	}
	var obj any
	switch mediaType {
	case mediaJSON, mediaMergePatch, mediaStrategicMergePatch:
		if err := json.Unmarshal(body, &obj); err != nil {
			return undecodable(err)
		}
	case mediaYAML, mediaApplyPatchYAML:
		j, err := yaml.YAMLToJSON(body)
		if err != nil {
			return undecodable(err)
		}
		if err := json.Unmarshal(j, &obj); err != nil {
			return undecodable(err)
		}
	case mediaCBOR, mediaApplyPatchCBOR:
		if err := direct.Unmarshal(body, &obj); err != nil {
			return undecodable(err)
		}
	case mediaProtobuf:
		decoded, _, err := g.protobuf.Decode(body, nil, nil)
		if err != nil {
			return undecodable(err)
		}
		if m, err := meta.Accessor(decoded); err == nil {
			if _, ok := m.GetAnnotations()[MarkerAnnotation]; ok {
				return ErrProjectedWrite
			}
		}
		return nil
	case mediaJSONPatch:
		sets, err := jsonPatchSetsMarker(body)
		if err != nil {
			return undecodable(err)
		}
		if sets {
			return ErrProjectedWrite
		}
		return nil
	default:
		return fmt.Errorf("%w: media type %q", ErrUndecodableWrite, mediaType)
	}
	if setsMarker(obj) {
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

// markerPointer is the JSON Pointer of MarkerAnnotation, decoded into its
// reference tokens.
var markerPointer = [...]string{"metadata", "annotations", MarkerAnnotation}

// jsonPatchSetsMarker reports whether the JSON Patch (RFC 6902) patch
// writes MarkerAnnotation: an add, replace, copy or move whose path is the
// annotation's, or an add or replace whose path is one of its parents
// (the whole object, /metadata, /metadata/annotations) and whose value sets
// it. remove and test operations write nothing. It returns an error for a
// patch that is not a JSON array of operations, an operation without a
// known op, a path that is not a valid JSON Pointer, and a copy or move into
// a parent of the annotation (which writes a value the patch does not show).
func jsonPatchSetsMarker(patch []byte) (bool, error) {
	var ops []map[string]json.RawMessage
	if err := json.Unmarshal(patch, &ops); err != nil {
		return false, err
	}
	for i, op := range ops {
		var name, path string
		if err := json.Unmarshal(op["op"], &name); err != nil {
			return false, fmt.Errorf("operation %d: op: %v", i, err)
		}
		switch name {
		case "add", "replace", "copy", "move":
		case "remove", "test":
			continue
		default:
			return false, fmt.Errorf("operation %d: unknown op %q", i, name)
		}
		if err := json.Unmarshal(op["path"], &path); err != nil {
			return false, fmt.Errorf("operation %d: path: %v", i, err)
		}
		tokens, err := jsonPointerTokens(path)
		if err != nil {
			return false, fmt.Errorf("operation %d: %v", i, err)
		}
		if len(tokens) > len(markerPointer) || !equalTokens(tokens, markerPointer[:len(tokens)]) {
			continue
		}
		if len(tokens) == len(markerPointer) {
			return true, nil
		}
		if name == "copy" || name == "move" {
			// A parent of the annotation gets a value Guard does not see
			// (the server's, or one an earlier operation wrote anywhere).
			return false, fmt.Errorf("operation %d: %s into %q writes a value Guard cannot see", i, name, path)
		}
		var value any
		if raw, ok := op["value"]; ok {
			if err := json.Unmarshal(raw, &value); err != nil {
				return false, fmt.Errorf("operation %d: value: %v", i, err)
			}
		}
		// Wrap the value into a whole object, as if written at the root.
		for j := len(tokens) - 1; j >= 0; j-- {
			value = map[string]any{tokens[j]: value}
		}
		if setsMarker(value) {
			return true, nil
		}
	}
	return false, nil
}

// jsonPointerTokens returns the reference tokens of the JSON Pointer
// (RFC 6901) p, with ~1 decoded to / and ~0 to ~.
func jsonPointerTokens(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("path %q does not start with /", p)
	}
	tokens := strings.Split(p[1:], "/")
	for i, t := range tokens {
		if !strings.Contains(t, "~") {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(t); j++ {
			if t[j] != '~' {
				b.WriteByte(t[j])
				continue
			}
			if j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1') {
				return nil, fmt.Errorf("path %q has an invalid ~ escape", p)
			}
			if t[j+1] == '0' {
				b.WriteByte('~')
			} else {
				b.WriteByte('/')
			}
			j++
		}
		tokens[i] = b.String()
	}
	return tokens, nil
}

func equalTokens(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
