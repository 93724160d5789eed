package projection

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// FuzzNewPaths builds a projection from comma-separated paths and checks
// New's contract: it fails exactly when a path is empty or has an empty or
// space-padded step; otherwise Paths are sorted, unique, none under
// another, cover every path given and the identity fields, the fingerprint
// is 16 hexadecimal digits and the same for the projection rebuilt from its
// Paths, and Apply, Check and Transport work on a pod and an unstructured
// object without panicking (Apply's result carries the marker).
func FuzzNewPaths(f *testing.F) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"x": "y"}},
		Spec:       corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "labels": map[string]any{"a.b": "c"}},
		"spec":     map[string]any{"size": int64(3), "list": []any{map[string]any{"k": "v"}, "s"}},
	}}
	f.Fuzz(func(t *testing.T, list string) {
		paths := strings.Split(list, ",")
		p, err := New(paths...)
		wantErr := false
		for _, path := range paths {
			for _, step := range strings.Split(path, ".") {
				if step == "" || strings.TrimSpace(step) != step {
					wantErr = true
				}
			}
		}
		if wantErr != (err != nil) {
			t.Fatalf("New(%q): error %v, want an error: %v", paths, err, wantErr)
		}
		if err != nil {
			return
		}
		got := p.Paths()
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("Paths %q are not sorted and unique", got)
		}
		covered := func(path string) bool {
			for _, k := range got {
				if path == k || strings.HasPrefix(path, k+".") {
					return true
				}
			}
			return false
		}
		for i, k := range got {
			for j, other := range got {
				if i != j && strings.HasPrefix(k, other+".") {
					t.Fatalf("Paths %q: %q is under %q", got, k, other)
				}
			}
		}
		for _, path := range append(slices.Clone(paths), identityPaths...) {
			if !covered(path) {
				t.Fatalf("Paths %q do not cover %q", got, path)
			}
		}
		if fp := p.Fingerprint(); len(fp) != 16 || strings.Trim(fp, "0123456789abcdef") != "" {
			t.Fatalf("fingerprint %q", fp)
		}
		if again := MustNew(got...); again.Fingerprint() != p.Fingerprint() || !reflect.DeepEqual(again.Paths(), got) {
			t.Fatalf("New(Paths()) gives %q (%s), want %q (%s)", again.Paths(), again.Fingerprint(), got, p.Fingerprint())
		}
		for _, obj := range []runtime.Object{pod, widget} {
			out, err := p.Apply(obj)
			if err != nil {
				t.Fatalf("Apply(%T) with %q: %v", obj, got, err)
			}
			if fp, ok := Marked(out); !ok || fp != p.Fingerprint() {
				t.Fatalf("Apply(%T) with %q: marker %q, %v", obj, got, fp, ok)
			}
		}
		checkErr := p.Check(pod)
		_, transportErr := p.Transport(nil, pod)
		if (checkErr == nil) != (transportErr == nil) {
			t.Fatalf("Check says %v, Transport %v", checkErr, transportErr)
		}
	})
}
