package unstructuredjson

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Scheme decodes JSON as unstructured.UnstructuredJSONScheme does, with
// kinformer's parser for Unstructured and UnstructuredList targets (and for
// a nil target); other targets and encoding go to UnstructuredJSONScheme.
// It is safe for concurrent use.
var Scheme runtime.Codec = codec{}

type codec struct{}

// Decode implements runtime.Decoder: it gives what
// unstructured.UnstructuredJSONScheme.Decode gives for the same arguments
// (the same objects and group version kind; an error exactly when it
// errors), except that a missing kind's error does not quote the object.
func (codec) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	var (
		obj runtime.Object
		err error
	)
	switch x := into.(type) {
	case nil:
		obj, err = decodeAny(data)
	case *unstructured.Unstructured:
		err = decodeObject(data, x)
		obj = x
	case *unstructured.UnstructuredList:
		err = decodeList(data, x)
		obj = x
	default:
		return unstructured.UnstructuredJSONScheme.Decode(data, gvk, into)
	}
	if err != nil {
		return nil, nil, err
	}
	kind := obj.GetObjectKind().GroupVersionKind()
	if kind.Kind == "" {
		return nil, &kind, runtime.NewMissingKindErr("unstructured object has no kind")
	}
	return obj, &kind, nil
}

// Encode implements runtime.Encoder with UnstructuredJSONScheme.
func (codec) Encode(obj runtime.Object, w io.Writer) error {
	return unstructured.UnstructuredJSONScheme.Encode(obj, w)
}

// Identifier implements runtime.Encoder.
func (codec) Identifier() runtime.Identifier {
	return unstructured.UnstructuredJSONScheme.Identifier()
}

// document parses data, a JSON document, and returns its top-level value.
func document(data []byte) (any, error) {
	p := parser{data: data, keys: newKeyCache(), arenaHint: firstChunk(len(data))}
	v, err := p.top()
	if err != nil {
		return nil, err
	}
	p.keys.publish()
	return v, nil
}

// firstChunk is the first string storage reserved for an object whose text
// is n bytes: about the share of an API object's text its string values
// take (keys are shared), so that most objects need one chunk.
func firstChunk(n int) int {
	return min(max(n*3/10, minChunk), maxChunk)
}

func (p *parser) top() (any, error) {
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i < len(p.data) {
		return nil, p.syntaxError("invalid character after top-level value")
	}
	return v, nil
}

func typeError(v any, target string) error {
	return fmt.Errorf("unstructuredjson: cannot decode %s into %s", kindOf(v), target)
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return "number"
}

// decodeAny decodes a JSON object into an Unstructured, or into an
// UnstructuredList when it has an "items" field.
func decodeAny(data []byte) (runtime.Object, error) {
	v, err := document(data)
	if err != nil {
		return nil, err
	}
	switch top := v.(type) {
	case nil:
		return &unstructured.Unstructured{}, nil
	case map[string]any:
		if _, isList := top["items"]; isList {
			list := &unstructured.UnstructuredList{}
			return list, fillList(top, list)
		}
		return &unstructured.Unstructured{Object: top}, nil
	default:
		return nil, typeError(v, "an object")
	}
}

// decodeObject decodes a JSON object into u, replacing its content (null
// leaves it without content).
func decodeObject(data []byte, u *unstructured.Unstructured) error {
	v, err := document(data)
	if err != nil {
		return err
	}
	return fillObject(v, u)
}

// fillObject makes v, a decoded document, u's content.
func fillObject(v any, u *unstructured.Unstructured) error {
	switch top := v.(type) {
	case nil:
		u.Object = nil
	case map[string]any:
		u.Object = top
	default:
		return typeError(v, "an object")
	}
	return nil
}

// decodeList decodes a JSON list into list: its fields other than items
// are merged into list.Object, its items replace list.Items.
func decodeList(data []byte, list *unstructured.UnstructuredList) error {
	v, err := document(data)
	if err != nil {
		return err
	}
	return fillListTarget(v, list)
}

// fillListTarget makes v, a decoded document, list's content as
// decodeList does.
func fillListTarget(v any, list *unstructured.UnstructuredList) error {
	switch top := v.(type) {
	case nil:
		list.Object = nil
		list.Items = []unstructured.Unstructured{}
		return nil
	case map[string]any:
		if list.Object == nil {
			return fillList(top, list)
		}
		for k, v := range top {
			list.Object[k] = v
		}
		items := top["items"]
		delete(list.Object, "items")
		return fillItems(items, list)
	default:
		return typeError(v, "an object")
	}
}

// fillList makes top (a decoded list) list's content.
func fillList(top map[string]any, list *unstructured.UnstructuredList) error {
	items := top["items"]
	delete(top, "items")
	list.Object = top
	return fillItems(items, list)
}

// fillItems sets list.Items from the decoded items value (an array of
// objects, or null), giving items without kind and apiVersion the list's
// apiVersion and its kind without the "List" suffix.
func fillItems(items any, list *unstructured.UnstructuredList) error {
	var elems []any
	switch x := items.(type) {
	case nil:
	case []any:
		elems = x
	default:
		return typeError(items, "a list's items")
	}
	apiVersion := list.GetAPIVersion()
	itemKind := trimList(list.GetKind())
	list.Items = make([]unstructured.Unstructured, 0, len(elems))
	for _, e := range elems {
		var item unstructured.Unstructured
		switch x := e.(type) {
		case nil:
		case map[string]any:
			item.Object = x
		default:
			return typeError(e, "a list item")
		}
		if item.GetKind() == "" && item.GetAPIVersion() == "" {
			item.SetKind(itemKind)
			item.SetAPIVersion(apiVersion)
		}
		list.Items = append(list.Items, item)
	}
	return nil
}

func trimList(kind string) string {
	if len(kind) >= 4 && kind[len(kind)-4:] == "List" {
		return kind[:len(kind)-4]
	}
	return kind
}
