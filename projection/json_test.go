package projection

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testPodJSON = `{
  "kind": "Pod",
  "apiVersion": "v1",
  "metadata": {
    "name": "web-7d4b9c6f5-x2x9z",
    "generateName": "web-7d4b9c6f5-",
    "namespace": "prod",
    "uid": "6f1c2a3e-0b1d-4c55-9c1e-2f7a1b3c4d5e",
    "resourceVersion": "123456789",
    "creationTimestamp": "2024-05-01T10:00:00Z",
    "labels": {"app": "web", "pod-template-hash": "7d4b9c6f5", "tier": "frontend"},
    "annotations": {
      "kubectl.kubernetes.io/restartedAt": "2024-05-01T09:59:00Z",
      "example.com/note": "caf\u00e9 \"quoted\" back\\slash"
    },
    "ownerReferences": [
      {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c6f5", "uid": "aa-bb", "controller": true, "blockOwnerDeletion": true}
    ],
    "managedFields": [
      {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1", "time": "2024-05-01T10:00:00Z",
       "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}}}}}},
      {"manager": "kubelet", "operation": "Update", "apiVersion": "v1", "time": "2024-05-01T10:00:05Z", "fieldsType": "FieldsV1",
       "fieldsV1": {"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:status": {}}}}}, "subresource": "status"}
    ]
  },
  "spec": {
    "volumes": [{"name": "kube-api-access", "projected": {"sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}], "defaultMode": 420}}],
    "containers": [
      {
        "name": "web",
        "image": "nginx:1.25",
        "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
        "env": [{"name": "MODE", "value": "prod"}, {"name": "POD_IP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}}}],
        "resources": {"limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "128Mi"}},
        "volumeMounts": [{"name": "kube-api-access", "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
        "terminationMessagePath": "/dev/termination-log",
        "imagePullPolicy": "IfNotPresent"
      },
      {"name": "sidecar", "image": "envoy:1.30", "args": ["--config", "/etc/envoy.yaml"], "resources": {}}
    ],
    "restartPolicy": "Always",
    "terminationGracePeriodSeconds": 30,
    "nodeName": "node-17",
    "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]
  },
  "status": {
    "phase": "Running",
    "conditions": [
      {"type": "Initialized", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2024-05-01T10:00:00Z"},
      {"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": "2024-05-01T10:00:05Z"}
    ],
    "hostIP": "10.0.0.17",
    "podIP": "10.244.3.5",
    "podIPs": [{"ip": "10.244.3.5"}],
    "startTime": "2024-05-01T10:00:00Z",
    "containerStatuses": [{"name": "web", "ready": true, "restartCount": 0, "image": "nginx:1.25", "state": {"running": {"startedAt": "2024-05-01T10:00:03Z"}}}],
    "qosClass": "Burstable"
  }
}`

const testCRJSON = `{"apiVersion":"example.com/v1alpha1","kind":"Widget",
"metadata":{"name":"w\u00e9","namespace":"default","uid":"1234","resourceVersion":"42","generation":3,
 "labels":{"app":"widget","team":"caf\u00e9"},"finalizers":["example.com/cleanup"]},
"spec":{"replicas":3,"scale":1e3,"negZero":-0,"big":12345678901234567890,"ratio":-1.5E-7,
 "text":"tab\there \"q\" back\\slash caf\u00e9 日本語 \ud83d\ude00 \/",
 "items":[{"name":"a","value":1,"nested":{"deep":[1,2,{"x":null}]}},{"name":"b","value":true},{"value":false},"scalar",null,[{"name":"in-array"}]],
 "nodeName":"not-a-pod","selector":{"matchLabels":{"app":"widget"}},"empty":{},"emptyList":[]},
"status":{"phase":"Ready","conditions":[{"type":"Synced","status":"True","observedGeneration":3}],
 "numbers":[0,-0,1e3,1E+3,12345678901234567890,-12345678901234567890.5e-10],"observedGeneration":3}}`

// testProjections are the projections the oracle tests try on every object.
var testProjections = [][]string{
	{"metadata.labels", "metadata.ownerReferences", "spec.nodeName", "status.phase", "status.conditions"},
	{"spec.containers.name"},
	{"spec.items.name", "spec.items.nested.deep"},
	{"metadata.labels.app"},
	{"metadata"},
	{"metadata.annotations"},
	{"spec.doesNotExist.really", "nothere"},
	{"spec.scale", "spec.negZero", "spec.big", "spec.text", "status.numbers"},
	{"spec.containers.resources.limits", "spec.containers.ports.containerPort", "status.conditions.type"},
	{"spec.nodeName.sub", "status.phase.sub"},
}

// pruneOracle keeps of v what n keeps, the reference for the filter: it
// works on the decoded value.
func pruneOracle(v any, n *node) any {
	if n.all {
		return v
	}
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, c := range n.children {
			if x, ok := v[k]; ok {
				out[k] = pruneOracle(x, c)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = pruneOracle(x, n)
		}
		return out
	}
	return v
}

func decodeUseNumber(t testing.TB, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v), "%s", b)
	_, err := d.Token()
	require.ErrorIs(t, err, io.EOF, "trailing data in %s", b)
	return v
}

// oracle returns what the filter should produce from the object src,
// decoded.
func oracle(t testing.TB, src []byte, p *Projection) any {
	t.Helper()
	obj := decodeUseNumber(t, src).(map[string]any)
	if obj["kind"] == "Status" {
		return obj
	}
	out := pruneOracle(obj, p.root).(map[string]any)
	meta, ok := out["metadata"].(map[string]any)
	if !ok {
		meta = map[string]any{}
		out["metadata"] = meta
	}
	ann, ok := meta["annotations"].(map[string]any)
	if !ok {
		ann = map[string]any{}
		meta["annotations"] = ann
	}
	ann[MarkerAnnotation] = p.Fingerprint()
	return out
}

func mustProjection(t testing.TB, paths ...string) *Projection {
	t.Helper()
	p, err := New(paths...)
	require.NoError(t, err)
	return p
}

func TestFilterJSONObjectOracle(t *testing.T) {
	objects := map[string]string{"pod": testPodJSON, "cr": testCRJSON}
	for name, obj := range objects {
		require.True(t, json.Valid([]byte(obj)), name)
		for _, paths := range testProjections {
			t.Run(name+"/"+strings.Join(paths, ","), func(t *testing.T) {
				p := mustProjection(t, paths...)
				got, err := filterJSONObject(nil, []byte(obj), p.root, p.Fingerprint())
				require.NoError(t, err)
				require.True(t, json.Valid(got), "%s", got)
				assert.Equal(t, oracle(t, []byte(obj), p), decodeUseNumber(t, got))
				assert.Equal(t, 1, bytes.Count(got, []byte(`"`+MarkerAnnotation+`"`)), "%s", got)
			})
		}
	}
}

func TestFilterJSONObjectAppendsToDst(t *testing.T) {
	p := mustProjection(t, "spec.nodeName")
	prefix := []byte("prefix:")
	got, err := filterJSONObject(prefix, []byte(testPodJSON), p.root, p.Fingerprint())
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(got, prefix))
	assert.Equal(t, oracle(t, []byte(testPodJSON), p), decodeUseNumber(t, got[len(prefix):]))

	// On error dst comes back as it was.
	got, err = filterJSONObject(prefix, []byte(`{"spec":{"nodeName":"n"`), p.root, p.Fingerprint())
	require.Error(t, err)
	assert.Equal(t, "prefix:", string(got))
}

func TestFilterJSONObjectKeepsBytes(t *testing.T) {
	p := mustProjection(t, "spec.scale", "spec.negZero", "spec.big", "spec.text", "spec.ratio", "status.numbers", "metadata.labels")
	got, err := filterJSONObject(nil, []byte(testCRJSON), p.root, p.Fingerprint())
	require.NoError(t, err)
	for _, want := range []string{
		`"scale":1e3`,
		`"negZero":-0`,
		`"big":12345678901234567890`,
		`"ratio":-1.5E-7`,
		`"text":"tab\there \"q\" back\\slash caf\u00e9 日本語 \ud83d\ude00 \/"`,
		`"numbers":[0,-0,1e3,1E+3,12345678901234567890,-12345678901234567890.5e-10]`,
		`"name":"w\u00e9"`,
		`"labels":{"app":"widget","team":"caf\u00e9"}`,
		`"apiVersion":"example.com/v1alpha1","kind":"Widget","metadata":{`,
	} {
		assert.Contains(t, string(got), want)
	}
	assert.NotContains(t, string(got), "replicas")
	assert.NotContains(t, string(got), "finalizers")
}

func TestFilterJSONObjectExactOutput(t *testing.T) {
	p := mustProjection(t, "spec.containers.name", "metadata.labels.app")
	fp := p.Fingerprint()
	src := `{ "spec" : { "containers" : [ {"name":"a","image":"x"} , {"image":"y"}, 7 ] , "x": 1 },
	  "metadata": {"labels": {"tier":"t", "app": "web"}, "name":"n", "annotations": {"k8s.io/initial-events-end":"true","other":"x"}},
	  "extra": [1,2,3], "kind": "Thing" }`
	want := `{"spec":{"containers":[{"name":"a"},{},7]},` +
		`"metadata":{"labels":{"app":"web"},"name":"n","annotations":{"k8s.io/initial-events-end":"true","` + MarkerAnnotation + `":"` + fp + `"}},` +
		`"kind":"Thing"}`
	got, err := filterJSONObject(nil, []byte(src), p.root, fp)
	require.NoError(t, err)
	assert.Equal(t, want, string(got))
}

func TestFilterJSONObjectMarker(t *testing.T) {
	p := mustProjection(t, "spec.nodeName")
	fp := p.Fingerprint()
	marker := `"` + MarkerAnnotation + `":"` + fp + `"`
	tests := []struct {
		name, src, want string
	}{
		{"no metadata", `{"kind":"X","spec":{"nodeName":"n"}}`,
			`{"kind":"X","spec":{"nodeName":"n"},"metadata":{"annotations":{` + marker + `}}}`},
		{"empty object", `{}`, `{"metadata":{"annotations":{` + marker + `}}}`},
		{"null metadata", `{"metadata":null}`, `{"metadata":{"annotations":{` + marker + `}}}`},
		{"empty metadata", `{"metadata":{}}`, `{"metadata":{"annotations":{` + marker + `}}}`},
		{"no annotations", `{"metadata":{"name":"a","labels":{"x":"y"}}}`,
			`{"metadata":{"name":"a","annotations":{` + marker + `}}}`},
		{"null annotations", `{"metadata":{"annotations":null,"name":"a"}}`,
			`{"metadata":{"annotations":{` + marker + `},"name":"a"}}`},
		{"dropped annotations", `{"metadata":{"annotations":{"a":"b"}}}`,
			`{"metadata":{"annotations":{` + marker + `}}}`},
		{"marker already there", `{"metadata":{"annotations":{"` + MarkerAnnotation + `":"old","k8s.io/initial-events-end":"true"}}}`,
			`{"metadata":{"annotations":{"k8s.io/initial-events-end":"true",` + marker + `}}}`},
		{"marker with an escaped key", `{"metadata":{"annotations":{"kinformer.io\/projection":"old","k8s.io\/initial-events-end":"true"}}}`,
			`{"metadata":{"annotations":{"k8s.io\/initial-events-end":"true",` + marker + `}}}`},
		{"marker twice", `{"metadata":{"annotations":{"` + MarkerAnnotation + `":"a","` + MarkerAnnotation + `":"b"}}}`,
			`{"metadata":{"annotations":{` + marker + `}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := filterJSONObject(nil, []byte(tt.src), p.root, fp)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))
		})
	}

	// With the whole metadata kept, the marker still replaces the old one.
	whole := mustProjection(t, "metadata")
	src := `{"metadata":{"name":"a","annotations":{"x":"1","` + MarkerAnnotation + `":"old","y":"2"},"labels":{"l":"v"}}}`
	got, err := filterJSONObject(nil, []byte(src), whole.root, whole.Fingerprint())
	require.NoError(t, err)
	assert.Equal(t, `{"metadata":{"name":"a","annotations":{"x":"1","y":"2","`+MarkerAnnotation+`":"`+whole.Fingerprint()+`"},"labels":{"l":"v"}}}`, string(got))
}

func TestFilterJSONObjectEscapedKeys(t *testing.T) {
	p := mustProjection(t, "spec.nodeName", "metadata.labels.app\u00e9")
	src := `{"sp\u0065c":{"n\u006FdeName":"n1","other":1},"m\u0065tadata":{"labels":{"app\u00e9":"1","app\u00c3\u00a9":"2","appé":"3"}}}`
	got, err := filterJSONObject(nil, []byte(src), p.root, p.Fingerprint())
	require.NoError(t, err)
	assert.Equal(t, `{"sp\u0065c":{"n\u006FdeName":"n1"},"m\u0065tadata":{"labels":{"app\u00e9":"1","appé":"3"},"annotations":{"`+
		MarkerAnnotation+`":"`+p.Fingerprint()+`"}}}`, string(got))
	assert.Equal(t, oracle(t, []byte(src), p), decodeUseNumber(t, got))
}

func TestFilterJSONObjectStatus(t *testing.T) {
	p := mustProjection(t, "spec.nodeName")
	for _, src := range []string{
		`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version","reason":"Expired","code":410}`,
		`{"apiVersion":"v1","metadata":{},"status":"Failure","code":410, "kind" : "Status" }`,
		` {"kind":"St\u0061tus","code":500}` + "\n",
	} {
		got, err := filterJSONObject([]byte("x"), []byte(src), p.root, p.Fingerprint())
		require.NoError(t, err)
		assert.Equal(t, "x"+src, string(got))
	}
	// A Status is still validated.
	_, err := filterJSONObject(nil, []byte(`{"kind":"Status","code":}`), p.root, p.Fingerprint())
	assert.Error(t, err)
	// kind is only looked at on the top level.
	got, err := filterJSONObject(nil, []byte(`{"spec":{"kind":"Status"},"kind":"Pod"}`), p.root, p.Fingerprint())
	require.NoError(t, err)
	assert.Equal(t, `{"spec":{},"kind":"Pod","metadata":{"annotations":{"`+MarkerAnnotation+`":"`+p.Fingerprint()+`"}}}`, string(got))
}

// malformedJSON are inputs every filter must refuse, as an object, as a
// list body and as a watch event.
var malformedJSON = []struct{ name, src string }{
	{"empty", ``},
	{"spaces", `   `},
	{"not an object", `[1,2]`},
	{"string", `"x"`},
	{"truncated object", `{"kind":"Pod","metadata":{"name":"a"`},
	{"truncated string", `{"kind":"Pod","spec":{"nodeName":"ab`},
	{"truncated key", `{"kind":"Pod","spe`},
	{"truncated after colon", `{"kind":`},
	{"truncated literal", `{"kind":"Pod","x":tru`},
	{"truncated number", `{"kind":"Pod","x":1.`},
	{"truncated escape", `{"kind":"Pod","x":"\u00`},
	{"bad literal", `{"kind":"Pod","x":nul}`},
	{"bad literal in kept", `{"kind":"Pod","spec":{"nodeName":tru}}`},
	{"bad token", `{"kind":"Pod","x":@}`},
	{"bad number", `{"kind":"Pod","x":01}`},
	{"bad number minus", `{"kind":"Pod","x":-}`},
	{"bad exponent", `{"kind":"Pod","x":1e}`},
	{"bad fraction", `{"kind":"Pod","x":1.e3}`},
	{"plus number", `{"kind":"Pod","x":+1}`},
	{"unbalanced close", `{"kind":"Pod","x":[1,2}}`},
	{"unbalanced open", `{"kind":"Pod","x":[[1,2]}`},
	{"missing comma", `{"kind":"Pod" "x":1}`},
	{"missing colon", `{"kind" "Pod"}`},
	{"trailing comma", `{"kind":"Pod","x":1,}`},
	{"trailing comma in array", `{"kind":"Pod","x":[1,]}`},
	{"leading comma in array", `{"kind":"Pod","x":[,1]}`},
	{"unquoted key", `{kind:"Pod"}`},
	{"single quotes", `{'kind':'Pod'}`},
	{"bad escape", `{"kind":"Pod","x":"\q"}`},
	{"bad unicode escape", `{"kind":"Pod","x":"\u12G4"}`},
	{"short unicode escape", `{"kind":"Pod","x":"\u12"}`},
	{"bad escape in key", `{"kind":"Pod","\x":1}`},
	{"control character", "{\"kind\":\"Pod\",\"x\":\"a\nb\"}"},
	{"control character in kept", "{\"kind\":\"Pod\",\"spec\":{\"nodeName\":\"a\tb\"}}"},
	{"control character in key", "{\"kind\":\"Pod\",\"a\x01\":1}"},
	{"garbage after", `{"kind":"Pod"} x`},
	{"second value after", `{"kind":"Pod"}{"kind":"Pod"}`},
	{"metadata not an object", `{"kind":"Pod","metadata":"x"}`},
	{"metadata an array", `{"kind":"Pod","metadata":[]}`},
	{"annotations not an object", `{"kind":"Pod","metadata":{"annotations":[]}}`},
	{"key not a string", `{"kind":"Pod",1:2}`},
	{"too deep dropped", `{"kind":"Pod","x":` + strings.Repeat("[", jsonMaxDepth) + strings.Repeat("]", jsonMaxDepth) + `}`},
	{"too deep kept", `{"kind":"Pod","spec":{"nodeName":` + strings.Repeat(`{"a":`, jsonMaxDepth) + `1` + strings.Repeat("}", jsonMaxDepth) + `}}`},
	{"too deep projected", `{"kind":"Pod","spec":{"containers":` + strings.Repeat("[", jsonMaxDepth) + strings.Repeat("]", jsonMaxDepth) + `}}`},
}

func TestFilterJSONObjectMalformed(t *testing.T) {
	p := mustProjection(t, "spec.nodeName", "spec.containers.name")
	for _, tt := range malformedJSON {
		t.Run(tt.name, func(t *testing.T) {
			var got []byte
			var err error
			require.NotPanics(t, func() {
				got, err = filterJSONObject([]byte("dst"), []byte(tt.src), p.root, p.Fingerprint())
			})
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "projection: "), err.Error())
			assert.Equal(t, "dst", string(got))
		})
	}
	// A Status that is malformed after its kind is refused too.
	_, err := filterJSONObject(nil, []byte(`{"kind":"Status","x":[}`), p.root, p.Fingerprint())
	assert.Error(t, err)
}

func TestFilterJSONObjectTruncatedIsUnexpectedEOF(t *testing.T) {
	p := mustProjection(t, "spec.nodeName")
	_, err := filterJSONObject(nil, []byte(`{"kind":"Pod","spec":{`), p.root, p.Fingerprint())
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, "projection: unexpected end of JSON input", err.Error())

	_, err = filterJSONObject(nil, []byte(`{"kind":"Pod","spec":{"nodeName":"a\qb"}}`), p.root, p.Fingerprint())
	require.Error(t, err)
	assert.Equal(t, `projection: invalid character 'q' in string escape at offset 36`, err.Error())
}

func TestFilterJSONObjectDepthLimit(t *testing.T) {
	p := mustProjection(t, "spec.nodeName")
	// The object itself is the first of jsonMaxDepth levels.
	ok := `{"x":` + strings.Repeat("[", jsonMaxDepth-1) + strings.Repeat("]", jsonMaxDepth-1) + `}`
	_, err := filterJSONObject(nil, []byte(ok), p.root, p.Fingerprint())
	require.NoError(t, err)
	require.True(t, json.Valid([]byte(ok)))

	kept := `{"spec":{"nodeName":` + strings.Repeat("[", jsonMaxDepth-2) + strings.Repeat("]", jsonMaxDepth-2) + `}}`
	got, err := filterJSONObject(nil, []byte(kept), p.root, p.Fingerprint())
	require.NoError(t, err)
	require.True(t, json.Valid(got))

	tooDeep := `{"x":` + strings.Repeat("[", jsonMaxDepth) + strings.Repeat("]", jsonMaxDepth) + `}`
	_, err = filterJSONObject(nil, []byte(tooDeep), p.root, p.Fingerprint())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nested deeper than 10000")
	require.False(t, json.Valid([]byte(tooDeep)))
}

// listBody builds a list body of the items, with its members in the
// order given by order ("kind", "apiVersion", "metadata", "items").
func listBody(items []string, order ...string) string {
	members := map[string]string{
		"kind":       `"kind":"PodList"`,
		"apiVersion": `"apiVersion": "v1"`,
		"metadata":   `"metadata":{"resourceVersion":"777","continue":"abc"}`,
		"items":      "\"items\" : [\n" + strings.Join(items, " ,\n") + "\n]",
	}
	var parts []string
	for _, m := range order {
		parts = append(parts, members[m])
	}
	return "{" + strings.Join(parts, ",\n") + "}\n"
}

func TestFilterJSONList(t *testing.T) {
	p := mustProjection(t, "metadata.labels", "spec.nodeName", "status.phase", "spec.items.name")
	fp := p.Fingerprint()
	items := []string{testPodJSON, testCRJSON, `{"metadata":{"name":"bare"}}`, `{"kind":"Status","code":1}`}
	var wantItems []any
	for _, it := range items {
		obj := decodeUseNumber(t, []byte(it)).(map[string]any)
		obj["kind"] = "NotStatus" // items are always projected
		b, err := json.Marshal(obj)
		require.NoError(t, err)
		want := oracle(t, b, p).(map[string]any)
		want["kind"] = "Status"
		if it != items[3] {
			want["kind"] = obj["kind"]
			want = oracle(t, []byte(it), p).(map[string]any)
		}
		wantItems = append(wantItems, want)
	}
	listMeta := map[string]any{"resourceVersion": "777", "continue": "abc"}

	orders := [][]string{
		{"kind", "apiVersion", "metadata", "items"},
		{"items", "metadata", "apiVersion", "kind"},
		{"apiVersion", "items", "kind", "metadata"},
	}
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half":     func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	}
	for _, order := range orders {
		for rname, reader := range readers {
			t.Run(strings.Join(order, ",")+"/"+rname, func(t *testing.T) {
				got, err := filterJSONList(reader(listBody(items, order...)), p.root, fp)
				require.NoError(t, err)
				assert.Equal(t, map[string]any{
					"kind": "PodList", "apiVersion": "v1", "metadata": listMeta, "items": wantItems,
				}, decodeUseNumber(t, got))
			})
		}
	}

	t.Run("exact", func(t *testing.T) {
		body := " {\"metadata\" : {\"resourceVersion\":\"5\"},\n \"items\": [ {\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"y\"},\"x\":1},\"spec\":{\"nodeName\":\"n\",\"q\":2}} ,{} ], \"kind\":\"PodList\"}\n\n"
		got, err := filterJSONList(iotest.OneByteReader(strings.NewReader(body)), p.root, fp)
		require.NoError(t, err)
		marker := `"` + MarkerAnnotation + `":"` + fp + `"`
		assert.Equal(t, `{"metadata":{"resourceVersion":"5"},"items":[`+
			`{"metadata":{"name":"a","labels":{"x":"y"},"annotations":{`+marker+`}},"spec":{"nodeName":"n"}},`+
			`{"metadata":{"annotations":{`+marker+`}}}],"kind":"PodList"}`, string(got))
	})
	t.Run("empty items", func(t *testing.T) {
		got, err := filterJSONList(strings.NewReader(`{"kind":"PodList","items":[ ],"metadata":{}}`), p.root, fp)
		require.NoError(t, err)
		assert.Equal(t, `{"kind":"PodList","items":[],"metadata":{}}`, string(got))
	})
	t.Run("null items", func(t *testing.T) {
		got, err := filterJSONList(iotest.OneByteReader(strings.NewReader(`{"kind":"PodList","items":null,"metadata":{"resourceVersion":"1"}}`)), p.root, fp)
		require.NoError(t, err)
		assert.Equal(t, `{"kind":"PodList","items":null,"metadata":{"resourceVersion":"1"}}`, string(got))
	})
	t.Run("no items", func(t *testing.T) {
		got, err := filterJSONList(strings.NewReader(`{"kind":"PodList","metadata":{"resourceVersion":"1"}}`), p.root, fp)
		require.NoError(t, err)
		assert.Equal(t, `{"kind":"PodList","metadata":{"resourceVersion":"1"}}`, string(got))
	})
	t.Run("empty object", func(t *testing.T) {
		got, err := filterJSONList(strings.NewReader(` {} `), p.root, fp)
		require.NoError(t, err)
		assert.Equal(t, `{}`, string(got))
	})
	t.Run("status", func(t *testing.T) {
		for _, body := range []string{
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden","reason":"Forbidden","details":{"kind":"pods"},"code":403}`,
			`{ "apiVersion" : "v1", "metadata" : { }, "status":"Failure", "code":410, "kind" : "Status" }`,
			`{"kind":"Status","items":[{"spec":{"a":1}}]}`,
		} {
			got, err := filterJSONList(iotest.OneByteReader(strings.NewReader("\n"+body+"\n")), p.root, fp)
			require.NoError(t, err)
			assert.Equal(t, body, string(got))
		}
	})
}

func TestFilterJSONListMalformed(t *testing.T) {
	p := mustProjection(t, "spec.nodeName")
	cases := []struct{ name, src string }{
		{"trailing garbage", `{"kind":"PodList","items":[]} x`},
		{"trailing value", `{"kind":"PodList","items":[]}{}`},
		{"items not an array", `{"kind":"PodList","items":{}}`},
		{"items a string", `{"kind":"PodList","items":"x"}`},
		{"item not an object", `{"kind":"PodList","items":[1]}`},
		{"item null", `{"kind":"PodList","items":[null]}`},
		{"truncated items", `{"kind":"PodList","items":[{"metadata":{}}`},
		{"truncated item", `{"kind":"PodList","items":[{"metadata":{`},
		{"truncated after items", `{"kind":"PodList","items":[]`},
		{"bad item", `{"kind":"PodList","items":[{"metadata":{"name":x}}]}`},
		{"mismatched item", `{"kind":"PodList","items":[{"metadata":{"name":"x"]]}]}`},
		{"items trailing comma", `{"kind":"PodList","items":[{},]}`},
		{"items missing comma", `{"kind":"PodList","items":[{} {}]}`},
		{"bad metadata", `{"kind":"PodList","metadata":{"a" 1},"items":[]}`},
		{"bad key", `{"kind":"PodList",items:[]}`},
		{"bad escape in key", `{"kind":"PodList","it\ems":[]}`},
		{"trailing comma", `{"kind":"PodList","items":[],}`},
		{"missing colon", `{"kind" "PodList"}`},
		{"bad scalar", `{"kind":"PodList","x":truex,"items":[]}`},
		{"too deep", `{"kind":"PodList","x":` + strings.Repeat("[", jsonMaxDepth) + strings.Repeat("]", jsonMaxDepth) + `}`},
		{"too deep item", `{"items":[` + strings.Repeat(`{"a":`, jsonMaxDepth) + `1` + strings.Repeat("}", jsonMaxDepth) + `]}`},
	}
	for _, tt := range malformedJSON {
		if !strings.Contains(tt.name, "metadata") && !strings.Contains(tt.name, "annotations") && !strings.Contains(tt.name, "kept") && !strings.Contains(tt.name, "projected") {
			cases = append(cases, tt)
		}
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() {
				_, err = filterJSONList(iotest.OneByteReader(strings.NewReader(tt.src)), p.root, p.Fingerprint())
			})
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "projection: "), err.Error())
		})
	}
	// Items that are malformed only for the projection are refused as well.
	_, err := filterJSONList(strings.NewReader(`{"items":[{"metadata":"x"}]}`), p.root, p.Fingerprint())
	assert.Error(t, err)

	// A reader's error comes through.
	boom := errors.New("boom")
	_, err = filterJSONList(io.MultiReader(strings.NewReader(`{"items":[{}`), iotest.ErrReader(boom)), p.root, p.Fingerprint())
	assert.ErrorIs(t, err, boom)
}

func TestFilterJSONListErrorOffset(t *testing.T) {
	p := mustProjection(t, "spec.nodeName")
	src := `{"items":[{},{"spec":{"nodeName":"a\qb"}}]}`
	_, err := filterJSONList(iotest.OneByteReader(strings.NewReader(src)), p.root, p.Fingerprint())
	require.Error(t, err)
	assert.Equal(t, fmt.Sprintf("projection: invalid character 'q' in string escape at offset %d", strings.Index(src, "q")), err.Error())
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

type closeRecorder struct {
	io.Reader
	closed int
}

func (c *closeRecorder) Close() error {
	c.closed++
	return nil
}

// readInChunks reads all of r, n bytes per Read.
func readInChunks(r io.Reader, n int) ([]byte, error) {
	var out []byte
	p := make([]byte, n)
	for {
		k, err := r.Read(p)
		out = append(out, p[:k]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func TestJSONWatchFilter(t *testing.T) {
	p := mustProjection(t, "metadata.labels", "spec.nodeName", "status.phase", "status.conditions")
	fp := p.Fingerprint()
	status := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (2)","reason":"Expired","code":410}`
	bookmark := `{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"99","annotations":{"k8s.io/initial-events-end":"true","other":"x"}}}`
	events := []struct{ typ, obj string }{
		{"ADDED", testPodJSON},
		{"MODIFIED", testCRJSON},
		{"BOOKMARK", bookmark},
		{"DELETED", `{"kind":"Pod","metadata":{"name":"gone","labels":{"a":"b"},"finalizers":["x"]}}`},
		{"ERROR", status},
	}
	var stream strings.Builder
	var want []any
	for i, ev := range events {
		sep := []string{"\n", "", "  \r\n\t", "\n\n", ""}[i]
		fmt.Fprintf(&stream, `{"type":%q, "object" : %s}%s`, ev.typ, ev.obj, sep)
		want = append(want, map[string]any{"type": ev.typ, "object": oracle(t, []byte(ev.obj), p)})
	}
	wantBookmark := `{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"99","annotations":{"k8s.io/initial-events-end":"true","` +
		MarkerAnnotation + `":"` + fp + `"}}}}` + "\n"
	wantError := `{"type":"ERROR","object":` + status + "}\n"

	sources := map[string]func() io.Reader{
		"whole":    func() io.Reader { return strings.NewReader(stream.String()) },
		"one byte": func() io.Reader { return iotest.OneByteReader(strings.NewReader(stream.String())) },
		"3 bytes":  func() io.Reader { return chunkReader{strings.NewReader(stream.String()), 3} },
	}
	for sname, src := range sources {
		for _, readSize := range []int{1, 3, 7, 4096} {
			t.Run(fmt.Sprintf("%s/read %d", sname, readSize), func(t *testing.T) {
				rc := &closeRecorder{Reader: src()}
				w := newJSONWatchFilter(rc, p.root, fp)
				got, err := readInChunks(w, readSize)
				require.NoError(t, err)
				require.NoError(t, w.Close())
				assert.Equal(t, 1, rc.closed)

				// Every event ends with a newline; kept values are copied as
				// written, so they may hold newlines too.
				d := json.NewDecoder(bytes.NewReader(got))
				d.UseNumber()
				var gotEvents []any
				var ends []int
				for {
					var ev any
					if err := d.Decode(&ev); err == io.EOF {
						break
					} else {
						require.NoError(t, err)
					}
					gotEvents = append(gotEvents, ev)
					ends = append(ends, int(d.InputOffset()))
				}
				assert.Equal(t, want, gotEvents)
				require.Len(t, ends, len(events))
				for _, e := range ends {
					assert.Equal(t, byte('\n'), got[e], "event not followed by a newline")
				}
				assert.Equal(t, len(got), ends[len(ends)-1]+1)
				assert.Equal(t, wantBookmark+"{", string(got[ends[1]+1:ends[2]+2]))
				assert.Equal(t, wantError, string(got[ends[3]+1:]))
			})
		}
	}
}

func TestJSONWatchFilterDeliversEventsWithoutReadingAhead(t *testing.T) {
	p := mustProjection(t, "spec.nodeName")
	pr, pw := io.Pipe()
	w := newJSONWatchFilter(pr, p.root, p.Fingerprint())
	go func() {
		_, _ = io.WriteString(pw, `{"type":"ADDED","object":{"kind":"Pod","spec":{"nodeName":"n","x":1}}}`+"\n")
		// The second event is never written until the first was read.
	}()
	buf := make([]byte, 4096)
	n, err := w.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, `{"type":"ADDED","object":{"kind":"Pod","spec":{"nodeName":"n"},"metadata":{"annotations":{"`+
		MarkerAnnotation+`":"`+p.Fingerprint()+`"}}}}`+"\n", string(buf[:n]))
	require.NoError(t, w.Close())
	_, err = w.Read(buf)
	assert.ErrorIs(t, err, io.ErrClosedPipe)
}

func TestJSONWatchFilterErrors(t *testing.T) {
	p := mustProjection(t, "spec.nodeName")
	good := `{"type":"ADDED","object":{"kind":"Pod","spec":{"nodeName":"n"}}}`
	cases := []struct{ name, src string }{
		{"garbage between events", good + " x " + good},
		{"not an object", `[1]`},
		{"scalar", `42`},
		{"bad object", `{"type":"ADDED","object":{"kind":"Pod","spec":{"nodeName":"n\x"}}}`},
		{"object not an object", `{"type":"ADDED","object":null}`},
		{"bad type", `{"type":ADDED,"object":{}}`},
		{"mismatched", `{"type":"ADDED","object":{"kind":"Pod"]}`},
		{"missing comma", `{"type":"ADDED" "object":{}}`},
		{"trailing comma", `{"type":"ADDED","object":{},}`},
		{"bad metadata", `{"type":"ADDED","object":{"metadata":1}}`},
		{"too deep", `{"type":"ADDED","object":{"x":` + strings.Repeat("[", jsonMaxDepth) + strings.Repeat("]", jsonMaxDepth) + `}}`},
	}
	for _, tt := range cases {
		for _, one := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/onebyte=%v", tt.name, one), func(t *testing.T) {
				var r io.Reader = strings.NewReader(tt.src)
				if one {
					r = iotest.OneByteReader(r)
				}
				w := newJSONWatchFilter(io.NopCloser(r), p.root, p.Fingerprint())
				var err error
				var got []byte
				require.NotPanics(t, func() { got, err = readInChunks(w, 5) })
				require.Error(t, err)
				assert.True(t, strings.HasPrefix(err.Error(), "projection: "), err.Error())
				// What came out before the error is whole events only.
				assert.True(t, got == nil || strings.HasSuffix(string(got), "\n"), "%s", got)
				// The error sticks.
				_, err2 := w.Read(make([]byte, 10))
				assert.Equal(t, err, err2)
			})
		}
	}

	for _, src := range []string{good + `{"type":`, good + "\n" + `{"type":"ADDED","object":{"kind":"Po`, good + `{"type":"ADDED"`} {
		t.Run("truncated is unexpected EOF", func(t *testing.T) {
			w := newJSONWatchFilter(io.NopCloser(strings.NewReader(src)), p.root, p.Fingerprint())
			got, err := io.ReadAll(w)
			assert.True(t, err == io.ErrUnexpectedEOF, "%v", err)
			assert.Equal(t, 1, strings.Count(string(got), "\n"), "the whole event before the cut is delivered")
		})
	}
	t.Run("reader error", func(t *testing.T) {
		boom := errors.New("boom")
		w := newJSONWatchFilter(io.NopCloser(io.MultiReader(strings.NewReader(good), iotest.ErrReader(boom))), p.root, p.Fingerprint())
		got, err := io.ReadAll(w)
		assert.ErrorIs(t, err, boom)
		assert.Equal(t, 1, strings.Count(string(got), "\n"))
	})
	t.Run("empty stream", func(t *testing.T) {
		w := newJSONWatchFilter(io.NopCloser(strings.NewReader(" \n ")), p.root, p.Fingerprint())
		got, err := io.ReadAll(w)
		require.NoError(t, err)
		assert.Empty(t, got)
	})
	t.Run("frame too large", func(t *testing.T) {
		big := `{"type":"ADDED","object":{"kind":"Pod","data":"` + strings.Repeat("x", 10000) + `"}}`
		w := newJSONWatchFilter(io.NopCloser(strings.NewReader(good+big+good)), p.root, p.Fingerprint()).(*jsonWatchFilter)
		w.maxFrame = 5000
		got, err := io.ReadAll(w)
		require.Error(t, err)
		assert.Equal(t, "projection: watch event larger than 5000 bytes", err.Error())
		assert.Equal(t, 1, strings.Count(string(got), "\n"))

		w = newJSONWatchFilter(io.NopCloser(strings.NewReader(good+big+good)), p.root, p.Fingerprint()).(*jsonWatchFilter)
		assert.Equal(t, 64<<20, w.maxFrame)
		got, err = io.ReadAll(w)
		require.NoError(t, err)
		assert.Equal(t, 3, strings.Count(string(got), "\n"))
	})
}

// validStream reports whether b is a sequence of JSON values.
func validStream(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	for {
		var v json.RawMessage
		err := d.Decode(&v)
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
	}
}

func FuzzJSONFilter(f *testing.F) {
	f.Add([]byte(testPodJSON))
	f.Add([]byte(testCRJSON))
	f.Add([]byte(listBody([]string{testPodJSON, `{"metadata":null}`}, "kind", "metadata", "items")))
	f.Add([]byte(`{"type":"ADDED","object":` + testCRJSON + "}\n" + `{"type":"ERROR","object":{"kind":"Status","code":410}}`))
	f.Add([]byte(`{"kind":"Status","code":410}`))
	f.Add([]byte(`{"metadata":{"annotations":{"kinformer.io\/projection":"x"}},"a":[1,{"b":"\ud83d\ude00"}]}`))
	projections := []*Projection{
		MustNew("metadata.labels", "metadata.ownerReferences", "spec.nodeName", "status.phase", "status.conditions"),
		MustNew("spec.containers.name", "spec.items.name", "metadata.labels.app"),
		MustNew("metadata", "spec"),
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, p := range projections {
			out, err := filterJSONObject(nil, in, p.root, p.Fingerprint())
			if err == nil {
				if !json.Valid(out) {
					t.Fatalf("invalid output %q from %q", out, in)
				}
				if !json.Valid(in) {
					t.Fatalf("accepted invalid input %q", in)
				}
			}
			out, err = filterJSONList(bytes.NewReader(in), p.root, p.Fingerprint())
			if err == nil {
				if !json.Valid(out) {
					t.Fatalf("invalid list output %q from %q", out, in)
				}
				if !json.Valid(in) {
					t.Fatalf("accepted invalid list %q", in)
				}
			}
			out, err = io.ReadAll(newJSONWatchFilter(io.NopCloser(iotest.HalfReader(bytes.NewReader(in))), p.root, p.Fingerprint()))
			if !validStream(out) {
				t.Fatalf("invalid watch output %q from %q (err %v)", out, in, err)
			}
			if err == nil && !validStream(in) {
				t.Fatalf("accepted invalid watch stream %q", in)
			}
		}
	})
}

// TestJSONWatchFilterEndsLikeTheStreamItFilters: a watch stream cut inside
// an event ends with io.ErrUnexpectedEOF itself (client-go's watch decoder
// compares with ==), one that ends between events with io.EOF, and another
// read error is returned as it is.
func TestJSONWatchFilterEndsLikeTheStreamItFilters(t *testing.T) {
	root := mustProjection(t, "spec.size").root
	stream := `{"type":"ADDED","object":{"kind":"Widget","metadata":{"name":"a"},"spec":{"size":1}}}` + "\n"
	readAll := func(r io.Reader) error {
		_, err := io.ReadAll(newJSONWatchFilter(io.NopCloser(iotest.OneByteReader(r)), root, "fp"))
		return err
	}
	require.NoError(t, readAll(strings.NewReader(stream)))
	for _, cut := range []int{1, 30, len(stream) - 3} {
		err := readAll(strings.NewReader(stream[:cut]))
		require.True(t, err == io.ErrUnexpectedEOF, "cut at %d: %v", cut, err)
	}
	reset := errors.New("connection reset by peer")
	err := readAll(io.MultiReader(strings.NewReader(stream[:20]), iotest.ErrReader(reset)))
	require.True(t, err == reset, "%v", err)
}
