package unstructuredjson

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"

	"github.com/kinformer/kinformer/internal/bench"
)

// requireSameDecoding decodes data with UnstructuredJSONScheme and with
// Scheme, into nil, a new Unstructured and a new UnstructuredList, and
// requires the same outcomes.
func requireSameDecoding(t *testing.T, data []byte) {
	t.Helper()
	targets := []func() runtime.Object{
		func() runtime.Object { return nil },
		func() runtime.Object { return &unstructured.Unstructured{} },
		func() runtime.Object { return &unstructured.UnstructuredList{} },
	}
	for _, target := range targets {
		wantObj, wantGVK, wantErr := unstructured.UnstructuredJSONScheme.Decode(data, nil, target())
		gotObj, gotGVK, gotErr := Scheme.Decode(data, nil, target())
		if wantErr != nil || gotErr != nil {
			require.Errorf(t, gotErr, "into %T: apimachinery fails with %v, kinformer decodes %q", target(), wantErr, data)
			require.Errorf(t, wantErr, "into %T: kinformer fails with %v, apimachinery decodes %q", target(), gotErr, data)
			require.Equal(t, runtime.IsMissingKind(wantErr), runtime.IsMissingKind(gotErr), "into %T: %v against %v", target(), wantErr, gotErr)
			continue
		}
		if !reflect.DeepEqual(wantObj, gotObj) || !reflect.DeepEqual(wantGVK, gotGVK) {
			require.Equal(t, wantObj, gotObj, "into %T: %q", target(), data)
			require.Equal(t, wantGVK, gotGVK)
			t.Fatalf("into %T: decoded differently (values print alike): %q", target(), data)
		}
	}
}

func TestDecodeMatchesApimachineryOnBenchmarkPods(t *testing.T) {
	list := bench.NewPodList(0, 20, "1000")
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	require.True(t, ok)
	data, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, v1.SchemeGroupVersion), list)
	require.NoError(t, err)
	requireSameDecoding(t, data)
	for i := range list.Items {
		data, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, v1.SchemeGroupVersion), &list.Items[i])
		require.NoError(t, err)
		requireSameDecoding(t, data)
	}
}

func TestDecodeMatchesApimachineryOnEdgeCases(t *testing.T) {
	for _, c := range edgeCases() {
		requireSameDecoding(t, []byte(c))
	}
}

func edgeCases() []string {
	return []string{
		`{"kind":"Pod","apiVersion":"v1"}`,
		` {"kind" : "Pod" , "apiVersion":"v1"} ` + "\n\t",
		`{"kind":"Pod","n":[0,-0,1,-1,1.0,1e3,1E3,-1e-3,1.5e+2,9223372036854775807,-9223372036854775808,9223372036854775808,-9223372036854775809,123456789012345678,1234567890123456789,0.1,1e308]}`,
		`{"kind":"Pod","n":1e400}`,
		`{"kind":"Pod","n":-1e400}`,
		`{"kind":"Pod","n":1e-400}`,
		`{"kind":"Pod","n":01}`,
		`{"kind":"Pod","n":1.}`,
		`{"kind":"Pod","n":.5}`,
		`{"kind":"Pod","n":-}`,
		`{"kind":"Pod","n":1e}`,
		`{"kind":"Pod","n":+1}`,
		`{"kind":"Pod","s":"a\"b\\c\/d\be\ff\ng\rh\ti\u0041\u00e9\u20ac\ud83d\ude00"}`,
		`{"kind":"Pod","s":"\ud83d"}`,
		`{"kind":"Pod","s":"\ud83dx"}`,
		`{"kind":"Pod","s":"\ude00\ud83d"}`,
		`{"kind":"Pod","s":"\ud83d\u0041"}`,
		"{\"kind\":\"Pod\",\"s\":\"\xff\xfe ok \xc3\xa9 \xed\xa0\x80\"}",
		"{\"kind\":\"Pod\",\"\xff\":\"key with invalid UTF-8\"}",
		"{\"kind\":\"Pod\",\"s\":\"tab\tinside\"}",
		`{"kind":"Pod","s":"\x"}`,
		`{"kind":"Pod","s":"\u12"}`,
		`{"kind":"Pod","s":"\u12G4"}`,
		`{"kind":"Pod","dup":1,"dup":"two","kind":"Service"}`,
		`{"kind":"Pod","e":{},"a":[],"n":null,"t":true,"f":false}`,
		`{"kind":"Pod",}`,
		`{"kind":"Pod" "x":1}`,
		`{"kind":"Pod","a":[1,]}`,
		`{"kind":"Pod","a":[1 2]}`,
		`{"kind":"Pod","t":tru}`,
		`{"kind":"Pod","t":trUe}`,
		`{"kind":"Pod"}x`,
		`{"kind":"Pod"}{}`,
		`{"kind":"Pod"`,
		``,
		`   `,
		`null`,
		`[]`,
		`"x"`,
		`1`,
		`{}`,
		`{"apiVersion":"v1"}`,
		`{"kind":""}`,
		`{"kind":5}`,
		`{"kind":"PodList","apiVersion":"v1","items":[]}`,
		`{"kind":"PodList","apiVersion":"v1","items":null}`,
		`{"kind":"PodList","apiVersion":"v1","items":[null,{},{"kind":"Pod"},{"apiVersion":"v2"},{"metadata":{"name":"a"}}]}`,
		`{"kind":"PodList","apiVersion":"v1","items":[1]}`,
		`{"kind":"PodList","apiVersion":"v1","items":{}}`,
		`{"kind":"PodList","apiVersion":"v1","items":"x"}`,
		`{"kind":"List","items":[{"kind":"Pod"}],"items":null}`,
		`{"kind":"Things","apiVersion":"x/v1","items":[{}]}`,
		`{"kind":"PodList","apiVersion":5,"items":[{}]}`,
		`{"items":[{"kind":"Pod"}]}`,
		`{"kind":"Pod","nested":{"items":[{"a":1}]}}`,
		`{"kind":"Pod","deep":` + strings.Repeat("[", 9990) + strings.Repeat("]", 9990) + `}`,
		`{"kind":"Pod","deep":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		`{"kind":"Pod","deep":` + strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001) + `}`,
	}
}

// filler fills API objects with random values that marshal to JSON.
func filler(seed int64) *randfill.Filler {
	return randfill.New().RandSource(rand.NewSource(seed)).NilChance(0.2).NumElements(0, 3).MaxDepth(8).Funcs(
		func(q *resource.Quantity, c randfill.Continue) {
			forms := []string{"0", "1", "250m", "1.5", "512Mi", "2Gi", "1e3", "100k", "-3", "0.001"}
			*q = resource.MustParse(forms[c.Intn(len(forms))])
		},
		func(t *metav1.Time, c randfill.Continue) {
			*t = metav1.Unix(c.Int63n(4e9), 0)
		},
		func(t *metav1.MicroTime, c randfill.Continue) {
			*t = metav1.NewMicroTime(time.Unix(c.Int63n(4e9), c.Int63n(1e9)))
		},
		func(r *runtime.RawExtension, c randfill.Continue) {
			if c.Bool() {
				r.Raw = []byte(fmt.Sprintf(`{"n":%d,"f":%d.5}`, c.Intn(100), c.Intn(100)))
			}
		},
		func(x *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*x = intstr.FromInt32(c.Int31())
			} else {
				*x = intstr.FromString(c.String(8))
			}
		},
		func(f *metav1.FieldsV1, c randfill.Continue) {
			f.Raw = []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`)
		},
	)
}

// builtinTypes returns the types of client-go's scheme, in a stable order.
func builtinTypes() []reflect.Type {
	seen := map[reflect.Type]bool{}
	var types []reflect.Type
	for _, t := range scheme.Scheme.AllKnownTypes() {
		if !seen[t] {
			seen[t] = true
			types = append(types, t)
		}
	}
	sort.Slice(types, func(i, j int) bool { return types[i].String() < types[j].String() })
	return types
}

func TestDecodeMatchesApimachineryOnEveryBuiltinType(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for i, typ := range builtinTypes() {
		obj := reflect.New(typ).Interface()
		if !fill(filler(int64(i)), obj) {
			continue // a type randfill cannot fill (an interface field)
		}
		if o, ok := obj.(runtime.Object); ok {
			o.GetObjectKind().SetGroupVersionKind(schemaKindOf(typ))
		}
		data, err := json.Marshal(obj)
		if err != nil {
			continue // types with values that do not marshal (e.g. random RawExtensions)
		}
		requireSameDecoding(t, data)
		for range 5 {
			c := append([]byte(nil), data...)
			c[r.Intn(len(c))] = "{}[]\":,0-.eE\\ax"[r.Intn(15)]
			requireSameDecoding(t, c)
			requireSameDecoding(t, data[:r.Intn(len(data))])
		}
	}
}

func schemaKindOf(t reflect.Type) (gvk schema.GroupVersionKind) {
	kinds, _, err := scheme.Scheme.ObjectKinds(reflect.New(t).Interface().(runtime.Object))
	if err != nil || len(kinds) == 0 {
		return gvk
	}
	return kinds[0]
}

// fill fills obj, reporting false when randfill cannot (it panics on
// interface fields).
func fill(f *randfill.Filler, obj any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	f.Fill(obj)
	return true
}

func TestDecodeIsSafeForConcurrentUseAndSharesKeys(t *testing.T) {
	docs := make([][]byte, 4)
	for i := range docs {
		docs[i] = []byte(fmt.Sprintf(`{"kind":"Thing","apiVersion":"x/v1","items":[{"metadata":{"name":"a%d","labels":{"only-in-doc-%d":"v"}}}]}`, i, i))
	}
	done := make(chan error, len(docs))
	for _, doc := range docs {
		go func() {
			for range 50 {
				want, _, err := unstructured.UnstructuredJSONScheme.Decode(doc, nil, nil)
				if err != nil {
					done <- err
					return
				}
				got, _, err := Scheme.Decode(doc, nil, nil)
				if err != nil {
					done <- err
					return
				}
				if !reflect.DeepEqual(want, got) {
					done <- fmt.Errorf("decoded %q differently", doc)
					return
				}
			}
			done <- nil
		}()
	}
	for range docs {
		require.NoError(t, <-done)
	}
	// A key seen before is the same string in a later decoding.
	a, _, err := Scheme.Decode(docs[0], nil, nil)
	require.NoError(t, err)
	b, _, err := Scheme.Decode(docs[1], nil, nil)
	require.NoError(t, err)
	keyOf := func(obj runtime.Object, name string) string {
		for k := range obj.(*unstructured.UnstructuredList).Items[0].Object {
			if k == name {
				return k
			}
		}
		t.Fatalf("no key %q", name)
		return ""
	}
	require.Same(t, unsafe.StringData(keyOf(a, "metadata")), unsafe.StringData(keyOf(b, "metadata")))
}
