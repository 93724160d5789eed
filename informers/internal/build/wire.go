package build

import (
	"context"
	"io"
	"mime"
	"net/http"
	"reflect"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/internal/pbdecode"
)

// AcceptProtobuf is the Accept header the informers of built-in types send on
// every LIST and WATCH they make through a clientset's REST client: protobuf
// preferred, JSON allowed, so that a server (or a proxy in front of it) that
// does not speak protobuf answers JSON instead of 406 Not Acceptable.
const AcceptProtobuf = "application/vnd.kubernetes.protobuf,application/json"

// Wire tells Informer how to reach a built-in resource through its API
// group's REST client rather than through the typed client, so that LIST and
// WATCH can ask for protobuf whatever content type the clientset was
// configured with.
type Wire struct {
	// RESTClient returns the REST client of the resource's group version
	// (e.g. client.CoreV1().RESTClient()). It is called once, when the
	// informer is built, and only when the informer's client is a
	// *kubernetes.Clientset.
	RESTClient func() rest.Interface
	// Namespace is the namespace to list and watch in; empty for all
	// namespaces and for cluster-scoped resources.
	Namespace string
	// Resource is the resource's plural name, e.g. "pods".
	Resource string
	// NewList returns an empty list object of the resource (e.g.
	// &corev1.PodList{}), which a LIST decodes into.
	NewList func() runtime.Object
}

// restClientFor returns the REST client the informer should list and watch
// through, or nil when it must use the typed client: when w is nil, when
// client is not exactly a *kubernetes.Clientset (a fake clientset, or a
// wrapper whose typed clients may do more than a plain request, which the
// informer must not bypass) or when the group's REST client is nil or not a
// *rest.RESTClient.
func (w *Wire) restClientFor(client any) *rest.RESTClient {
	if w == nil || w.RESTClient == nil || w.NewList == nil {
		return nil
	}
	if cs, ok := client.(*kubernetes.Clientset); !ok || cs == nil {
		return nil
	}
	rc, ok := w.RESTClient().(*rest.RESTClient)
	if !ok || rc == nil {
		return nil
	}
	return rc
}

// clientSerializer returns the negotiated serializer the informers' REST
// clients decode with: that of client-go's generated clients
// (rest.CodecFactoryForGeneratedClient(scheme.Scheme,
// scheme.Codecs).WithoutConversion(), as the clientset's own REST clients
// have), wrapped, unless apimachineryDecoding, by
// pbdecode.NewNegotiatedSerializer so that protobuf answers are decoded by
// the generated decoders, giving the same objects.
func clientSerializer(apimachineryDecoding bool) runtime.NegotiatedSerializer {
	ns := rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()
	if apimachineryDecoding {
		return ns
	}
	return pbdecode.NewNegotiatedSerializer(scheme.Scheme, ns)
}

// derivedRESTClient returns a REST client reaching what rc reaches (rc's
// base URL, with the path prefix of a proxy in front of the server if any,
// and rc's versioned API path), with rc's rate limiter and HTTP client
// (authentication, TLS and user agent are in its transport), decoding with
// ns. When wrap is not nil, the HTTP client is a copy of rc's whose
// transport is wrap of rc's (of http.DefaultTransport when rc's has none).
// The new client has no warning handler of its own: wireClient sets rc's on
// each request (warningHandlerOf).
func derivedRESTClient(rc *rest.RESTClient, wrap func(http.RoundTripper) (http.RoundTripper, error), ns runtime.NegotiatedSerializer) (*rest.RESTClient, error) {
	httpClient := rc.Client
	if wrap != nil {
		next := http.DefaultTransport
		var copied http.Client
		if rc.Client != nil {
			copied = *rc.Client
			if rc.Client.Transport != nil {
				next = rc.Client.Transport
			}
		}
		rt, err := wrap(next)
		if err != nil {
			return nil, err
		}
		copied.Transport = rt
		httpClient = &copied
	}
	// A request without resource or namespace has rc's base URL, its
	// path ending with rc's versioned API path: that path is the new
	// client's versioned API path, under the server's root.
	u := rc.Get().URL()
	versionedAPIPath := u.Path
	u.Path, u.RawPath, u.RawQuery = "/", "", ""
	gv := rc.APIVersion()
	return rest.NewRESTClient(u, versionedAPIPath, rest.ClientContentConfig{
		AcceptContentTypes: AcceptProtobuf,
		ContentType:        runtime.ContentTypeJSON,
		GroupVersion:       gv,
		Negotiator:         runtime.NewClientNegotiator(ns, gv),
	}, rc.GetRateLimiter(), httpClient)
}

// wireClient lists and watches one resource through a REST client, asking
// for protobuf and decoding whatever media type the server answers in (the
// REST client picks the decoder from the response's Content-Type, for a
// LIST's body and for a WATCH's stream alike).
type wireClient struct {
	rc *rest.RESTClient
	// warnings is the warning handler of the clientset's REST client (its
	// config's), set on every request; nil for client-go's default.
	warnings  rest.WarningHandlerWithContext
	namespace string
	resource  string
	newList   func() runtime.Object
	// listKind is the kind of newList's lists, set when rc's transport is
	// a streamingListTransport: a LIST then decodes its protobuf answer as
	// it arrives (see list).
	listKind *schema.GroupVersionKind
}

// request starts a GET that reports warnings where the clientset's own
// requests report them.
func (c *wireClient) request() *rest.Request {
	r := c.rc.Get()
	if c.warnings != nil {
		r = r.WarningHandlerWithContext(c.warnings)
	}
	return r
}

// warningHandlerOf returns the warning handler rc's requests report to (set
// by its rest.Config's WarningHandler or WarningHandlerWithContext), or nil
// when it has none and client-go's default handler applies. client-go keeps
// it in an unexported field of RESTClient; a client whose layout differs
// from client-go v0.37.2's (TestWarningHandlerOfReadsTheClientsHandler
// would fail) gives nil.
func warningHandlerOf(rc *rest.RESTClient) rest.WarningHandlerWithContext {
	if rc == nil {
		return nil
	}
	f := reflect.ValueOf(rc).Elem().FieldByName("warningHandler")
	if !f.IsValid() || f.Type() != reflect.TypeFor[rest.WarningHandlerWithContext]() || !f.CanAddr() {
		return nil
	}
	h, _ := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(rest.WarningHandlerWithContext)
	return h
}

func requestTimeout(opts *metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil {
		return 0
	}
	return time.Duration(*opts.TimeoutSeconds) * time.Second
}

// list sends the LIST the typed client would send, with the protobuf Accept
// header. With a listKind, the transport decodes a protobuf answer's items
// as they arrive (streamingListTransport), and the REST client decodes what
// the transport hands it in place of the body: the list when the transport
// did not decode it, otherwise an envelope without items, whose decoding
// checks what the client checks and sets the kind the list is given.
func (c *wireClient) list(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	list := c.newList()
	var slot *listSlot
	if c.listKind != nil {
		slot = &listSlot{list: c.newList(), kind: *c.listKind}
		ctx = context.WithValue(ctx, listSlotKey{}, slot)
	}
	err := c.request().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		VersionedParams(&opts, scheme.ParameterCodec).
		Timeout(requestTimeout(&opts)).
		SetHeader("Accept", AcceptProtobuf).
		Do(ctx).
		Into(list)
	if err != nil {
		return nil, err
	}
	if slot != nil && slot.decoded {
		slot.list.GetObjectKind().SetGroupVersionKind(list.GetObjectKind().GroupVersionKind())
		return slot.list, nil
	}
	return list, nil
}

// listSlot is one LIST's streamed decoding, from the transport that reads
// the answer (streamingListTransport) to the wireClient.list that asked.
type listSlot struct {
	// list is what the answer's items are decoded into.
	list runtime.Object
	// kind is list's kind.
	kind schema.GroupVersionKind
	// decoded reports that list holds the answer's list (it is set while
	// the REST client reads the body, before Do returns).
	decoded bool
}

// listSlotKey is the context key of a request's listSlot.
type listSlotKey struct{}

// listKindOf returns the kind of newList's lists in client-go's scheme, or
// nil when the scheme does not know it (its LISTs are then not streamed).
func listKindOf(newList func() runtime.Object) *schema.GroupVersionKind {
	if newList == nil {
		return nil
	}
	kinds, _, err := scheme.Scheme.ObjectKinds(newList())
	if err != nil || len(kinds) == 0 {
		return nil
	}
	return &kinds[0]
}

// streamingListTransport decodes the protobuf answers to the LISTs of
// wireClient.list as they arrive (pbdecode.ReadList), so that a LIST's
// body is never held whole: client-go's REST client reads a body into
// memory (growing it as it reads) before decoding it, which for a large
// list is transient memory the size of the list's encoding, twice over,
// that the garbage collector then works through. Requests without a
// listSlot, answers other than 2xx, compressed, or in another media type
// than protobuf pass through unchanged; so do answers ReadList does not
// decode as they arrive.
type streamingListTransport struct {
	next http.RoundTripper
}

// WrappedRoundTripper returns the RoundTripper t sends requests through
// (client-go's transport debugging walks the chain with it).
func (t *streamingListTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// RoundTrip sends req and, for a LIST of wireClient.list answered in
// protobuf, gives the answer a body that decodes it as it is read.
func (t *streamingListTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	slot, _ := req.Context().Value(listSlotKey{}).(*listSlot)
	if slot == nil || err != nil || resp == nil || resp.Body == nil || resp.StatusCode < 200 || resp.StatusCode > 299 || resp.Header.Get("Content-Encoding") != "" {
		return resp, err
	}
	mediaType, params, perr := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if perr != nil || mediaType != runtime.ContentTypeProtobuf || len(params) > 0 {
		return resp, nil
	}
	resp.Body = &streamedListBody{src: resp.Body, slot: slot}
	return resp, nil
}

// streamedListBody is the body streamingListTransport gives an answer: on
// its first read it decodes the answer's list into its slot
// (pbdecode.ReadList), then it reads what ReadList gives back.
type streamedListBody struct {
	src  io.ReadCloser
	slot *listSlot
	out  io.Reader
}

func (b *streamedListBody) Read(p []byte) (int, error) {
	if b.out == nil {
		res := pbdecode.ReadList(b.src, b.slot.list, b.slot.kind)
		b.slot.decoded, b.out = res.Decoded, res.Body
	}
	return b.out.Read(p)
}

// Close closes the answer's body.
func (b *streamedListBody) Close() error { return b.src.Close() }

// watch sends the WATCH the typed client would send (a streaming list
// included, when opts asks for one), with the protobuf Accept header.
func (c *wireClient) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	return c.request().
		NamespaceIfScoped(c.namespace, c.namespace != "").
		Resource(c.resource).
		VersionedParams(&opts, scheme.ParameterCodec).
		Timeout(requestTimeout(&opts)).
		SetHeader("Accept", AcceptProtobuf).
		Watch(ctx)
}
