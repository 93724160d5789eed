package build

import (
	"context"
	"net/http"
	"reflect"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
// header.
func (c *wireClient) list(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	list := c.newList()
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
	return list, nil
}

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
