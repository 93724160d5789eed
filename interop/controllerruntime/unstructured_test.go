package controllerruntime_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	kcache "github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/testenv"
	"github.com/kinformer/kinformer/interop/clientgo"
	"github.com/kinformer/kinformer/interop/controllerruntime"
)

// The object descriptions the kinformer engine of
// TestUnstructuredAndMetadataOnlyReads gives its informers, by the option
// that chose them.
const (
	describedByKind         = "config maps, chosen by kind"
	describedAsUnstructured = "unstructured, chosen by type"
	describedAsMetadata     = "metadata-only, chosen by type"
)

func TestUnstructuredAndMetadataOnlyReads(t *testing.T) {
	env := sharedEnv(t)
	cs := env.Clientset()
	configMapKind := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	// The kinformer engine chooses options per object, so that the test
	// sees which example object controller-runtime passes the hook.
	withOptions := []engine{engines[0], {name: "kinformer", newInformer: controllerruntime.NewInformerFunc(
		controllerruntime.ForGroupVersionKind(configMapKind, clientgo.WithObjectDescription(describedByKind)),
		controllerruntime.ForType(&unstructured.Unstructured{}, clientgo.WithObjectDescription(describedAsUnstructured)),
		controllerruntime.ForType(&metav1.PartialObjectMetadata{}, clientgo.WithObjectDescription(describedAsMetadata)),
	)}}
	for _, e := range withOptions {
		t.Run(e.name, func(t *testing.T) {
			ctx := context.Background()
			ns := testenv.Namespace(t, cs)
			for _, cm := range []struct{ name, app string }{{"settings", "web"}, {"other", "db"}} {
				created, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Name: cm.name, Labels: map[string]string{"app": cm.app}},
					Data:       map[string]string{"k": cm.app},
				}, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(created.ManagedFields) == 0 {
					t.Fatal("the API server returned the created config map without managedFields: the cache checks below could not fail")
				}
			}
			if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: "token", Labels: map[string]string{"app": "web"}},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}

			// Unstructured reads go to the cache only when asked; the
			// transform, which the API server's answers never went through,
			// tells that a read came from the cache.
			mgr := newManager(t, env.Config(), e, manager.Options{
				Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
				Cache:  crcache.Options{DefaultTransform: crcache.TransformStripManagedFields()},
			})
			startManager(t, mgr)
			c := mgr.GetClient()

			// Lists first: they make controller-runtime build the informers
			// from the list's kind.
			ul := &unstructured.UnstructuredList{}
			ul.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
			if err := c.List(ctx, ul, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
				t.Fatalf("List unstructured: %v", err)
			}
			if names := objectNames(ptrs(ul.Items)); !slices.Equal(names, []string{"settings"}) {
				t.Errorf("List unstructured config maps labelled app=web: %v", names)
			}
			for _, u := range ul.Items {
				if u.GetKind() != "ConfigMap" || u.GetManagedFields() != nil {
					t.Errorf("unstructured item %s: kind %q, managedFields %v", u.GetName(), u.GetKind(), u.GetManagedFields())
				}
			}
			ml := &metav1.PartialObjectMetadataList{}
			ml.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
			if err := c.List(ctx, ml, client.InNamespace(ns)); err != nil {
				t.Fatalf("List metadata: %v", err)
			}
			if names := objectNames(ptrs(ml.Items)); !slices.Equal(names, []string{"other", "settings"}) {
				t.Errorf("List metadata-only config maps: %v", names)
			}
			secrets := &metav1.PartialObjectMetadataList{}
			secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
			if err := c.List(ctx, secrets, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
				t.Fatalf("List metadata-only secrets: %v", err)
			}
			if names := objectNames(ptrs(secrets.Items)); !slices.Equal(names, []string{"token"}) {
				t.Errorf("List metadata-only secrets labelled app=web: %v", names)
			}

			u := unstructuredKind("ConfigMap")
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "settings"}, u); err != nil {
				t.Fatalf("Get unstructured: %v", err)
			}
			if v, _, _ := unstructured.NestedString(u.Object, "data", "k"); v != "web" || u.GetManagedFields() != nil {
				t.Errorf("Get unstructured: data.k %q, managedFields %v", v, u.GetManagedFields())
			}
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(configMapKind)
			if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: "other"}, m); err != nil {
				t.Fatalf("Get metadata: %v", err)
			}
			if m.Labels["app"] != "db" || m.ManagedFields != nil {
				t.Errorf("Get metadata: labels %v, managedFields %v", m.Labels, m.ManagedFields)
			}

			// The cache follows writes.
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "late", Labels: map[string]string{"app": "web"}},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			eventually(t, "a config map created later is listed unstructured", func() (bool, string) {
				err := c.List(ctx, ul, client.InNamespace(ns), client.MatchingLabels{"app": "web"})
				names := objectNames(ptrs(ul.Items))
				return err == nil && slices.Equal(names, []string{"late", "settings"}), describeNames(names, err)
			})

			if !e.kinformer() {
				return
			}
			// controller-runtime passed the hook unstructured and metadata
			// example objects that carry the kind, so the options by kind
			// beat those by type for config maps, and those by type apply
			// to the secrets.
			secret := &metav1.PartialObjectMetadata{}
			secret.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
			for _, tc := range []struct {
				name string
				obj  client.Object
				want string
			}{
				{"unstructured config maps", unstructuredKind("ConfigMap"), describedByKind},
				{"metadata-only config maps", m, describedByKind},
				{"metadata-only secrets", secret, describedAsMetadata},
			} {
				informer, err := mgr.GetCache().GetInformer(ctx, tc.obj)
				if err != nil {
					t.Fatalf("GetInformer %s: %v", tc.name, err)
				}
				k, ok := controllerruntime.Unwrap(informer)
				if !ok {
					t.Fatalf("the informer of %s is not kinformer's", tc.name)
				}
				if status, _ := kcache.GetInformerStatus(k); status.Description != tc.want {
					t.Errorf("the informer of %s is described as %q, want %q", tc.name, status.Description, tc.want)
				}
			}
		})
	}
}
