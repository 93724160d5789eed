package projection

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	restwatch "k8s.io/client-go/rest/watch"
	"k8s.io/utils/ptr"
)

// The serializers client-go uses for protobuf: objects and lists enveloped,
// watch events raw inside length-delimited frames.
var (
	pbCodec    = protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	pbRawCodec = protobuf.NewRawSerializer(scheme.Scheme, scheme.Scheme)
)

// benchPaths is the projection of the informer benchmarks.
var benchPaths = []string{"metadata.labels", "metadata.ownerReferences", "spec.nodeName", "status.phase", "status.conditions"}

func pbEncode(t testing.TB, obj runtime.Object) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, pbCodec.Encode(obj, &buf))
	return buf.Bytes()
}

func pbDecode(t testing.TB, data []byte) runtime.Object {
	t.Helper()
	obj, _, err := pbCodec.Decode(data, nil, nil)
	require.NoError(t, err)
	return obj
}

func pbMustCompile(t testing.TB, p *Projection, obj runtime.Object) *pbPlan {
	t.Helper()
	plan, err := compileProtobuf(p.root, reflect.TypeOf(obj), reflect.TypeOf(obj).Elem().Name())
	require.NoError(t, err)
	return plan
}

// pruneJSON keeps of the decoded JSON value v what the tree n keeps: the
// oracle the protobuf filter is checked against.
func pruneJSON(v any, n *node) any {
	if n.all {
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, c := range n.children {
			if val, ok := x[k]; ok {
				out[k] = pruneJSON(val, c)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = pruneJSON(x[i], n)
		}
		return out
	}
	return v
}

// pbExpected computes the projection of full independently of the
// protobuf filter: full as JSON, pruned by the tree, marked, decoded into
// the typed object. It is then normalized by a protobuf round trip, which
// only erases what protobuf cannot tell apart (a nil from an empty list or
// map).
func pbExpected(t testing.TB, full runtime.Object, p *Projection) runtime.Object {
	t.Helper()
	data, err := json.Marshal(full)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	pruned := pruneJSON(m, p.root).(map[string]any)
	meta, _ := pruned["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		pruned["metadata"] = meta
	}
	ann, _ := meta["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	ann[MarkerAnnotation] = p.Fingerprint()
	data, err = json.Marshal(pruned)
	require.NoError(t, err)
	obj := reflect.New(reflect.TypeOf(full).Elem()).Interface().(runtime.Object)
	require.NoError(t, json.Unmarshal(data, obj))
	return pbDecode(t, pbEncode(t, obj))
}

type pbOracleCase struct {
	name  string
	obj   runtime.Object
	paths []string
}

func pbOracleCases() []pbOracleCase {
	pod := pbTestPod("web-7c9f-x2x4z")
	return []pbOracleCase{
		{"pod/bench", pod, benchPaths},
		{"pod/lists", pod, []string{"spec.containers.name", "spec.initContainers.image", "status.containerStatuses.state", "status.containerStatuses.name"}},
		{"pod/map-keys", pod, []string{"metadata.labels.app", "metadata.labels.absent", "metadata.annotations.team"}},
		{"pod/whole-metadata", pod, []string{"metadata", "spec.nodeName"}},
		{"pod/volume-configmap", pod, []string{"spec.volumes.configMap"}},
		{"pod/volume-inline", pod, []string{"spec.volumes.name", "spec.volumes.projected.sources.serviceAccountToken", "spec.volumes.emptyDir.sizeLimit", "spec.volumes.persistentVolumeClaim"}},
		{"pod/containers-deep", pod, []string{
			"spec.containers.resources", "spec.containers.env.valueFrom.secretKeyRef",
			"spec.containers.ports.containerPort", "spec.containers.livenessProbe.httpGet.port",
			"spec.containers.readinessProbe.tcpSocket", "spec.tolerations.key", "spec.securityContext",
		}},
		{"pod/resource-keys", pod, []string{"spec.containers.resources.limits.cpu", "spec.containers.resources.requests.memory"}},
		{"pod/annotations-managed-fields", pod, []string{"metadata.annotations", "metadata.managedFields.manager", "metadata.managedFields.fieldsV1", "metadata.creationTimestamp", "metadata.finalizers"}},
		{"pod/spec-status", pod, []string{"spec", "status"}},
		{"pod/identity-only", pod, nil},
		{"node/mixed", pbTestNode(), []string{
			"metadata.labels", "status.capacity", "status.allocatable.memory", "status.conditions.type",
			"status.conditions.status", "spec.taints", "status.addresses.address", "status.nodeInfo.kubeletVersion",
		}},
		{"node/images", pbTestNode(), []string{"status.images.names", "spec.podCIDRs", "status.daemonEndpoints.kubeletEndpoint.Port"}},
		{"deployment/mixed", pbTestDeployment(), []string{
			"spec.replicas", "spec.template.spec.containers.image", "spec.template.metadata.labels",
			"status.readyReplicas", "spec.selector.matchLabels.app", "spec.strategy.rollingUpdate.maxSurge", "status.conditions.reason",
		}},
		{"service/ports", pbTestService(), []string{"spec.ports.targetPort", "spec.ports.name", "spec.clusterIP", "spec.selector"}},
		{"service/whole-ports", pbTestService(), []string{"spec.ports", "spec.type"}},
		{"configmap/keys", pbTestConfigMap(), []string{"data.key1", "binaryData"}},
		{"configmap/data", pbTestConfigMap(), []string{"data", "immutable", "metadata.annotations.note"}},
	}
}

func TestProtobufFilterObjectMatchesJSONOracle(t *testing.T) {
	for _, tc := range pbOracleCases() {
		t.Run(tc.name, func(t *testing.T) {
			p := MustNew(tc.paths...)
			plan := pbMustCompile(t, p, tc.obj)
			in := pbEncode(t, tc.obj)
			out, err := plan.filterObject([]byte("prefix"), in, p.Fingerprint())
			require.NoError(t, err)
			require.True(t, bytes.HasPrefix(out, []byte("prefix")), "filterObject must append to dst")
			got := pbDecode(t, out[len("prefix"):])
			assert.Equal(t, pbExpected(t, tc.obj, p), got)

			// Filtering the projected object again changes nothing.
			again, err := plan.filterObject(nil, out[len("prefix"):], p.Fingerprint())
			require.NoError(t, err)
			assert.Equal(t, out[len("prefix"):], again)
		})
	}
}

func TestProtobufFilterObjectWholeTree(t *testing.T) {
	pod := pbTestPod("p")
	plan, err := compileProtobuf(&node{all: true}, reflect.TypeOf(pod), "Pod")
	require.NoError(t, err)
	out, err := plan.filterObject(nil, pbEncode(t, pod), "fp")
	require.NoError(t, err)
	want := pod.DeepCopy()
	want.Annotations[MarkerAnnotation] = "fp"
	assert.Equal(t, pbDecode(t, pbEncode(t, want)), pbDecode(t, out))
}

// TestProtobufFilterBenchProjection checks the benchmark's projection of a
// full pod against a literal: the filtered object holds that and nothing
// else, a fraction of the input's bytes, and filtering allocates nothing
// once dst has room.
func TestProtobufFilterBenchProjection(t *testing.T) {
	pod := pbTestPod("web-1")
	p := MustNew(benchPaths...)
	plan := pbMustCompile(t, p, pod)
	in := pbEncode(t, pod)
	out, err := plan.filterObject(nil, in, p.Fingerprint())
	require.NoError(t, err)

	full := pbDecode(t, in).(*corev1.Pod) // times as protobuf decodes them
	want := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            "web-1",
			Namespace:       "shop",
			UID:             pod.UID,
			ResourceVersion: "48213",
			Labels:          map[string]string{"app": "web", "pod-template-hash": "7c9f", "tier": "frontend"},
			Annotations:     map[string]string{MarkerAnnotation: p.Fingerprint()},
			OwnerReferences: full.OwnerReferences,
		},
		Spec: corev1.PodSpec{NodeName: "node-a1"},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: full.Status.Conditions,
		},
	}
	assert.Equal(t, want, pbDecode(t, out))
	assert.Less(t, len(out), len(in)/4, "the projected pod should be a fraction of the full one (%d of %d bytes)", len(out), len(in))

	dst := make([]byte, 0, 2*len(in))
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := plan.filterObject(dst[:0], in, p.Fingerprint()); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs, "filterObject allocations with room in dst")
}

func TestProtobufFilterObjectReplacesMarker(t *testing.T) {
	pod := pbTestPod("marked")
	pod.Annotations[MarkerAnnotation] = "0123456789abcdef"
	in := pbEncode(t, pod)
	for _, paths := range [][]string{benchPaths, {"metadata.annotations"}, {"metadata"}, {"metadata.annotations.team"}} {
		t.Run(strings.Join(paths, ","), func(t *testing.T) {
			p := MustNew(paths...)
			plan := pbMustCompile(t, p, pod)
			out, err := plan.filterObject(nil, in, p.Fingerprint())
			require.NoError(t, err)
			assert.Equal(t, 1, bytes.Count(out, []byte(MarkerAnnotation)), "the marker must appear once")
			got := pbDecode(t, out).(*corev1.Pod)
			assert.Equal(t, p.Fingerprint(), got.Annotations[MarkerAnnotation])
			assert.Equal(t, pbExpected(t, pod, p), got)
		})
	}
}

// pbEnvelope builds an enveloped body of kind around the raw message.
func pbEnvelope(t testing.TB, apiVersion, kind string, raw []byte) []byte {
	t.Helper()
	unk := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: apiVersion, Kind: kind}, Raw: raw}
	data, err := unk.Marshal()
	require.NoError(t, err)
	return append([]byte("k8s\x00"), data...)
}

func TestProtobufFilterObjectCreatesMetadata(t *testing.T) {
	p := MustNew(benchPaths...)
	plan := pbMustCompile(t, p, &corev1.Pod{})
	spec, err := (&corev1.PodSpec{NodeName: "n1", Hostname: "dropped"}).Marshal()
	require.NoError(t, err)
	specOnly := pbAppendBytesField(nil, 2, spec) // PodSpec is field 2 of Pod

	for name, in := range map[string][]byte{
		"no metadata": pbEnvelope(t, "v1", "Pod", specOnly),
		"no object":   pbEnvelope(t, "v1", "Pod", nil),
	} {
		t.Run(name, func(t *testing.T) {
			out, err := plan.filterObject(nil, in, p.Fingerprint())
			require.NoError(t, err)
			got := pbDecode(t, out).(*corev1.Pod)
			assert.Equal(t, map[string]string{MarkerAnnotation: p.Fingerprint()}, got.Annotations)
			if name == "no metadata" {
				assert.Equal(t, corev1.PodSpec{NodeName: "n1"}, got.Spec)
			}
		})
	}
}

func TestProtobufFilterObjectOtherKindPassesThrough(t *testing.T) {
	p := MustNew(benchPaths...)
	plan := pbMustCompile(t, p, &corev1.Pod{})
	status := &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure, Message: "too old resource version", Reason: metav1.StatusReasonExpired, Code: 410}
	in := pbEncode(t, status)
	out, err := plan.filterObject([]byte("x"), in, p.Fingerprint())
	require.NoError(t, err)
	assert.Equal(t, append([]byte("x"), in...), out)
}

func pbTestPodList(t testing.TB) *corev1.PodList {
	list := &corev1.PodList{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
		ListMeta: metav1.ListMeta{ResourceVersion: "50000", Continue: "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ", RemainingItemCount: ptr.To[int64](12)},
	}
	for i, name := range []string{"web-a", "web-b", "web-c"} {
		pod := pbTestPod(name)
		pod.TypeMeta = metav1.TypeMeta{}
		if i == 1 {
			pod.Spec.NodeName = "node-b2"
			pod.Status.Phase = corev1.PodPending
			pod.Labels["canary"] = "true"
			pod.Annotations[MarkerAnnotation] = "stale"
		}
		list.Items = append(list.Items, *pod)
	}
	return list
}

func TestProtobufFilterList(t *testing.T) {
	list := pbTestPodList(t)
	in := pbEncode(t, list)
	for _, paths := range [][]string{benchPaths, {"spec.containers.name", "metadata.labels.app"}, {"metadata"}} {
		t.Run(strings.Join(paths, ","), func(t *testing.T) {
			p := MustNew(paths...)
			plan := pbMustCompile(t, p, &corev1.Pod{})

			out, err := plan.filterList(bytes.NewReader(in), p.Fingerprint())
			require.NoError(t, err)
			slow, err := plan.filterList(iotest.OneByteReader(bytes.NewReader(in)), p.Fingerprint())
			require.NoError(t, err)
			assert.Equal(t, out, slow, "the output must not depend on how the input is read")

			want := &corev1.PodList{TypeMeta: list.TypeMeta, ListMeta: list.ListMeta}
			for i := range list.Items {
				item := list.Items[i].DeepCopy()
				item.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
				exp := pbExpected(t, item, p).(*corev1.Pod)
				exp.TypeMeta = metav1.TypeMeta{}
				want.Items = append(want.Items, *exp)
			}
			assert.Equal(t, want, pbDecode(t, out))
			assert.Equal(t, len(list.Items), bytes.Count(out, []byte(MarkerAnnotation)))
		})
	}
}

func TestProtobufFilterListOtherKindPassesThrough(t *testing.T) {
	p := MustNew(benchPaths...)
	plan := pbMustCompile(t, p, &corev1.Pod{})
	cms := &corev1.ConfigMapList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMapList"}, Items: []corev1.ConfigMap{*pbTestConfigMap()}}
	for name, in := range map[string][]byte{
		"list of another kind": pbEncode(t, cms),
		"single object":        pbEncode(t, pbTestPod("single")),
	} {
		t.Run(name, func(t *testing.T) {
			out, err := plan.filterList(iotest.OneByteReader(bytes.NewReader(in)), p.Fingerprint())
			require.NoError(t, err)
			assert.Equal(t, in, out)
		})
	}
}

func TestProtobufFilterListEmpty(t *testing.T) {
	p := MustNew(benchPaths...)
	plan := pbMustCompile(t, p, &corev1.Pod{})
	in := pbEncode(t, &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}, ListMeta: metav1.ListMeta{ResourceVersion: "7"}})
	out, err := plan.filterList(bytes.NewReader(in), p.Fingerprint())
	require.NoError(t, err)
	assert.Equal(t, in, out)
}

// pbWatchStream encodes events as the API server does: each WatchEvent raw
// in a length-delimited frame, its object enveloped.
func pbWatchStream(t testing.TB, events ...watch.Event) []byte {
	t.Helper()
	var buf bytes.Buffer
	fw := protobuf.LengthDelimitedFramer.NewFrameWriter(&buf)
	for _, e := range events {
		ev := &metav1.WatchEvent{Type: string(e.Type), Object: runtime.RawExtension{Raw: pbEncode(t, e.Object)}}
		var one bytes.Buffer
		require.NoError(t, pbRawCodec.Encode(ev, &one))
		_, err := fw.Write(one.Bytes())
		require.NoError(t, err)
	}
	return buf.Bytes()
}

type pbCloseRecorder struct {
	io.Reader
	closed bool
}

func (c *pbCloseRecorder) Close() error { c.closed = true; return nil }

func TestProtobufWatchFilter(t *testing.T) {
	p := MustNew(benchPaths...)
	plan := pbMustCompile(t, p, &corev1.Pod{})

	added, modified, deleted := pbTestPod("a"), pbTestPod("b"), pbTestPod("c")
	modified.Status.Phase = corev1.PodSucceeded
	modified.Annotations[MarkerAnnotation] = "stale"
	bookmark := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			ResourceVersion: "60000",
			Annotations:     map[string]string{InitialEventsEndAnnotation: "true", "other": "dropped"},
		},
	}
	status := &metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure, Reason: metav1.StatusReasonExpired, Code: 410, Message: "too old resource version: 1 (50000)"}
	events := []watch.Event{
		{Type: watch.Added, Object: added},
		{Type: watch.Modified, Object: modified},
		{Type: watch.Deleted, Object: deleted},
		{Type: watch.Bookmark, Object: bookmark},
		{Type: watch.Error, Object: status},
	}
	in := pbWatchStream(t, events...)

	for _, oneByte := range []bool{false, true} {
		src := io.Reader(bytes.NewReader(in))
		if oneByte {
			src = iotest.OneByteReader(src)
		}
		rc := &pbCloseRecorder{Reader: src}
		filtered := newProtobufWatchFilter(rc, plan, p.Fingerprint())

		// Decode as client-go does, reading the filter a byte at a time.
		var reader io.Reader = filtered
		if oneByte {
			reader = iotest.OneByteReader(filtered)
		}
		frames := protobuf.LengthDelimitedFramer.NewFrameReader(io.NopCloser(reader))
		dec := restwatch.NewDecoder(streaming.NewDecoder(frames, pbRawCodec), pbCodec)
		for _, e := range events {
			typ, obj, err := dec.Decode()
			require.NoError(t, err)
			assert.Equal(t, e.Type, typ)
			switch e.Type {
			case watch.Error:
				assert.Equal(t, e.Object, obj, "a Status passes through")
			default:
				assert.Equal(t, pbExpected(t, e.Object, p), obj)
			}
			if e.Type == watch.Bookmark {
				assert.Equal(t, map[string]string{InitialEventsEndAnnotation: "true", MarkerAnnotation: p.Fingerprint()}, obj.(*corev1.Pod).Annotations)
			}
		}
		_, _, err := dec.Decode()
		assert.ErrorIs(t, err, io.EOF)
		require.NoError(t, filtered.Close())
		assert.True(t, rc.closed, "Close closes the underlying stream")
	}

	// The ERROR event's frame is copied byte for byte.
	out, err := io.ReadAll(newProtobufWatchFilter(io.NopCloser(bytes.NewReader(in)), plan, p.Fingerprint()))
	require.NoError(t, err)
	last := pbWatchStream(t, events[len(events)-1])
	assert.True(t, bytes.HasSuffix(out, last))
}

func TestCompileProtobufErrors(t *testing.T) {
	cases := []struct {
		paths []string
		obj   any
		want  string
	}{
		{[]string{"spec.foo"}, corev1.Pod{}, `projection: field path "spec.foo": no field "foo" in core/v1.PodSpec`},
		{[]string{"foo"}, corev1.Pod{}, `projection: field path "foo": no field "foo" in core/v1.Pod`},
		{[]string{"spec.volumes.foo"}, corev1.Pod{}, `projection: field path "spec.volumes.foo": no field "foo" in core/v1.Volume`},
		{[]string{"spec.volumes.configMap.foo"}, corev1.Pod{}, `projection: field path "spec.volumes.configMap.foo": no field "foo" in core/v1.ConfigMapVolumeSource`},
		{[]string{"status.conditions.foo"}, corev1.Pod{}, `projection: field path "status.conditions.foo": no field "foo" in core/v1.PodCondition`},
		{[]string{"metadata.creationTimestamp.seconds"}, corev1.Pod{}, `projection: field path "metadata.creationTimestamp.seconds": meta/v1.Time has no fields (it is kept whole or not at all)`},
		{[]string{"spec.nodeName.x"}, corev1.Pod{}, `projection: field path "spec.nodeName.x": string has no fields (it is kept whole or not at all)`},
		{[]string{"spec.containers.args.x"}, corev1.Pod{}, `projection: field path "spec.containers.args.x": []string has no fields (it is kept whole or not at all)`},
		{[]string{"metadata.labels.app.x"}, corev1.Pod{}, `projection: field path "metadata.labels.app.x": string has no fields (it is kept whole or not at all)`},
		{[]string{"spec.containers.resources.limits.cpu.x"}, corev1.Pod{}, `projection: field path "spec.containers.resources.limits.cpu.x": api/resource.Quantity has no fields (it is kept whole or not at all)`},
		{[]string{"spec.ports.targetPort.intVal"}, corev1.Service{}, `projection: field path "spec.ports.targetPort.intVal": util/intstr.IntOrString has no fields (it is kept whole or not at all)`},
		{[]string{"spec.replicas.x"}, appsv1.Deployment{}, `projection: field path "spec.replicas.x": int32 has no fields (it is kept whole or not at all)`},
		{[]string{"spec.nodeName"}, corev1.PodSpec{}, `projection: core/v1.PodSpec has no field "metadata" of type ObjectMeta`},
	}
	for _, tc := range cases {
		t.Run(tc.want, func(t *testing.T) {
			typ := reflect.TypeOf(tc.obj)
			_, err := compileProtobuf(MustNew(tc.paths...).root, typ, typ.Name())
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
		})
	}
}

// pbTreeObject is a recursive type, as CRDs' JSONSchemaProps is.
type pbTreeObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata" protobuf:"bytes,1,opt,name=metadata"`
	Spec              pbTreeNode `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

type pbTreeNode struct {
	Name     string                `json:"name" protobuf:"bytes,1,opt,name=name"`
	Children []pbTreeNode          `json:"children" protobuf:"bytes,2,rep,name=children"`
	Next     *pbTreeNode           `json:"next" protobuf:"bytes,3,opt,name=next"`
	ByName   map[string]pbTreeNode `json:"byName" protobuf:"bytes,4,rep,name=byName"`
	Weight   int64                 `json:"weight" protobuf:"varint,5,opt,name=weight"`
	Tags     []int32               `json:"tags" protobuf:"varint,6,rep,name=tags"`
}

func TestProtobufRecursiveType(t *testing.T) {
	p := MustNew("spec.children.children.name", "spec.next.next.next.weight", "spec.byName.x.children.name", "spec.tags")
	plan, err := compileProtobuf(p.root, reflect.TypeFor[pbTreeObject](), "Tree")
	require.NoError(t, err)

	// Hand-encoded: spec {name "root", weight 9, tags [1,2] packed,
	// children [{name "c1", children [{name "g1", weight 3}]}],
	// next {next {next {weight 4, name "n3"}}},
	// byName {"x": {name "bx", children [{name "bxc", weight 1}]}, "y": {name "by"}}}
	var b []byte
	msg := func(fields ...[]byte) []byte { return bytes.Join(fields, nil) }
	str := func(num uint64, s string) []byte { return pbAppendBytesField(nil, num, []byte(s)) }
	sub := func(num uint64, m []byte) []byte { return pbAppendBytesField(nil, num, m) }
	vint := func(num uint64, v uint64) []byte { return pbAppendVarint(pbAppendTag(nil, num, pbWireVarint), v) }
	spec := msg(
		str(1, "root"), vint(5, 9), sub(6, []byte{1, 2}),
		sub(2, msg(str(1, "c1"), sub(2, msg(str(1, "g1"), vint(5, 3))))),
		sub(3, sub(3, sub(3, msg(vint(5, 4), str(1, "n3"))))),
		sub(4, msg(str(1, "x"), sub(2, msg(str(1, "bx"), sub(2, msg(str(1, "bxc"), vint(5, 1))))))),
		sub(4, msg(str(1, "y"), sub(2, str(1, "by")))),
	)
	b = pbEnvelope(t, "example.com/v1", "Tree", msg(sub(1, str(1, "tree")), sub(2, spec)))
	out, err := plan.filterObject(nil, b, "fp")
	require.NoError(t, err)

	marker := sub(12, msg(str(1, MarkerAnnotation), str(2, "fp")))
	wantSpec := msg(
		sub(6, []byte{1, 2}),
		sub(2, msg(sub(2, str(1, "g1")))),
		sub(3, sub(3, sub(3, vint(5, 4)))),
		sub(4, msg(str(1, "x"), sub(2, sub(2, str(1, "bxc"))))),
	)
	want := pbEnvelope(t, "example.com/v1", "Tree", msg(sub(1, msg(str(1, "tree"), marker)), sub(2, wantSpec)))
	assert.Equal(t, want, out)
}

// pbMalformedCase is an input that must be refused with an error naming
// what is wrong.
type pbMalformedCase struct {
	name string
	in   []byte
	want string
}

func TestProtobufFilterMalformed(t *testing.T) {
	p := MustNew(append([]string{"metadata.labels.app"}, benchPaths[1:]...)...)
	plan := pbMustCompile(t, p, &corev1.Pod{})
	env := func(raw []byte) []byte { return pbEnvelope(t, "v1", "Pod", raw) }
	magic := func(b ...byte) []byte { return append([]byte("k8s\x00"), b...) }
	tooLong := pbAppendVarint(nil, 1<<32)

	objects := []pbMalformedCase{
		{"empty", nil, "does not start with the magic bytes"},
		{"wrong magic", []byte("k8s\x01\x0a\x00"), "does not start with the magic bytes"},
		{"json", []byte(`{"kind":"Pod"}`), "does not start with the magic bytes"},
		{"truncated tag", magic(0x80), "truncated varint"},
		{"length beyond input", magic(0x0a, 0x05, 'a'), "length 5 beyond the input (1 bytes left)"},
		{"huge length", magic(append([]byte{0x12}, tooLong...)...), "length 4294967296 beyond the input"},
		{"type meta wire type", magic(0x08, 0x01), "field 1 has wire type varint, want length-delimited"},
		{"group", magic(0x0b), "group wire type"},
		{"invalid wire type", env([]byte{0x0f}), "field 1 has invalid wire type 7"},
		{"field number 0", env([]byte{0x02, 0x00}), "field number 0"},
		{"varint overflow", env(append([]byte{0xa0, 0x06}, bytes.Repeat([]byte{0xff}, 11)...)), "varint overflows 64 bits"},
		{"truncated fixed64", env([]byte{0xa1, 0x06, 1, 2, 3}), "truncated fixed64 value"},
		{"metadata wire type", env([]byte{0x08, 0x01}), "projection: protobuf core/v1.Pod: field 1 has wire type varint"},
		{"spec field wire type", env(pbAppendBytesField(nil, 2, []byte{0x50, 0x01})), "projection: protobuf core/v1.PodSpec: field 10 has wire type varint, want length-delimited"},
		{"dropped field wire type", env(pbAppendBytesField(nil, 2, []byte{0x80, 0x01, 0x01})), "projection: protobuf core/v1.PodSpec: field 16 has wire type varint, want length-delimited"},
		{"spec truncated inside", env(pbAppendBytesField(nil, 2, []byte{0x52, 0x09, 'a'})), "projection: protobuf core/v1.PodSpec: field 10: length 9 beyond the input"},
		{"annotation key wire type", env(pbAppendBytesField(nil, 1, pbAppendBytesField(nil, 12, []byte{0x08, 0x01}))), "annotations: map key: field 1 has wire type varint"},
		{"label entry truncated", env(pbAppendBytesField(nil, 1, pbAppendBytesField(nil, 11, []byte{0x0a, 0x07, 'a'}))), "field 11: map entry: field 1: length 7 beyond the input"},
		{"owner reference wire type", env(pbAppendBytesField(nil, 1, []byte{0x68, 0x01})), "projection: protobuf meta/v1.ObjectMeta: field 13 has wire type varint, want length-delimited"},
		{"content encoding", append(env(nil), 0x1a, 0x04, 'g', 'z', 'i', 'p'), `unsupported content encoding "gzip"`},
		{"kind wire type", magic(0x0a, 0x02, 0x10, 0x01), "type meta: field 2 has wire type varint"},
	}
	for _, tc := range objects {
		t.Run("object/"+tc.name, func(t *testing.T) {
			out, err := plan.filterObject([]byte("dst"), tc.in, p.Fingerprint())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "projection: "), err.Error())
			assert.Equal(t, []byte("dst"), out, "dst is returned as it was")
		})
	}

	validList := pbEncode(t, pbTestPodList(t))
	listEnv := func(raw []byte) []byte { return pbEnvelope(t, "v1", "PodList", raw) }
	lists := []pbMalformedCase{
		{"empty", nil, "does not start with the magic bytes"},
		{"truncated body", validList[:len(validList)/2], "unexpected EOF"},
		{"truncated tag", magic(0x80), "field tag: unexpected EOF"},
		{"raw before kind", magic(0x12, 0x00), "no kind before the object"},
		{"raw wire type", append(listEnv(nil), 0x10, 0x01), "field 2 has wire type varint, want length-delimited"},
		{"raw length beyond input", append(listEnv(nil), 0x12, 0x05, 0x0a), "unexpected EOF"},
		{"huge raw length", append(append(listEnv(nil), 0x12), tooLong...), "length 4294967296 beyond the input"},
		{"item beyond list", listEnv([]byte{0x12, 0x05, 0x0a, 0x00}), "field 2: length 5 beyond the input"},
		{"item wire type", listEnv([]byte{0x10, 0x01}), "field 2 has wire type varint"},
		{"item malformed", listEnv(pbAppendBytesField(nil, 2, []byte{0x08, 0x01})), "projection: protobuf core/v1.Pod: field 1 has wire type varint"},
		{"list group", listEnv([]byte{0x1b}), "group wire type"},
		{"content encoding", append(listEnv(nil), 0x1a, 0x04, 'g', 'z', 'i', 'p'), `unsupported content encoding "gzip"`},
		{"envelope field truncated", magic(0x0a, 0x05, 'a'), "field 1: unexpected EOF"},
	}
	for _, tc := range lists {
		t.Run("list/"+tc.name, func(t *testing.T) {
			_, err := plan.filterList(iotest.OneByteReader(bytes.NewReader(tc.in)), p.Fingerprint())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "projection: "), err.Error())
		})
	}

	frame := func(ev []byte) []byte { return append(binary.BigEndian.AppendUint32(nil, uint32(len(ev))), ev...) }
	event := func(typ string, obj []byte) []byte {
		return append(pbAppendBytesField(nil, 1, []byte(typ)), pbAppendBytesField(nil, 2, pbAppendBytesField(nil, 1, obj))...)
	}
	streams := []pbMalformedCase{
		{"frame too large", []byte{0xff, 0xff, 0xff, 0xff}, "a frame of 4294967295 bytes is larger than 16777216 bytes"},
		{"event type wire type", frame([]byte{0x08, 0x01}), "watch event: field 1 has wire type varint"},
		{"event object wire type", frame([]byte{0x10, 0x01}), "watch event: field 2 has wire type varint"},
		{"object without magic", frame(event("ADDED", []byte("{}"))), "does not start with the magic bytes"},
		{"object malformed", frame(event("ADDED", env([]byte{0x08, 0x01}))), "field 1 has wire type varint"},
		{"raw extension truncated", frame([]byte{0x12, 0x02, 0x0a, 0x05}), "object: field 1: length 5 beyond the input"},
	}
	for _, tc := range streams {
		t.Run("watch/"+tc.name, func(t *testing.T) {
			r := newProtobufWatchFilter(io.NopCloser(bytes.NewReader(tc.in)), plan, p.Fingerprint())
			_, err := io.ReadAll(iotest.OneByteReader(r))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.True(t, strings.HasPrefix(err.Error(), "projection: "), err.Error())
			_, again := r.Read(make([]byte, 1))
			assert.Equal(t, err, again, "errors are sticky")
		})
	}
}

func FuzzProtobufFilter(f *testing.F) {
	p := MustNew(append([]string{"metadata.labels.app", "spec.containers.name", "spec.volumes.configMap"}, benchPaths...)...)
	plan := pbMustCompile(f, p, &corev1.Pod{})
	f.Add(pbEncode(f, pbTestPod("seed")))
	f.Add(pbEncode(f, pbTestPodList(f)))
	f.Add(pbWatchStream(f, watch.Event{Type: watch.Added, Object: pbTestPod("a")}, watch.Event{Type: watch.Bookmark, Object: &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9", Annotations: map[string]string{InitialEventsEndAnnotation: "true"}},
	}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		if out, err := plan.filterObject(nil, data, p.Fingerprint()); err == nil {
			again, err := plan.filterObject(nil, out, p.Fingerprint())
			if err != nil {
				t.Fatalf("filtering a filtered object: %v", err)
			}
			if !bytes.Equal(out, again) {
				t.Fatalf("filtering a filtered object changed it:\n%q\n%q", out, again)
			}
		}
		if out, err := plan.filterList(bytes.NewReader(data), p.Fingerprint()); err == nil {
			if _, err := plan.filterList(bytes.NewReader(out), p.Fingerprint()); err != nil {
				t.Fatalf("filtering a filtered list: %v", err)
			}
		}
		_, _ = io.ReadAll(newProtobufWatchFilter(io.NopCloser(bytes.NewReader(data)), plan, p.Fingerprint()))
	})
}

// TestProtobufWireTypesMatchGeneratedCode checks the wire type the plans
// expect of every protobuf field of every type client-go knows against the
// wire type its generated Marshal writes: struct tags alone are not always
// right.
func TestProtobufWireTypesMatchGeneratedCode(t *testing.T) {
	marshaler := reflect.TypeFor[interface{ Marshal() ([]byte, error) }]()
	seen := map[reflect.Type]bool{}
	var visit func(reflect.Type)
	visit = func(typ reflect.Type) {
		typ = pbDeref(typ)
		switch typ.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			visit(typ.Elem())
			return
		case reflect.Struct:
		default:
			return
		}
		if seen[typ] {
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			visit(typ.Field(i).Type)
		}
	}
	for _, typ := range scheme.Scheme.AllKnownTypes() {
		visit(typ)
	}

	checked := 0
	for typ := range seen {
		if !reflect.PointerTo(typ).Implements(marshaler) {
			continue
		}
		for i := range typ.NumField() {
			sf := typ.Field(i)
			tag, ok, err := pbParseTag(sf)
			require.NoError(t, err, "%s.%s", typ, sf.Name)
			if !ok {
				continue
			}
			v := reflect.New(typ)
			pbSetNonZero(v.Elem().Field(i))
			out := v.MethodByName("Marshal").Call(nil)
			require.Nil(t, out[1].Interface(), "%s.%s: Marshal", typ, sf.Name)
			found := false
			for b := out[0].Bytes(); len(b) > 0; {
				f, err := pbNextField(b)
				require.NoError(t, err, "%s.%s", typ, sf.Name)
				b = b[len(f.raw):]
				if f.num == tag.num {
					found = true
					assert.NoError(t, pbCheckWire(f, tag.wire, tag.packed), "%s.%s", typ, sf.Name)
				}
			}
			assert.True(t, found, "%s.%s: field %d not written", typ, sf.Name, tag.num)
			checked++
		}
	}
	assert.Greater(t, checked, 3000, "fields checked")
}

// pbSetNonZero sets v to a value protobuf writes.
func pbSetNonZero(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		pbSetNonZero(v.Elem())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.String:
		v.SetString("x")
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		pbSetNonZero(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		pbSetNonZero(k)
		pbSetNonZero(e)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}

// TestProtobufEveryKind compiles the identity projection for every kind
// client-go knows that has an ObjectMeta, and filters an object of it.
func TestProtobufEveryKind(t *testing.T) {
	p := MustNew()
	kinds := 0
	for gvk, typ := range scheme.Scheme.AllKnownTypes() {
		if f, ok := typ.FieldByName("ObjectMeta"); !ok || f.Type != reflect.TypeFor[metav1.ObjectMeta]() {
			continue
		}
		plan, err := compileProtobuf(p.root, typ, gvk.Kind)
		require.NoError(t, err, gvk.String())

		obj := reflect.New(typ).Interface().(runtime.Object)
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		meta := obj.(metav1.Object)
		meta.SetName("n")
		meta.SetNamespace("ns")
		meta.SetUID("u")
		meta.SetResourceVersion("7")
		meta.SetLabels(map[string]string{"dropped": "x"})
		meta.SetAnnotations(map[string]string{InitialEventsEndAnnotation: "true", "dropped": "x"})
		out, err := plan.filterObject(nil, pbEncode(t, obj), p.Fingerprint())
		require.NoError(t, err, gvk.String())

		want := reflect.New(typ).Interface().(runtime.Object)
		want.GetObjectKind().SetGroupVersionKind(gvk)
		wmeta := want.(metav1.Object)
		wmeta.SetName("n")
		wmeta.SetNamespace("ns")
		wmeta.SetUID("u")
		wmeta.SetResourceVersion("7")
		wmeta.SetAnnotations(map[string]string{InitialEventsEndAnnotation: "true", MarkerAnnotation: p.Fingerprint()})
		assert.Equal(t, pbDecode(t, pbEncode(t, want)), pbDecode(t, out), gvk.String())
		kinds++
	}
	assert.Greater(t, kinds, 100)
}

// TestProtobufWatchFilterEndsLikeTheStreamItFilters: a stream that ends
// between frames ends with io.EOF, one cut inside a frame (a dropped
// connection) with io.ErrUnexpectedEOF itself, and another read error is
// returned as it is: client-go's watch decoder compares them with ==, and
// reads them as a closed watch (reopened from its resourceVersion) rather
// than as a failure.
func TestProtobufWatchFilterEndsLikeTheStreamItFilters(t *testing.T) {
	p := mustProjection(t, "spec.nodeName")
	plan, err := compileProtobuf(p.root, reflect.TypeOf(corev1.Pod{}), "Pod")
	require.NoError(t, err)
	stream := pbWatchStream(t, watch.Event{Type: watch.Added, Object: pbTestPod("a")})
	readAll := func(r io.Reader) error {
		_, err := io.ReadAll(iotest.OneByteReader(newProtobufWatchFilter(io.NopCloser(r), plan, p.Fingerprint())))
		return err
	}
	require.NoError(t, readAll(bytes.NewReader(stream)), "io.EOF between frames ends ReadAll without error")
	for _, cut := range []int{2, len(stream) - 10} {
		err := readAll(bytes.NewReader(stream[:cut]))
		require.True(t, err == io.ErrUnexpectedEOF, "cut at %d: %v", cut, err)
	}
	reset := errors.New("connection reset by peer")
	err = readAll(io.MultiReader(bytes.NewReader(stream[:7]), iotest.ErrReader(reset)))
	require.True(t, err == reset, "%v", err)
}

// TestProtobufWatchFilterRefusesFramesAboveTheWatchDecodersLimit: a frame
// announcing more than 16 MiB (where client-go's own watch decoder stops)
// fails the stream with an error saying so, before its body is read; a
// frame of exactly 16 MiB is read (here it is cut short).
func TestProtobufWatchFilterRefusesFramesAboveTheWatchDecodersLimit(t *testing.T) {
	p := mustProjection(t, "spec.nodeName")
	plan, err := compileProtobuf(p.root, reflect.TypeOf(corev1.Pod{}), "Pod")
	require.NoError(t, err)
	frame := func(size uint32) io.Reader {
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], size)
		return io.MultiReader(bytes.NewReader(hdr[:]), bytes.NewReader(make([]byte, 64)))
	}
	read := func(r io.Reader) error {
		_, err := io.ReadAll(newProtobufWatchFilter(io.NopCloser(r), plan, p.Fingerprint()))
		return err
	}
	err = read(frame(16<<20 + 1))
	require.EqualError(t, err, "projection: protobuf watch: a frame of 16777217 bytes is larger than 16777216 bytes")

	err = read(frame(16 << 20))
	require.True(t, err == io.ErrUnexpectedEOF, "a frame at the limit is read: %v", err)
}
