package informers

import (
	"path/filepath"
	"reflect"
	"strings"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/kinformer/kinformer/cache"
)

// factoryExtensions are the factory options kinformer adds to client-go's.
type factoryExtensions struct {
	// watchIdleTimeout is WithWatchIdleTimeout's value; 0 means the
	// informers' default.
	watchIdleTimeout time.Duration
	// snapshotDir is WithSnapshotDir's directory; "" means none.
	snapshotDir string
}

// WithWatchIdleTimeout sets the watch liveness deadline of every informer the
// factory builds (see cache.SharedIndexInformerOptions.WatchIdleTimeout):
// zero keeps the default (cache.DefaultWatchIdleTimeout), a negative value
// turns liveness off. kinformer extension, not in client-go.
func WithWatchIdleTimeout(d time.Duration) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.extensions.watchIdleTimeout = d
		return f
	}
}

// WithSnapshotDir makes every informer the factory builds warm-restartable
// (see cache.SharedIndexInformerOptions.SnapshotFile): on stop it writes its
// cache to a file in dir named after its object type (for example
// "k8s.io_api_core_v1.Pod.snap"), and on start it resumes from that file
// instead of listing. The directory is created when needed. Each file is
// tied to the factory's scope (cache.SnapshotScopeFor of its WithNamespace
// and of the label and field selectors its WithTweakListOptions sets): a
// factory with another namespace or other selectors rejects the file with a
// *cache.SnapshotError and lists as usual, so sharing a directory between
// configurations costs lists but never loads foreign objects (give each
// configuration its own directory to keep both warm). Only one running
// factory may use a directory at a time. kinformer extension, not in
// client-go.
func WithSnapshotDir(dir string) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.extensions.snapshotDir = dir
		return f
	}
}

// SnapshotFileName returns the name of the snapshot file WithSnapshotDir
// uses for the informers of objects of type t (a pointer to an API type).
func SnapshotFileName(t reflect.Type) string {
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "nil.snap"
	}
	name := t.Name()
	if pkg := t.PkgPath(); pkg != "" {
		name = strings.NewReplacer("/", "_", "\\", "_").Replace(pkg) + "." + name
	}
	return name + ".snap"
}

// applyExtensions configures a newly built, not yet started informer for
// objects of type t. The caller holds f.mu.
func (f *sharedInformerFactory) applyExtensions(t reflect.Type, informer cache.SharedIndexInformer) {
	if d := f.extensions.watchIdleTimeout; d != 0 {
		if err := cache.SetWatchIdleTimeout(informer, d); err != nil {
			utilruntime.HandleError(err)
		}
	}
	if dir := f.extensions.snapshotDir; dir != "" {
		if err := cache.SetSnapshotFile(informer, filepath.Join(dir, SnapshotFileName(t))); err != nil {
			utilruntime.HandleError(err)
		}
		if err := cache.SetSnapshotScope(informer, cache.SnapshotScopeFor(f.namespace, f.tweakListOptions)); err != nil {
			utilruntime.HandleError(err)
		}
	}
}
