package gvrfactory

import (
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/kinformer/kinformer/cache"
)

// SnapshotFileName returns the name of the snapshot file of gvr's informer
// in a factory's snapshot directory: "<resource>.<version>.<group>" (no
// group part for the core group), then "."+variant when variant is not ""
// (the metadata factory passes "metadata", so that a dynamic and a metadata
// factory sharing a directory do not overwrite each other's files), then
// ".snap". Path separators in the names are replaced by "_".
func SnapshotFileName(gvr schema.GroupVersionResource, variant string) string {
	parts := []string{gvr.Resource, gvr.Version}
	if gvr.Group != "" {
		parts = append(parts, gvr.Group)
	}
	if variant != "" {
		parts = append(parts, variant)
	}
	name := strings.Join(parts, ".") + ".snap"
	return strings.NewReplacer("/", "_", "\\", "_").Replace(name)
}

// SetSnapshotDir makes informer, new and not started, snapshot its cache to
// SnapshotFileName(gvr, variant) in dir, tied to the scope of namespace and
// tweak (cache.SnapshotScopeFor). dir "" does nothing. Failures (which a
// new informer built by the cache package cannot have) are logged.
func SetSnapshotDir(informer cache.SharedIndexInformer, dir string, gvr schema.GroupVersionResource, variant, namespace string, tweak func(*metav1.ListOptions)) {
	if dir == "" {
		return
	}
	if err := cache.SetSnapshotFile(informer, filepath.Join(dir, SnapshotFileName(gvr, variant))); err != nil {
		utilruntime.HandleError(err)
	}
	if err := cache.SetSnapshotScope(informer, cache.SnapshotScopeFor(namespace, tweak)); err != nil {
		utilruntime.HandleError(err)
	}
}
