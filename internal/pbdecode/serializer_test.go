package pbdecode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"

	"github.com/kinformer/kinformer/internal/bench"
)

// clientSerializers returns the negotiated serializer of client-go's
// generated clients and NewNegotiatedSerializer around it.
func clientSerializers() (apimachinery, generated runtime.NegotiatedSerializer) {
	base := rest.CodecFactoryForGeneratedClient(scheme.Scheme, scheme.Codecs).WithoutConversion()
	return base, NewNegotiatedSerializer(scheme.Scheme, base)
}

// protobufInfo returns the protobuf serializers of ns.
func protobufInfo(t *testing.T, ns runtime.NegotiatedSerializer) runtime.SerializerInfo {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
	require.True(t, ok)
	return info
}

// encode returns obj in the API server's protobuf form for gv.
func encode(t *testing.T, obj runtime.Object, gv schema.GroupVersion) []byte {
	t.Helper()
	info := protobufInfo(t, scheme.Codecs)
	b, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, gv), obj)
	require.NoError(t, err)
	return b
}

// envelope returns the protobuf form of an object of kind apiVersion/kind
// whose own message is raw, which need not parse.
func envelopeOf(t *testing.T, apiVersion, kind string, raw []byte) []byte {
	t.Helper()
	unk := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}
	b, err := unk.Marshal()
	require.NoError(t, err)
	return append(append([]byte(nil), protobufPrefix...), b...)
}

// splitTypeMeta returns the protobuf form of a v1 Pod whose own message is
// raw, its envelope's TypeMeta in two fields: the kind in the first, the
// apiVersion in the second, which the generated code merges.
func splitTypeMeta(raw []byte) []byte {
	b := append([]byte(nil), protobufPrefix...)
	b = append(b, 0x0a, 5, 0x12, 3, 'P', 'o', 'd')
	b = append(b, 0x0a, 4, 0x0a, 2, 'v', '1')
	b = binary.AppendUvarint(append(b, 0x12), uint64(len(raw)))
	return append(b, raw...)
}

// marshal returns obj's own protobuf message.
func marshal(t *testing.T, obj protoMessage) []byte {
	t.Helper()
	b, err := obj.Marshal()
	require.NoError(t, err)
	return b
}

// TestNegotiatedSerializerDecodesAsApimachinery decodes bodies through the
// decoders a REST client gets from each negotiated serializer (client-go's,
// and the generated decoders' around it) and requires the same outcome:
// deeply equal objects, the same group-version-kind, the same error text,
// and the same state left in into. The bodies take every path: supported
// types, a kind that does not match into (a new object of the body's kind),
// no into, an into of type runtime.Unknown, an envelope without a kind (into
// gives it), unknown envelope fields, truncated bodies and truncated objects
// in well-formed envelopes.
func TestNegotiatedSerializerDecodesAsApimachinery(t *testing.T) {
	apimachinery, generated := clientSerializers()
	gv := v1.SchemeGroupVersion
	want, err := runtime.NewClientNegotiator(apimachinery, gv).Decoder(runtime.ContentTypeProtobuf, nil)
	require.NoError(t, err)
	got, err := runtime.NewClientNegotiator(generated, gv).Decoder(runtime.ContentTypeProtobuf, nil)
	require.NoError(t, err)

	podList := encode(t, bench.NewPodList(0, 20, "1000"), gv)
	pod := encode(t, bench.NewPod(3, "77"), gv)
	deployment := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a", Labels: map[string]string{"app": "web"}},
		Spec:       appsv1.DeploymentSpec{Template: v1.PodTemplateSpec{Spec: bench.NewPod(1, "1").Spec}},
	}
	configMaps := &v1.ConfigMapList{Items: []v1.ConfigMap{
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}, BinaryData: map[string][]byte{"b": {}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
	}}
	status := &metav1.Status{Status: metav1.StatusFailure, Reason: metav1.StatusReasonExpired, Code: 410, Message: "too old"}
	podRaw := marshal(t, bench.NewPod(5, "9"))
	type body struct {
		name string
		data []byte
		into func() runtime.Object
	}
	bodies := []body{
		{"pod list", podList, func() runtime.Object { return &v1.PodList{} }},
		{"pod", pod, func() runtime.Object { return &v1.Pod{} }},
		{"pod, no into", pod, func() runtime.Object { return nil }},
		{"deployment", encode(t, deployment, appsv1.SchemeGroupVersion), func() runtime.Object { return &appsv1.Deployment{} }},
		{"config map list", encode(t, configMaps, gv), func() runtime.Object { return &v1.ConfigMapList{} }},
		{"status into a pod list", encode(t, status, gv), func() runtime.Object { return &v1.PodList{} }},
		{"pod into a config map", pod, func() runtime.Object { return &v1.ConfigMap{} }},
		{"pod into runtime.Unknown", pod, func() runtime.Object { return &runtime.Unknown{} }},
		{"no kind, into gives it", envelopeOf(t, "", "", podRaw), func() runtime.Object { return &v1.Pod{} }},
		{"no kind, no into", envelopeOf(t, "", "", podRaw), func() runtime.Object { return nil }},
		{"unregistered kind", envelopeOf(t, "v1", "Nothing", podRaw), func() runtime.Object { return nil }},
		{"unknown envelope field", append(append([]byte(nil), pod...), 0x2a, 1, 'x'), func() runtime.Object { return &v1.Pod{} }},
		{"repeated envelope fields", append(envelopeOf(t, "v1", "Pod", []byte{0x0a, 0}), envelopeOf(t, "v1", "", podRaw)[len(protobufPrefix):]...), func() runtime.Object { return &v1.Pod{} }},
		{"type meta in two parts", splitTypeMeta(podRaw), func() runtime.Object { return nil }},
		{"empty body", nil, func() runtime.Object { return &v1.Pod{} }},
		{"prefix only", protobufPrefix, func() runtime.Object { return &v1.Pod{} }},
		{"not protobuf", []byte(`{"kind":"Pod"}`), func() runtime.Object { return &v1.Pod{} }},
	}
	for n := len(podList) - 1; n >= 0; n -= 1 + len(podList)/60 {
		bodies = append(bodies, body{"truncated pod list", podList[:n], func() runtime.Object { return &v1.PodList{} }})
	}
	for n := len(podRaw) - 1; n >= 0; n -= 1 + len(podRaw)/60 {
		bodies = append(bodies, body{"truncated pod in its envelope", envelopeOf(t, "v1", "Pod", podRaw[:n]), func() runtime.Object { return &v1.Pod{} }})
	}

	v, stop := StartVerification()
	defer stop()
	decodedBefore := v.Decoded()
	for _, b := range bodies {
		wantInto, gotInto := b.into(), b.into()
		wantObj, wantGVK, wantErr := want.Decode(bytes.Clone(b.data), nil, wantInto)
		gotObj, gotGVK, gotErr := got.Decode(bytes.Clone(b.data), nil, gotInto)
		require.Equalf(t, wantErr != nil, gotErr != nil, "%s: apimachinery's error %v, ours %v", b.name, wantErr, gotErr)
		if wantErr != nil {
			require.Equal(t, wantErr.Error(), gotErr.Error(), b.name)
			require.Equal(t, errors.Is(wantErr, io.ErrUnexpectedEOF), errors.Is(gotErr, io.ErrUnexpectedEOF), b.name)
		}
		require.Equal(t, wantGVK, gotGVK, b.name)
		require.Truef(t, reflect.DeepEqual(wantObj, gotObj), "%s: decoded differently: %v", b.name, differingFieldsOrNil(wantObj, gotObj))
		require.Truef(t, reflect.DeepEqual(wantInto, gotInto), "%s: into left differently", b.name)
		if gotObj != nil && gotObj != gotInto {
			require.NotSame(t, gotObj, wantObj)
		}
	}
	require.Greater(t, v.Decoded(), decodedBefore, "the generated decoders decoded none of the bodies")
	require.Empty(t, v.Differences())
}

// differingFieldsOrNil is differingFields for possibly nil objects.
func differingFieldsOrNil(want, got runtime.Object) []string {
	if want == nil || got == nil {
		return []string{"one is nil"}
	}
	return differingFields(want, got)
}

// watchResult is one Decode of client-go's watch decoder.
type watchResult struct {
	eventType string
	obj       runtime.Object
	err       string
}

// decodeWatch decodes the protobuf watch stream with ns's stream decoders
// exactly as client-go's REST client does (a framed streaming decoder of
// metav1.WatchEvent, and rest/watch's Decoder decoding each event's
// object), until the first error, and returns every result; the objects
// of earlier events are kept while later frames overwrite the stream
// decoder's buffer.
func decodeWatch(t *testing.T, ns runtime.NegotiatedSerializer, stream []byte) []watchResult {
	t.Helper()
	objects, events, framer, err := runtime.NewClientNegotiator(ns, v1.SchemeGroupVersion).StreamDecoder(runtime.ContentTypeProtobuf, nil)
	require.NoError(t, err)
	frames := streaming.NewDecoder(framer.NewFrameReader(io.NopCloser(bytes.NewReader(stream))), events)
	dec := restclientwatch.NewDecoder(frames, objects)
	defer dec.Close()
	var out []watchResult
	for {
		typ, obj, err := dec.Decode()
		r := watchResult{eventType: string(typ), obj: obj}
		if err != nil {
			r.err = err.Error()
		}
		out = append(out, r)
		if err != nil {
			return out
		}
	}
}

// frame returns one event of a protobuf watch stream: a metav1.WatchEvent
// of type typ whose object is raw, length-delimited.
func frame(t *testing.T, typ string, raw []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	info := protobufInfo(t, scheme.Codecs)
	w := info.StreamSerializer.Framer.NewFrameWriter(&buf)
	require.NoError(t, info.StreamSerializer.Serializer.Encode(&metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: raw}}, w))
	return buf.Bytes()
}

// TestNegotiatedSerializerDecodesWatchStreamsAsApimachinery decodes watch
// streams through client-go's watch decoders over each negotiated
// serializer and requires the same events, objects and errors, in order:
// events of several types and kinds, an ERROR event with a Status, a
// BOOKMARK, an event type rest/watch refuses, an event whose object does
// not decode, frames with unknown fields, and streams cut short at every
// point.
func TestNegotiatedSerializerDecodesWatchStreamsAsApimachinery(t *testing.T) {
	apimachinery, generated := clientSerializers()
	gv := v1.SchemeGroupVersion
	pod := encode(t, bench.NewPod(1, "10"), gv)
	deployment := encode(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", ResourceVersion: "11"}}, appsv1.SchemeGroupVersion)
	configMap := encode(t, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", ResourceVersion: "12"}, Data: map[string]string{"a": "b"}}, gv)
	bookmark := encode(t, &v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "13", Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}, gv)
	gone := encode(t, &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired}, gv)

	events := bytes.Join([][]byte{
		frame(t, "ADDED", pod),
		frame(t, "MODIFIED", deployment),
		frame(t, "DELETED", configMap),
		frame(t, "BOOKMARK", bookmark),
		frame(t, "ADDED", encode(t, bench.NewPod(2, "14"), gv)),
		frame(t, "ERROR", gone),
	}, nil)
	// A frame with an unknown field, and one whose object field repeats
	// (the generated code merges the two objects).
	withUnknown := append(marshal(t, &metav1.WatchEvent{Type: "ADDED", Object: runtime.RawExtension{Raw: pod}}), 0x1a, 1, 'x')
	repeated := append(marshal(t, &metav1.WatchEvent{Type: "ADDED", Object: runtime.RawExtension{Raw: configMap}}),
		marshal(t, &metav1.WatchEvent{Type: "ADDED", Object: runtime.RawExtension{Raw: pod}})...)
	streams := map[string][]byte{
		"events":                 events,
		"bad event type":         append(frame(t, "ADDED", pod), frame(t, "RENAMED", pod)...),
		"object does not decode": append(frame(t, "ADDED", pod), frame(t, "ADDED", envelopeOf(t, "v1", "Pod", []byte{0x0a, 0x05}))...),
		"empty object":           frame(t, "ADDED", nil),
		"unknown event field":    lengthPrefixed(withUnknown),
		"repeated object field":  lengthPrefixed(repeated),
	}
	for n := len(events) - 1; n > 0; n -= 1 + len(events)/50 {
		streams[fmt.Sprintf("cut at %d", n)] = events[:n]
	}

	v, stop := StartVerification()
	defer stop()
	eventsBefore := v.WatchEvents()
	for name, stream := range streams {
		want := decodeWatch(t, apimachinery, stream)
		got := decodeWatch(t, generated, stream)
		require.Equal(t, len(want), len(got), name)
		for i := range want {
			require.Equal(t, want[i].eventType, got[i].eventType, "%s: event %d", name, i)
			require.Equal(t, want[i].err, got[i].err, "%s: event %d", name, i)
			require.Truef(t, reflect.DeepEqual(want[i].obj, got[i].obj), "%s: event %d decoded differently", name, i)
		}
	}
	require.Greater(t, v.WatchEvents(), eventsBefore, "no frame was read without copying")
	require.Empty(t, v.Differences())
}

// lengthPrefixed returns msg as one frame of a protobuf watch stream.
func lengthPrefixed(msg []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(msg))), msg...)
}

// TestVerificationRecordsDifferences checks that a Verification records an
// object that differs from apimachinery's decoding, a failure apimachinery
// does not share, and nothing once stopped.
func TestVerificationRecordsDifferences(t *testing.T) {
	apimachinery, _ := clientSerializers()
	base := protobufInfo(t, apimachinery).Serializer
	data := encode(t, bench.NewPod(1, "10"), v1.SchemeGroupVersion)
	gvk := v1.SchemeGroupVersion.WithKind("Pod")

	v, stop := StartVerification()
	nested, stopNested := StartVerification()
	require.Same(t, v, nested, "a second start shares the active verification")
	stopNested()
	require.Same(t, v, activeVerification.Load(), "stopping the nested one keeps the first active")

	right, _, err := base.Decode(data, nil, &v1.Pod{})
	require.NoError(t, err)
	v.checkObject(base, data, nil, &v1.Pod{}, right, gvk)
	require.Empty(t, v.Differences())

	wrong := right.DeepCopyObject().(*v1.Pod)
	wrong.Spec.NodeName = "elsewhere"
	v.checkObject(base, data, nil, &v1.Pod{}, wrong, gvk)
	v.checkFailure(base, data, nil, &v1.Pod{}, io.ErrUnexpectedEOF)
	diffs := v.Differences()
	require.Len(t, diffs, 2)
	require.Contains(t, diffs[0], "Spec")
	require.Contains(t, diffs[1], "apimachinery decodes")
	require.EqualValues(t, 2, v.Decoded())

	stop()
	require.Nil(t, activeVerification.Load())
}

// fakeMain is a test binary's *testing.M for RunVerifying: its Run calls
// run and returns code.
type fakeMain struct {
	run  func()
	code int
}

func (m fakeMain) Run() int {
	m.run()
	return m.code
}

// TestRunVerifyingFailsOnADifference checks that RunVerifying reports what
// its run decoded, keeps the run's exit code when nothing differed, and
// fails the binary when something did.
func TestRunVerifyingFailsOnADifference(t *testing.T) {
	apimachinery, generated := clientSerializers()
	base := protobufInfo(t, apimachinery).Serializer
	data := encode(t, bench.NewPod(1, "10"), v1.SchemeGroupVersion)
	decoder, err := runtime.NewClientNegotiator(generated, v1.SchemeGroupVersion).Decoder(runtime.ContentTypeProtobuf, nil)
	require.NoError(t, err)

	var out bytes.Buffer
	clean := fakeMain{code: 3, run: func() {
		_, _, err := decoder.Decode(data, nil, &v1.Pod{})
		require.NoError(t, err)
	}}
	require.Equal(t, 3, RunVerifying(clean, &out))
	require.Contains(t, out.String(), "1 objects and 0 watch frames")
	require.Contains(t, out.String(), ": 0 differences")
	require.Nil(t, activeVerification.Load(), "RunVerifying leaves verification off")

	out.Reset()
	differing := fakeMain{run: func() {
		wrong := bench.NewPod(2, "10")
		activeVerification.Load().checkObject(base, data, nil, &v1.Pod{}, wrong, v1.SchemeGroupVersion.WithKind("Pod"))
	}}
	require.Equal(t, 1, RunVerifying(differing, &out))
	require.Contains(t, out.String(), "decoded differently from apimachinery")
}
