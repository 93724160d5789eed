package pbdecode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand"
	"reflect"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/internal/bench"
)

var podListKind = v1.SchemeGroupVersion.WithKind("PodList")

// decodeOutcome is what a client's decoder makes of a body: the object, its
// group-version-kind, the error.
type decodeOutcome struct {
	obj kruntime.Object
	gvk *schema.GroupVersionKind
	err error
}

// clientDecoders returns the protobuf decoders a REST client gets from
// client-go's negotiated serializer and from NewNegotiatedSerializer's.
func clientDecoders(t *testing.T) (apimachinery, generated kruntime.Decoder) {
	t.Helper()
	a, g := clientSerializers()
	want, err := kruntime.NewClientNegotiator(a, v1.SchemeGroupVersion).Decoder(kruntime.ContentTypeProtobuf, nil)
	require.NoError(t, err)
	got, err := kruntime.NewClientNegotiator(g, v1.SchemeGroupVersion).Decoder(kruntime.ContentTypeProtobuf, nil)
	require.NoError(t, err)
	return want, got
}

// streamedOutcome is what a client gets when ReadList reads body and the
// client decodes its ListResult.Body with dec: the streamed list (given the
// kind the decoding set) when ReadList decoded it, the decoding's result
// otherwise. readErr is the error reading ListResult.Body gave.
func streamedOutcome(body io.Reader, dec kruntime.Decoder, newList func() kruntime.Object, kind schema.GroupVersionKind) (out decodeOutcome, readErr error) {
	streamed := newList()
	res := ReadList(body, streamed, kind)
	replacement, readErr := io.ReadAll(res.Body)
	if readErr != nil {
		return decodeOutcome{}, readErr
	}
	placeholder := newList()
	obj, gvk, err := dec.Decode(replacement, nil, placeholder)
	out = decodeOutcome{obj, gvk, err}
	if err == nil && res.Decoded {
		streamed.GetObjectKind().SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
		out.obj = streamed
	}
	return out, nil
}

// requireSameOutcome requires got to be want: the same error text (and
// io.ErrUnexpectedEOF-ness), kind and deeply equal object.
func requireSameOutcome(t *testing.T, name string, want, got decodeOutcome) {
	t.Helper()
	require.Equalf(t, want.err != nil, got.err != nil, "%s: error %v, streamed %v", name, want.err, got.err)
	if want.err != nil {
		require.Equal(t, want.err.Error(), got.err.Error(), name)
		require.Equal(t, errors.Is(want.err, io.ErrUnexpectedEOF), errors.Is(got.err, io.ErrUnexpectedEOF), name)
		return
	}
	require.Equal(t, want.gvk, got.gvk, name)
	require.Truef(t, reflect.DeepEqual(want.obj, got.obj), "%s: decoded differently: %v", name, differingFieldsOrNil(want.obj, got.obj))
}

// rawSpan returns where the object's bytes of a protobuf body encoded by
// encode start and end.
func rawSpan(t *testing.T, body []byte) (start, end int) {
	t.Helper()
	b := body[len(protobufPrefix):]
	for i := 0; i < len(b); {
		num, s, e, ok := lengthDelimited(b, i)
		require.True(t, ok)
		if num == 2 {
			return len(protobufPrefix) + s, len(protobufPrefix) + e
		}
		i = e
	}
	t.Fatal("no object in the body")
	return 0, 0
}

// withRaw returns body with its object's bytes replaced by raw.
func withRaw(t *testing.T, body, raw []byte) []byte {
	t.Helper()
	start, end := rawSpan(t, body)
	tagAt := start - 1
	for tagAt > 0 && body[tagAt-1] >= 0x80 {
		tagAt--
	}
	tagAt-- // the tag, one byte for field 2
	out := append([]byte(nil), body[:tagAt+1]...)
	out = binary.AppendUvarint(out, uint64(len(raw)))
	out = append(out, raw...)
	return append(out, body[end:]...)
}

// TestReadListGivesTheClientsOutcome reads bodies with ReadList and decodes
// what it gives back with the generated decoders' client decoder, and
// requires the outcome client-go's own decoder has on the whole body: the
// same list (decoded as it arrived), the same kind, the same error. The
// bodies: lists of 0, 1 and 20 benchmark pods, a ConfigMapList, a list
// truncated at every point, lists with random bytes changed inside their
// message, list fields the streaming read leaves to the generated decoder
// (unknown fields, other wire types), a second object after the first, a
// repeated kind after the object, envelopes of another kind, with unknown
// fields before the object, and bodies that are not protobuf.
func TestReadListGivesTheClientsOutcome(t *testing.T) {
	want, got := clientDecoders(t)
	gv := v1.SchemeGroupVersion
	newPodList := func() kruntime.Object { return &v1.PodList{} }
	three := encode(t, bench.NewPodList(0, 3, "1000"), gv)
	threeRaw := func() []byte { s, e := rawSpan(t, three); return append([]byte(nil), three[s:e]...) }()
	other := encode(t, bench.NewPodList(50, 2, "2000"), gv)
	otherStart, otherEnd := rawSpan(t, other)
	onePod := marshal(t, bench.NewPod(9, "9"))

	// A second object after the first, in the envelope's fields after it.
	second := append([]byte(nil), three...)
	second = append(second, 0x12)
	second = binary.AppendUvarint(second, uint64(otherEnd-otherStart))
	second = append(second, other[otherStart:otherEnd]...)
	// A list field between items that is not length-delimited, then an item.
	mixed := append([]byte(nil), threeRaw...)
	mixed = append(mixed, 0x28, 0x07)
	mixed = append(mixed, 0x12)
	mixed = binary.AppendUvarint(mixed, uint64(len(onePod)))
	mixed = append(mixed, onePod...)

	type body struct {
		name string
		data []byte
	}
	bodies := []body{
		{"empty list", encode(t, &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "5"}}, gv)},
		{"one pod", encode(t, bench.NewPodList(0, 1, "1000"), gv)},
		{"twenty pods", encode(t, bench.NewPodList(0, 20, "1000"), gv)},
		{"varint list field between items", withRaw(t, three, mixed)},
		{"item longer than the list", withRaw(t, three, append(append([]byte(nil), threeRaw...), 0x12, 0x7f, 0x0a))},
		{"list metadata after the items", withRaw(t, three, append(append([]byte(nil), threeRaw...), 0x0a, 0x04, 0x12, 0x02, 'r', 'v'))},
		{"bad tag in the list", withRaw(t, three, append(append([]byte(nil), threeRaw...), 0x00, 0x01))},
		{"second object after the first", second},
		{"kind repeated after the object", append(append([]byte(nil), three...), 0x0a, 0x09, 0x12, 0x07, 'P', 'o', 'd', 'L', 'i', 's', 't')},
		{"pod, not a list", encode(t, bench.NewPod(1, "1"), gv)},
		{"status", encode(t, &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired}, gv)},
		{"unknown envelope field first", append(append(append([]byte(nil), protobufPrefix...), 0x2a, 0x01, 'x'), three[len(protobufPrefix):]...)},
		{"no kind", envelopeOf(t, "", "", threeRaw)},
		{"empty body", nil},
		{"prefix only", protobufPrefix},
		{"json", []byte(`{"kind":"PodList","apiVersion":"v1","items":[]}`)},
	}
	for n := len(three) - 1; n >= 0; n -= 1 + len(three)/97 {
		bodies = append(bodies, body{"truncated", three[:n]})
	}
	r := rand.New(rand.NewSource(3))
	start, end := rawSpan(t, three)
	for range 200 {
		c := append([]byte(nil), three...)
		for range 1 + r.Intn(3) {
			c[start+r.Intn(end-start)] = byte(r.Intn(256))
		}
		bodies = append(bodies, body{"corrupted", c})
	}

	decodedAsItArrived := 0
	for _, b := range bodies {
		wantObj, wantGVK, wantErr := want.Decode(bytes.Clone(b.data), nil, newPodList())
		gotOut, readErr := streamedOutcome(bytes.NewReader(b.data), got, newPodList, podListKind)
		require.NoError(t, readErr, b.name)
		requireSameOutcome(t, b.name, decodeOutcome{wantObj, wantGVK, wantErr}, gotOut)
		if res := ReadList(bytes.NewReader(b.data), &v1.PodList{}, podListKind); res.Decoded {
			decodedAsItArrived++
		}
	}
	require.GreaterOrEqual(t, decodedAsItArrived, 4, "ReadList decoded too few of the bodies as they arrived")

	configMaps := &v1.ConfigMapList{Items: []v1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}, BinaryData: map[string][]byte{"b": {}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
	}}
	cmBody := encode(t, configMaps, gv)
	newCMList := func() kruntime.Object { return &v1.ConfigMapList{} }
	wantObj, wantGVK, wantErr := want.Decode(bytes.Clone(cmBody), nil, newCMList())
	gotOut, readErr := streamedOutcome(bytes.NewReader(cmBody), got, newCMList, v1.SchemeGroupVersion.WithKind("ConfigMapList"))
	require.NoError(t, readErr)
	requireSameOutcome(t, "config map list", decodeOutcome{wantObj, wantGVK, wantErr}, gotOut)
	require.Len(t, gotOut.obj.(*v1.ConfigMapList).Items, 2)
}

// TestReadListRefusesAnotherKindAfterTheObject checks the one outcome that
// differs from the client's: a body whose envelope gives, after the list's
// bytes, another kind (or a group) fails with ErrListEnvelope when read.
func TestReadListRefusesAnotherKindAfterTheObject(t *testing.T) {
	three := encode(t, bench.NewPodList(0, 3, "1000"), v1.SchemeGroupVersion)
	for name, trailer := range map[string][]byte{
		"another kind": {0x0a, 0x05, 0x12, 0x03, 'P', 'o', 'd'},
		"a group":      {0x2b, 0x2c},
	} {
		res := ReadList(bytes.NewReader(append(append([]byte(nil), three...), trailer...)), &v1.PodList{}, podListKind)
		require.False(t, res.Decoded, name)
		_, err := io.ReadAll(res.Body)
		require.ErrorIs(t, err, ErrListEnvelope, name)
	}
}

// failingReader returns its data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// TestReadListPassesReadErrorsOn checks that reading ListResult.Body fails
// with the error reading the body failed with, wherever it happened: in the
// prefix, the envelope, the list's bytes, after a field that failed to
// decode, and after the object.
func TestReadListPassesReadErrorsOn(t *testing.T) {
	three := encode(t, bench.NewPodList(0, 3, "1000"), v1.SchemeGroupVersion)
	start, end := rawSpan(t, three)
	corrupted := append([]byte(nil), three...)
	corrupted[start+3] = 0xff
	broken := errors.New("connection reset")
	for name, data := range map[string][]byte{
		"in the prefix":          three[:2],
		"in the envelope":        three[:start-1],
		"in the list":            three[:start+(end-start)/2],
		"after a failed field":   corrupted[:end-1],
		"after the object":       three[:end],
		"after the whole answer": three,
	} {
		res := ReadList(&failingReader{data: data, err: broken}, &v1.PodList{}, podListKind)
		_, err := io.ReadAll(res.Body)
		require.ErrorIs(t, err, broken, name)
		require.False(t, res.Decoded, name)
	}
}

// TestReadListHoldsOneItemAtATime checks that ReadList does not hold a
// body whole: decoding a list of 1,000 benchmark pods as it is read
// allocates less than half the body's size beyond what Unmarshal allocates
// for the same list from the body in memory (whose own bytes it does not
// count); the difference is Items growing by doubling and one item's
// buffer.
func TestReadListHoldsOneItemAtATime(t *testing.T) {
	body := encode(t, bench.NewPodList(0, 1000, "1000"), v1.SchemeGroupVersion)
	start, end := rawSpan(t, body)
	allocated := func(f func()) uint64 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	whole := allocated(func() { require.NoError(t, Unmarshal(body[start:end], &v1.PodList{})) })
	streamed := allocated(func() {
		res := ReadList(bytes.NewReader(body), &v1.PodList{}, podListKind)
		require.True(t, res.Decoded)
	})
	t.Logf("body %d bytes; allocated: whole %d, streamed %d", len(body), whole, streamed)
	require.Less(t, streamed, whole+uint64(len(body))/2)
}

// TestReadListIsVerified checks that an active Verification compares the
// lists ReadList decodes, and counts them.
func TestReadListIsVerified(t *testing.T) {
	v, stop := StartVerification()
	defer stop()
	before := v.Decoded()
	body := encode(t, bench.NewPodList(0, 5, "1000"), v1.SchemeGroupVersion)
	res := ReadList(bytes.NewReader(body), &v1.PodList{}, podListKind)
	require.True(t, res.Decoded)
	require.Equal(t, before+1, v.Decoded())
	require.Empty(t, v.Differences())
}

// TestReadListBoundsWhatItSetsAsideForItems checks that a body declaring far
// more list bytes than it sends makes ReadList set aside at most maxPresize
// for the items, and still gives the client's outcome (the body cut short).
func TestReadListBoundsWhatItSetsAsideForItems(t *testing.T) {
	pod := marshal(t, bench.NewPod(1, "1"))
	item := binary.AppendUvarint([]byte{0x12}, uint64(len(pod)))
	item = append(item, pod...)
	body := append([]byte(nil), protobufPrefix...)
	body = append(body, 0x0a, 0x0b, 0x0a, 0x02, 'v', '1', 0x12, 0x07, 'P', 'o', 'd', 'L', 'i', 's', 't')
	body = binary.AppendUvarint(append(body, 0x12), 1<<40)
	body = append(body, item...)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := ReadList(bytes.NewReader(body), &v1.PodList{}, podListKind)
	runtime.ReadMemStats(&after)
	require.False(t, res.Decoded)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(maxPresize+1<<20))

	want, got := clientDecoders(t)
	wantObj, wantGVK, wantErr := want.Decode(bytes.Clone(body), nil, &v1.PodList{})
	gotOut, readErr := streamedOutcome(bytes.NewReader(body), got, func() kruntime.Object { return &v1.PodList{} }, podListKind)
	require.NoError(t, readErr)
	requireSameOutcome(t, "declared far more than sent", decodeOutcome{wantObj, wantGVK, wantErr}, gotOut)
	require.ErrorIs(t, gotOut.err, io.ErrUnexpectedEOF)
}
