package gvrfactory

import (
	"path/filepath"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

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

// WithSnapshotDir returns options with the snapshot file and scope of gvr's
// informer in dir: SnapshotFileName(gvr, variant) in dir, tied to the scope
// of namespace and tweak (cache.SnapshotScopeFor). dir "" returns options
// unchanged.
func WithSnapshotDir(options cache.SharedIndexInformerOptions, dir string, gvr schema.GroupVersionResource, variant, namespace string, tweak func(*metav1.ListOptions)) cache.SharedIndexInformerOptions {
	if dir == "" {
		return options
	}
	options.SnapshotFile = filepath.Join(dir, SnapshotFileName(gvr, variant))
	options.SnapshotScope = cache.SnapshotScopeFor(namespace, tweak)
	return options
}
