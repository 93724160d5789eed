package projection

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	k8sprotobuf "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// guardFuzzMethods and guardFuzzMediaTypes are what FuzzGuard's method and
// mediaType bytes pick from (modulo their length).
var (
	guardFuzzMethods    = [...]string{http.MethodPost, http.MethodPut, http.MethodPatch}
	guardFuzzMediaTypes = [...]string{"", mediaJSON, mediaYAML, mediaCBOR, mediaProtobuf, mediaMergePatch, mediaStrategicMergePatch, mediaJSONPatch, mediaApplyPatchYAML, mediaApplyPatchCBOR, "text/plain"}
)

// guardFuzzBase is the object FuzzGuard applies patches to: it has no
// marker, so a patch that leaves one on it set it.
var guardFuzzBase = []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","labels":{"x":"` + MarkerAnnotation + `"},"annotations":{"a":"b"}},"spec":{"nodeName":"n"}}`)

// FuzzGuard decodes a write's body as the API server would, independently
// of Guard, and compares with Guard's verdict: a body setting
// metadata.annotations[MarkerAnnotation] is refused with ErrProjectedWrite,
// one that does not decode with ErrUndecodableWrite, and any other is sent
// unchanged. A merge patch or JSON Patch that leaves the marker on an
// object without one is never sent. A Content-Encoding is always refused.
func FuzzGuard(f *testing.F) {
	decoder := k8sprotobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	f.Fuzz(func(t *testing.T, method, mediaIndex uint8, encoded bool, body []byte) {
		mediaType := guardFuzzMediaTypes[int(mediaIndex)%len(guardFuzzMediaTypes)]
		var sent [][]byte
		g := Guard(roundTripFunc(func(r *http.Request) (*http.Response, error) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			sent = append(sent, b)
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
		}))
		req := &http.Request{
			Method: guardFuzzMethods[int(method)%len(guardFuzzMethods)],
			URL:    &url.URL{Scheme: "https", Host: "h", Path: "/api/v1/namespaces/ns/pods/a"},
			Header: http.Header{},
			Body:   io.NopCloser(bytes.NewReader(body)),
		}
		if mediaType != "" {
			req.Header.Set("Content-Type", mediaType)
		}
		if encoded {
			req.Header.Set("Content-Encoding", "gzip")
		}
		_, err := g.RoundTrip(req)
		switch {
		case err == nil:
			if len(sent) != 1 || !bytes.Equal(sent[0], body) {
				t.Fatalf("sent %q, want the body %q", sent, body)
			}
		case len(sent) != 0:
			t.Fatalf("refused (%v) but sent %q", err, sent)
		case !errors.Is(err, ErrProjectedWrite) && !errors.Is(err, ErrUndecodableWrite):
			t.Fatalf("unexpected error %v", err)
		}
		if encoded {
			if !errors.Is(err, ErrUndecodableWrite) {
				t.Fatalf("a body with a Content-Encoding: got %v", err)
			}
			return
		}

		verdict := func(marked bool, decodeErr error) error {
			switch {
			case decodeErr != nil:
				return ErrUndecodableWrite
			case marked:
				return ErrProjectedWrite
			}
			return nil
		}
		check := func(want error) {
			t.Helper()
			if want == nil && err != nil || want != nil && !errors.Is(err, want) {
				t.Fatalf("%s body %q: Guard says %v, decoding it says %v", mediaType, body, err, want)
			}
		}
		switch mediaType {
		case "", mediaJSON, mediaMergePatch, mediaStrategicMergePatch:
			var obj any
			decodeErr := utiljson.Unmarshal(body, &obj)
			check(verdict(oracleMarked(obj), decodeErr))
			if mediaType == mediaMergePatch && decodeErr == nil {
				if patched, err := jsonpatch.MergePatch(guardFuzzBase, body); err == nil && jsonMarked(patched) {
					check(ErrProjectedWrite)
				}
			}
		case mediaYAML, mediaApplyPatchYAML:
			var obj any
			decodeErr := yaml.Unmarshal(body, &obj)
			check(verdict(oracleMarked(obj), decodeErr))
		case mediaCBOR, mediaApplyPatchCBOR:
			var obj any
			decodeErr := direct.Unmarshal(body, &obj)
			check(verdict(oracleMarked(obj), decodeErr))
		case mediaProtobuf:
			obj, _, decodeErr := decoder.Decode(body, nil, nil)
			marked := false
			if decodeErr == nil {
				if m, err := meta.Accessor(obj); err == nil {
					_, marked = m.GetAnnotations()[MarkerAnnotation]
				}
			}
			check(verdict(marked, decodeErr))
		case mediaJSONPatch:
			// Only one way: whatever Guard lets through leaves no marker
			// on an object that had none.
			patch, decodeErr := jsonpatch.DecodePatch(body)
			if decodeErr != nil {
				check(ErrUndecodableWrite)
				return
			}
			if patched, applyErr := applyJSONPatch(patch); applyErr == nil && jsonMarked(patched) && err == nil {
				t.Fatalf("JSON Patch %q sets the marker (%s) and was sent", body, patched)
			}
		default:
			check(ErrUndecodableWrite)
		}
	})
}

// oracleMarked reports whether the decoded object obj has a non-null
// metadata.annotations[MarkerAnnotation], read with unstructured's helpers.
func oracleMarked(obj any) bool {
	m, ok := obj.(map[string]any)
	if !ok {
		return false
	}
	v, found, err := unstructured.NestedFieldNoCopy(m, "metadata", "annotations", MarkerAnnotation)
	return err == nil && found && v != nil
}

// jsonMarked reports whether the JSON object doc carries the marker.
func jsonMarked(doc []byte) bool {
	var obj any
	return utiljson.Unmarshal(doc, &obj) == nil && oracleMarked(obj)
}

// applyJSONPatch applies patch to guardFuzzBase. The library panics on
// some malformed operations (a test without a value): that is an error
// here, as the API server's recovery makes it one.
func applyJSONPatch(patch jsonpatch.Patch) (patched []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("json-patch panicked: %v", r)
		}
	}()
	return patch.Apply(guardFuzzBase)
}
