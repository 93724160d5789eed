package projection

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	mediaJSON     = "application/json"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
)

// objectMediaTypes are the other media types kube-apiserver encodes objects
// in, which the Transport cannot project: an answer in one of them fails
// the request rather than reaching the client unprojected.
var objectMediaTypes = map[string]bool{
	"application/cbor":     true,
	"application/cbor-seq": true,
	"application/yaml":     true,
}

// Transport returns a RoundTripper that sends requests through rt and
// projects with p the successful answers to the reads of a resource's
// collection: a LIST body's items, and every object of a WATCH stream (a
// streaming list included). The answers are filtered as they are read, so
// the client reading them decodes projected objects and never the full
// ones. Other requests (writes, the GET of one object, subresources such
// as a pod's log, other paths), error answers, answers in another
// representation than the resource's own (an "as" media type parameter, e.g.
// a Table, asked for or answered), answers in a media type that encodes no
// objects, and compressed answers pass through unchanged.
//
// example is an object of the resource's Go type (e.g. &corev1.Pod{}): the
// Transport then projects protobuf answers, by the type's protobuf field
// numbers, as well as JSON ones. With a nil example, or an
// *unstructured.Unstructured (custom resources read through a dynamic
// client), it projects JSON only, and asks for JSON: it sets the Accept
// header of the reads of collections it sends to application/json. It returns an
// error when a path of p names a field example's type does not have, or
// goes below a field that has no members.
//
// A body or stream that is not valid JSON or protobuf makes the read fail
// with an error that says where (a stream cut short ends with
// io.ErrUnexpectedEOF, as an unfiltered one does); an answer in another
// encoding of objects (CBOR, YAML) makes the request fail. Each answer is read
// in full before its first byte is returned for a LIST, and event by event
// for a WATCH; a WATCH event larger than 64 MiB in JSON, or a protobuf frame
// larger than 16 MiB (where client-go's own watch decoder stops), fails the
// watch. The RoundTripper is safe for concurrent use.
//
// Informers given a projection (informers.WithProjection,
// InformerOptions.Projection, dynamicinformer.WithProjection) install it
// themselves; it is exported for clients built by hand.
func (p *Projection) Transport(rt http.RoundTripper, example runtime.Object) (http.RoundTripper, error) {
	if p == nil {
		return nil, errors.New("projection: Transport of a nil Projection")
	}
	if rt == nil {
		rt = http.DefaultTransport
	}
	plan, err := p.planFor(example)
	if err != nil {
		return nil, err
	}
	return &transport{next: rt, p: p, pb: plan}, nil
}

// Check returns the error Transport returns for example's type (a path of p
// the type does not have, or one going below a field without members), or
// nil. A nil example or an *unstructured.Unstructured, which have no
// fields to check, give nil.
func (p *Projection) Check(example runtime.Object) error {
	if p == nil {
		return errors.New("projection: Check of a nil Projection")
	}
	_, err := p.planFor(example)
	return err
}

// planFor compiles p's protobuf plan for example's type; nil (and no
// error) for a nil example or an *unstructured.Unstructured.
func (p *Projection) planFor(example runtime.Object) (*pbPlan, error) {
	if example == nil {
		return nil, nil
	}
	if _, ok := example.(*unstructured.Unstructured); ok {
		return nil, nil
	}
	typ := reflect.TypeOf(example)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		return nil, fmt.Errorf("projection: example %T is not a pointer to an API object struct", example)
	}
	return compileProtobuf(p.root, typ, typ.Name())
}

// transport is the RoundTripper of Projection.Transport.
type transport struct {
	next http.RoundTripper
	p    *Projection
	pb   *pbPlan // nil: JSON only
}

// WrappedRoundTripper returns the RoundTripper t sends requests through
// (client-go's transport debugging walks the chain with it).
func (t *transport) WrappedRoundTripper() http.RoundTripper { return t.next }

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	collection, watching := classifyRequest(req)
	if req.Method != http.MethodGet || !collection || strings.Contains(req.Header.Get("Accept"), "as=") {
		// Not a LIST or WATCH of a resource's own objects (a write, a
		// single object, a subresource such as a pod's log, a Table):
		// not the Transport's business.
		return t.next.RoundTrip(req)
	}
	if t.pb == nil {
		req = req.Clone(req.Context())
		req.Header.Set("Accept", mediaJSON)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode < 200 || resp.StatusCode > 299 || resp.StatusCode == http.StatusNoContent {
		return resp, err
	}
	contentType := resp.Header.Get("Content-Type")
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("projection: answer to GET %s has an invalid Content-Type %q: %w", req.URL.Path, contentType, err)
	}
	if params["as"] != "" || resp.Header.Get("Content-Encoding") != "" {
		// Another representation (a Table), or a body the transport
		// below left compressed: passed on as it is.
		return resp, nil
	}
	fingerprint := t.p.fingerprint
	var body io.ReadCloser
	switch {
	case mediaType != mediaJSON && mediaType != mediaProtobuf && !objectMediaTypes[mediaType]:
		// Not an encoding of Kubernetes objects.
		return resp, nil
	case mediaType == mediaJSON && watching:
		body = newJSONWatchFilter(resp.Body, t.p.root, fingerprint)
	case mediaType == mediaJSON:
		root := t.p.root
		body = &lazyListBody{src: resp.Body, filter: func(r io.Reader) ([]byte, error) { return filterJSONList(r, root, fingerprint) }}
	case mediaType == mediaProtobuf && t.pb != nil && watching:
		body = newProtobufWatchFilter(resp.Body, t.pb, fingerprint)
	case mediaType == mediaProtobuf && t.pb != nil:
		plan := t.pb
		body = &lazyListBody{src: resp.Body, filter: func(r io.Reader) ([]byte, error) { return plan.filterList(r, fingerprint) }}
	default:
		resp.Body.Close()
		return nil, fmt.Errorf("projection: cannot project the answer to GET %s: media type %q", req.URL.Path, mediaType)
	}
	resp.Body = body
	resp.ContentLength = -1
	resp.Header = resp.Header.Clone()
	resp.Header.Del("Content-Length")
	return resp, nil
}

// classifyRequest tells whether req reads a collection of a resource (a
// LIST or a WATCH of /api/v1/[namespaces/NS/]RESOURCE or
// /apis/GROUP/VERSION/[namespaces/NS/]RESOURCE, or their legacy /watch/
// forms) and whether it watches, as kube-apiserver reads the path and the
// watch parameter. Anything under a path prefix before /api or /apis (a
// proxy's) is skipped.
func classifyRequest(req *http.Request) (collection, watching bool) {
	segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	rest := -1
	for i, seg := range segs {
		if seg == "api" {
			rest = i + 2 // api/VERSION/...
			break
		}
		if seg == "apis" {
			rest = i + 3 // apis/GROUP/VERSION/...
			break
		}
	}
	if rest < 0 || rest > len(segs) {
		return false, false
	}
	segs = segs[rest:]
	if len(segs) > 0 && segs[0] == "watch" {
		watching = true
		segs = segs[1:]
	}
	switch {
	case len(segs) == 1:
		collection = true
	case len(segs) == 3 && segs[0] == "namespaces":
		collection = true
	}
	if w := req.URL.Query().Get("watch"); w != "" {
		if b, err := strconv.ParseBool(w); err == nil && b {
			watching = true
		}
	}
	return collection, watching
}

// lazyListBody is a LIST answer's body, projected on its first Read.
type lazyListBody struct {
	src    io.ReadCloser
	filter func(io.Reader) ([]byte, error)
	out    []byte
	err    error
	done   bool
}

func (b *lazyListBody) Read(p []byte) (int, error) {
	if !b.done {
		b.done = true
		b.out, b.err = b.filter(b.src)
	}
	if b.err != nil {
		return 0, b.err
	}
	if len(b.out) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

func (b *lazyListBody) Close() error { return b.src.Close() }

// Apply returns a copy of obj holding only the fields p keeps, marked with
// MarkerAnnotation: what an informer with p would hold for obj. obj is left
// unchanged. It is how informers project the objects of clients that do
// not go through HTTP (client-go's fake clientsets), and lets tests build
// the objects a projected informer would deliver. It returns an error for a
// nil obj and for an object that does not marshal to a JSON object.
func (p *Projection) Apply(obj runtime.Object) (runtime.Object, error) {
	if p == nil {
		return nil, errors.New("projection: Apply of a nil Projection")
	}
	if obj == nil || isNilPointer(obj) {
		return nil, errors.New("projection: Apply of a nil object")
	}
	full, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("projection: encoding %T: %w", obj, err)
	}
	projected, err := filterJSONObject(nil, full, p.root, p.fingerprint)
	if err != nil {
		return nil, fmt.Errorf("projection: projecting %T: %w", obj, err)
	}
	if bytes.Equal(projected, full) {
		// A Status (or anything filterJSONObject passes through).
		return obj.DeepCopyObject(), nil
	}
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
	if err := json.Unmarshal(projected, out); err != nil {
		return nil, fmt.Errorf("projection: decoding projected %T: %w", obj, err)
	}
	return out, nil
}
