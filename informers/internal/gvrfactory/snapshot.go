package gvrfactory

import (
	"fmt"
	"path/filepath"
	"slices"
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

// Snapshots is the snapshot configuration of a GVR factory: its
// WithSnapshotDir directory ("" for none), its WithSnapshotEncryptionKey key
// (nil for none) and the resources its WithSensitiveResources marks
// sensitive.
type Snapshots struct {
	Dir       string
	Key       []byte
	Sensitive []schema.GroupVersionResource
}

// Apply returns options with the snapshot file, scope and protection of
// gvr's informer: SnapshotFileName(gvr, variant) in s.Dir, tied to the scope
// of namespace and tweak (cache.SnapshotScopeFor), encrypted with s.Key,
// and sensitive when gvr is core secrets (cache.IsSensitiveResource) or
// one of s.Sensitive. A Dir of "" returns options unchanged, and so does a
// Key of the wrong size, reported through utilruntime.HandleError.
func (s Snapshots) Apply(options cache.SharedIndexInformerOptions, gvr schema.GroupVersionResource, variant, namespace string, tweak func(*metav1.ListOptions)) cache.SharedIndexInformerOptions {
	if s.Dir == "" {
		return options
	}
	if s.Key != nil && len(s.Key) != cache.SnapshotKeySize {
		// No snapshot rather than one without the protection asked for.
		utilruntime.HandleError(fmt.Errorf("no snapshot for %s: the snapshot encryption key has %d bytes; it must have %d", gvr, len(s.Key), cache.SnapshotKeySize))
		return options
	}
	options.SnapshotFile = filepath.Join(s.Dir, SnapshotFileName(gvr, variant))
	options.SnapshotScope = cache.SnapshotScopeFor(namespace, tweak)
	options.SnapshotProtection = cache.SnapshotProtection{
		Sensitive: cache.IsSensitiveResource(gvr) || slices.Contains(s.Sensitive, gvr),
		Key:       s.Key,
	}
	return options
}
