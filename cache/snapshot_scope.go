package cache

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kinformer/kinformer/cache/internal/snapshot"
)

// SnapshotScopeFor returns the snapshot scope (see
// SharedIndexInformerOptions.SnapshotScope) of an informer whose
// ListerWatcher lists namespace ("" for all namespaces) and passes its
// requests through tweak (nil for none): the namespace and the label and
// field selectors tweak sets on empty ListOptions. It returns "" when
// neither restricts anything, which is the scope of an informer built
// without one. Factories call it with their WithNamespace and
// WithTweakListOptions values; call it the same way for an informer built
// on a filtered ListWatch. It is safe for concurrent use when tweak is.
// kinformer extension, not in client-go.
func SnapshotScopeFor(namespace string, tweak func(*metav1.ListOptions)) string {
	var opts metav1.ListOptions
	if tweak != nil {
		tweak(&opts)
	}
	return snapshot.ScopeFor(namespace, opts.LabelSelector, opts.FieldSelector)
}
