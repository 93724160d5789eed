package unstructuredjson

import (
	"bytes"
	"context"
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// metaV1 is the group version of the metav1 kinds a dynamic client decodes
// into their own types (Status, WatchEvent, ...), and the version of its
// query parameters.
var metaV1 = schema.GroupVersion{Version: "v1"}

// metaScheme knows what a dynamic client's scheme knows: the metav1 kinds at
// v1. It also encodes list options into query parameters as a dynamic
// client does.
var (
	metaScheme     = runtime.NewScheme()
	parameterCodec = runtime.NewParameterCodec(metaScheme)
)

func init() {
	metav1.AddToGroupVersion(metaScheme, metaV1)
}

// Client lists and watches resources as client-go's dynamic client does
// (same requests, same objects) but decodes JSON answers with Scheme. It is
// safe for concurrent use.
type Client struct {
	rc *rest.RESTClient
}

// NewClient returns a Client of config, configured as dynamic.NewForConfig
// configures its REST client (dynamic.ConfigFor: JSON, and CBOR when
// client-go's ClientsAllowCBOR feature is on, whose answers keep
// client-go's decoder).
func NewClient(config *rest.Config) (*Client, error) {
	cfg := dynamic.ConfigFor(config)
	cfg.NegotiatedSerializer = negotiator{base: cfg.NegotiatedSerializer}
	cfg.GroupVersion = nil
	// As the dynamic client: every request sets an absolute path.
	cfg.APIPath = "/if-you-see-this-search-for-the-break"
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	rc, err := rest.UnversionedRESTClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return &Client{rc: rc}, nil
}

// segments is the path of resource gvr in namespace ("" for all or for a
// cluster-scoped resource).
func segments(gvr schema.GroupVersionResource, namespace string) []string {
	var url []string
	if gvr.Group == "" {
		url = append(url, "api")
	} else {
		url = append(url, "apis", gvr.Group)
	}
	url = append(url, gvr.Version)
	if namespace != "" {
		url = append(url, "namespaces", namespace)
	}
	return append(url, gvr.Resource)
}

func validNamespace(namespace string) error {
	if msgs := rest.IsValidPathSegmentName(namespace); len(msgs) != 0 {
		return fmt.Errorf("invalid namespace %q: %v", namespace, msgs)
	}
	return nil
}

// List lists gvr in namespace, as dynamic's List does.
func (c *Client) List(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	if err := validNamespace(namespace); err != nil {
		return nil, err
	}
	var out unstructured.UnstructuredList
	err := c.rc.Get().AbsPath(segments(gvr, namespace)...).
		SpecificallyVersionedParams(&opts, parameterCodec, metaV1).
		Do(ctx).Into(&out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// Watch watches gvr in namespace, as dynamic's Watch does.
func (c *Client) Watch(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	if err := validNamespace(namespace); err != nil {
		return nil, err
	}
	return c.rc.Get().AbsPath(segments(gvr, namespace)...).
		SpecificallyVersionedParams(&opts, parameterCodec, metaV1).
		Watch(ctx)
}

// negotiator is a dynamic client's negotiated serializer (base) whose JSON
// serializer decodes unstructured objects with Scheme.
type negotiator struct {
	base runtime.NegotiatedSerializer
}

func (n negotiator) SupportedMediaTypes() []runtime.SerializerInfo {
	infos := append([]runtime.SerializerInfo(nil), n.base.SupportedMediaTypes()...)
	for i := range infos {
		if infos[i].MediaType == runtime.ContentTypeJSON {
			infos[i].Serializer = jsonSerializer{base: infos[i].Serializer}
		}
	}
	return infos
}

func (n negotiator) EncoderForVersion(e runtime.Encoder, gv runtime.GroupVersioner) runtime.Encoder {
	return n.base.EncoderForVersion(e, gv)
}

func (n negotiator) DecoderToVersion(d runtime.Decoder, gv runtime.GroupVersioner) runtime.Decoder {
	return n.base.DecoderToVersion(d, gv)
}

// jsonSerializer is a dynamic client's JSON serializer (base: apimachinery's
// JSON serializer over a scheme of the metav1 kinds that creates
// Unstructured objects for other kinds) with the decoding of unstructured
// objects done by Scheme. Inputs whose handling could differ in a corner
// (a target of another type, a metav1 kind, keys that match "kind" or
// "apiVersion" only without regard to case) go to base whole.
type jsonSerializer struct {
	base runtime.Serializer
}

func (s jsonSerializer) Encode(obj runtime.Object, w io.Writer) error {
	return s.base.Encode(obj, w)
}

func (s jsonSerializer) Identifier() runtime.Identifier { return s.base.Identifier() }

func (s jsonSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	switch into.(type) {
	case nil, *unstructured.Unstructured, *unstructured.UnstructuredList:
	default:
		return s.base.Decode(data, defaults, into)
	}
	top, err := document(data)
	if err != nil {
		return nil, nil, err
	}
	// The kind and apiVersion as apimachinery's JSON serializer reads them
	// first (encoding/json into a struct: null leaves a field empty, another
	// type is an error, a key matching without regard to case counts too).
	var actual schema.GroupVersionKind
	switch t := top.(type) {
	case map[string]any:
		for k, v := range t {
			field := ""
			switch {
			case k == "kind" || k == "apiVersion":
				field = k
			case bytes.EqualFold([]byte(k), []byte("kind")), bytes.EqualFold([]byte(k), []byte("apiVersion")):
				return s.base.Decode(data, defaults, into)
			default:
				continue
			}
			switch v := v.(type) {
			case nil:
			case string:
				if field == "kind" {
					actual.Kind = v
				} else {
					gv, err := schema.ParseGroupVersion(v)
					if err != nil {
						return nil, nil, err
					}
					actual.Group, actual.Version = gv.Group, gv.Version
				}
			default:
				return s.base.Decode(data, defaults, into)
			}
		}
	default:
		return s.base.Decode(data, defaults, into)
	}
	if defaults != nil || (into == nil && metaScheme.Recognizes(actual)) {
		return s.base.Decode(data, defaults, into)
	}
	if into == nil {
		if actual.Kind == "" {
			return nil, &actual, runtime.NewMissingKindErr("unstructured object has no kind")
		}
		if actual.Version == "" {
			return nil, &actual, runtime.NewMissingVersionErr("unstructured object has no apiVersion")
		}
		u := &unstructured.Unstructured{}
		if err := fillObject(top, u); err != nil {
			return nil, &actual, err
		}
		return u, &actual, nil
	}
	switch x := into.(type) {
	case *unstructured.Unstructured:
		err = fillObject(top, x)
	case *unstructured.UnstructuredList:
		err = fillListTarget(top, x)
	}
	if err != nil {
		return nil, &actual, err
	}
	got := into.GetObjectKind().GroupVersionKind()
	if got.Kind == "" {
		return nil, &got, runtime.NewMissingKindErr("unstructured object has no kind")
	}
	return into, &got, nil
}
