package pbdecode

import (
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/randfill"

	"github.com/kinformer/kinformer/internal/bench"
)

// protoMessage is what the API types' generated code gives each type.
type protoMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
	Reset()
}

// reference decodes b as apimachinery does (proto.Unmarshal: Reset, then the
// type's generated Unmarshal) into a new value of into's type.
func reference(t reflect.Type, b []byte) (any, error) {
	v := reflect.New(t.Elem()).Interface().(protoMessage)
	v.Reset()
	err := v.Unmarshal(b)
	return v, err
}

func ours(t reflect.Type, b []byte) (any, error) {
	v := reflect.New(t.Elem()).Interface()
	err := Unmarshal(b, v)
	return v, err
}

// requireSameDecoding decodes b with both decoders and requires the same
// outcome: deeply equal values, or both failing (with io.ErrUnexpectedEOF
// on both sides when apimachinery returns it).
func requireSameDecoding(t *testing.T, typ reflect.Type, b []byte) {
	t.Helper()
	want, wantErr := reference(typ, b)
	got, gotErr := ours(typ, b)
	if wantErr != nil || gotErr != nil {
		require.Errorf(t, gotErr, "%s: apimachinery fails with %v, kinformer decodes", typ, wantErr)
		require.Errorf(t, wantErr, "%s: kinformer fails with %v, apimachinery decodes", typ, gotErr)
		require.Equalf(t, errors.Is(wantErr, io.ErrUnexpectedEOF), errors.Is(gotErr, io.ErrUnexpectedEOF),
			"%s: apimachinery's error %v, kinformer's %v", typ, wantErr, gotErr)
		return
	}
	if !reflect.DeepEqual(want, got) {
		require.Equal(t, want, got, "%s decoded differently", typ)
		t.Fatalf("%s decoded differently (values print alike)", typ)
	}
}

func TestUnmarshalDecodesBenchmarkPodsAsTheGeneratedCodeDoes(t *testing.T) {
	list := bench.NewPodList(0, 50, "1000")
	b, err := list.Marshal()
	require.NoError(t, err)
	requireSameDecoding(t, reflect.TypeFor[*v1.PodList](), b)
	for i := range list.Items {
		b, err := list.Items[i].Marshal()
		require.NoError(t, err)
		requireSameDecoding(t, reflect.TypeFor[*v1.Pod](), b)
	}
}

// rootTypes returns the types Unmarshal supports, in a stable order.
func rootTypes() []reflect.Type {
	types := make([]reflect.Type, 0, len(roots))
	for t := range roots {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool { return types[i].String() < types[j].String() })
	return types
}

// filler fills API objects with random values that marshal: quantities,
// times and raw extensions are made from values of their own kinds.
func filler(seed uint64) *randfill.Filler {
	return randfill.New().RandSource(rand.NewSource(int64(seed))).NilChance(0.2).NumElements(0, 3).MaxDepth(8).Funcs(
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
				r.Raw = []byte(fmt.Sprintf(`{"n":%d}`, c.Intn(100)))
			}
		},
		func(x *intstr.IntOrString, c randfill.Continue) {
			if c.Bool() {
				*x = intstr.FromInt32(c.Int31())
			} else {
				*x = intstr.FromString(c.String(8))
			}
		},
	)
}

func TestUnmarshalDecodesEveryTypeAsTheGeneratedCodeDoes(t *testing.T) {
	for _, typ := range rootTypes() {
		t.Run(typ.Elem().String(), func(t *testing.T) {
			for seed := range uint64(5) {
				obj := reflect.New(typ.Elem()).Interface()
				filler(seed).Fill(obj)
				b, err := obj.(protoMessage).Marshal()
				require.NoError(t, err)
				requireSameDecoding(t, typ, b)
				// Every truncation fails alike.
				for n := len(b) - 1; n >= 0; n -= 1 + len(b)/40 {
					requireSameDecoding(t, typ, b[:n])
				}
			}
		})
	}
}

func TestUnmarshalAgreesOnCorruptedMessages(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, typ := range rootTypes() {
		obj := reflect.New(typ.Elem()).Interface()
		filler(11).Fill(obj)
		b, err := obj.(protoMessage).Marshal()
		require.NoError(t, err)
		if len(b) == 0 {
			continue
		}
		for range 20 {
			c := append([]byte(nil), b...)
			for range 1 + r.Intn(3) {
				c[r.Intn(len(c))] = byte(r.Intn(256))
			}
			requireSameDecoding(t, typ, c)
		}
	}
}

func TestUnmarshalKeepsNothingOfTheInput(t *testing.T) {
	list := bench.NewPodList(0, 3, "1000")
	b, err := list.Marshal()
	require.NoError(t, err)
	want, err := reference(reflect.TypeFor[*v1.PodList](), b)
	require.NoError(t, err)

	var got v1.PodList
	require.NoError(t, Unmarshal(b, &got))
	for i := range b {
		b[i] = 0xff
	}
	require.Equal(t, want, &got, "the decoded list changed when its input was overwritten")

	// Byte slices end where they end: appending copies.
	raw := got.Items[0].ManagedFields[0].FieldsV1.Raw
	require.Equal(t, len(raw), cap(raw))
	next := got.Items[0].ManagedFields[1].FieldsV1.Raw[0]
	_ = append(raw, 'x')
	require.Equal(t, next, got.Items[0].ManagedFields[1].FieldsV1.Raw[0])
}

func TestUnmarshalRefusesUnsupportedTargets(t *testing.T) {
	require.False(t, Supports(&struct{}{}))
	require.True(t, Supports(&v1.Pod{}))
	require.Error(t, Unmarshal(nil, &struct{}{}))
	require.Error(t, Unmarshal(nil, (*v1.Pod)(nil)))
	require.Error(t, Unmarshal(nil, nil))
}

func TestCapHintBoundsPreallocationByTheInput(t *testing.T) {
	// 1,000 empty containers are 2,000 bytes of input; a Container is far
	// larger than 8 bytes, so the hint is cut to what 4x the input holds.
	n := capHint[v1.Container](1000, 2000)
	require.Less(t, n, 1000)
	require.Equal(t, 4*2000/int(reflect.TypeFor[v1.Container]().Size())+1, n)
	require.Equal(t, 3, capHint[v1.Container](3, 100000), "small counts are kept")
	require.Equal(t, 7, capHint[struct{}](7, 1), "zero-size elements are not bounded")

	// Decoding many empty containers still gives every one of them.
	var spec []byte
	for range 1000 {
		spec = append(spec, 0x12, 0x00) // field 2 (containers), empty message
	}
	pod := append([]byte{0x12}, protowire.AppendVarint(nil, uint64(len(spec)))...) // field 2 (spec)
	pod = append(pod, spec...)
	requireSameDecoding(t, reflect.TypeFor[*v1.Pod](), pod)
	var got v1.Pod
	require.NoError(t, Unmarshal(pod, &got))
	require.Len(t, got.Spec.Containers, 1000)
}
