package controllerruntime_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	kcache "github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/interop/clientgo"
	"github.com/kinformer/kinformer/interop/controllerruntime"
)

// describedBy builds an informer with hook for an example object, without
// running it, and returns the object description kinformer's informer got.
func describedBy(t *testing.T, hook newInformerFunc, example runtime.Object) string {
	t.Helper()
	informer := hook(nil, example, 0, nil)
	k, ok := controllerruntime.Unwrap(informer)
	if !ok {
		t.Fatalf("the hook's informer for %T is not kinformer's", example)
	}
	status, _ := kcache.GetInformerStatus(k)
	return status.Description
}

func TestNewInformerFuncAppliesTheMostSpecificOption(t *testing.T) {
	describe := clientgo.WithObjectDescription
	deployments := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	unstructuredOf := func(gvk schema.GroupVersionKind) runtime.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		return u
	}
	metadataOf := func(gvk schema.GroupVersionKind) runtime.Object {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		return m
	}
	// The options are given from the most specific to the least, so that
	// the order of application, not of the arguments, decides.
	hook := controllerruntime.NewInformerFunc(
		controllerruntime.ForGroupVersionKind(deployments, describe("deployments")),
		controllerruntime.ForType(&corev1.Pod{}, describe("pods")),
		controllerruntime.ForType(&unstructured.Unstructured{}, describe("unstructured")),
		nil,
		controllerruntime.WithInformerOptions(describe("any")),
	)
	for _, tc := range []struct {
		name    string
		example runtime.Object
		want    string
	}{
		{"a type with options of its own", &corev1.Pod{}, "pods"},
		{"a type without", &corev1.ConfigMap{}, "any"},
		{"a typed object whose kind has options", func() runtime.Object {
			p := &corev1.Pod{}
			p.SetGroupVersionKind(deployments) // the kind is not what typed objects are matched by
			return p
		}(), "pods"},
		{"unstructured, kind with options", unstructuredOf(deployments), "deployments"},
		{"unstructured, kind without", unstructuredOf(corev1.SchemeGroupVersion.WithKind("Secret")), "unstructured"},
		{"metadata-only, kind with options", metadataOf(deployments), "deployments"},
		{"metadata-only, kind without", metadataOf(corev1.SchemeGroupVersion.WithKind("Secret")), "any"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := describedBy(t, hook, tc.example); got != tc.want {
				t.Errorf("description %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNewInformerKeepsKinformerDefaults(t *testing.T) {
	if got := describedBy(t, controllerruntime.NewInformer, &corev1.Pod{}); got != "" {
		t.Errorf("NewInformer's informer is described as %q, want kinformer's default (none)", got)
	}
	if got := describedBy(t, controllerruntime.NewInformerFunc(), &corev1.Pod{}); got != "" {
		t.Errorf("NewInformerFunc()'s informer is described as %q, want kinformer's default (none)", got)
	}
}

func TestUnwrapReportsFalseForOtherInformers(t *testing.T) {
	for _, tc := range []struct {
		name     string
		informer any
	}{
		{"nil", nil},
		{"not an informer", "pods"},
		{"client-go's informer", toolscacheInformer()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if k, ok := controllerruntime.Unwrap(tc.informer); ok || k != nil {
				t.Errorf("Unwrap = %v, %v; want nil, false", k, ok)
			}
		})
	}
}

// toolscacheInformer is a client-go informer, never run.
func toolscacheInformer() any {
	return toolscache.NewSharedIndexInformer(nil, &corev1.Pod{}, 0, toolscache.Indexers{})
}
