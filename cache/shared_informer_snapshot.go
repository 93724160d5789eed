package cache

import (
	"context"
	"errors"
	"fmt"
	"os"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// loadSnapshot reads the informer's snapshot file; it is the Reflector's
// resume function (called once, on its goroutine, before its first list).
// It returns nil without error when there is no file yet, and a
// *SnapshotError for a file that cannot be used, which the Reflector logs
// and passes to the watch error handler before it lists as usual.
func (s *sharedIndexInformer) loadSnapshot(ctx context.Context) (*reflectorResume, error) {
	codec, err := snapshotCodecFor(s.objectType)
	if err != nil {
		return nil, &SnapshotError{Path: s.config.snapshotFile, Op: "load", Err: err}
	}
	objects, rv, err := readSnapshot(s.config.snapshotFile, snapshotIdentity(s.objectType, s.config.objectDescription), s.config.snapshotScope, codec)
	if errors.Is(err, os.ErrNotExist) {
		klog.FromContext(ctx).V(2).Info("No informer snapshot yet; listing", "path", s.config.snapshotFile)
		return nil, nil
	}
	if err != nil {
		return nil, &SnapshotError{Path: s.config.snapshotFile, Op: "load", Err: err}
	}
	return &reflectorResume{objects: objects, resourceVersion: rv}, nil
}

// saveSnapshot writes the informer's cache to its snapshot file, if
// configured, once the informer has stopped. Only a synced cache with a
// resource version is written; failures are logged.
func (s *sharedIndexInformer) saveSnapshot(ctx context.Context) {
	if s.config.snapshotFile == "" || !s.HasSynced() {
		return
	}
	rv := storeResourceVersion(s.indexer)
	if rv == "" {
		return
	}
	codec, err := snapshotCodecFor(s.objectType)
	if err == nil {
		err = writeSnapshot(s.config.snapshotFile, snapshotIdentity(s.objectType, s.config.objectDescription), s.config.snapshotScope, codec, storeObjectsByKey(s.indexer), rv)
	}
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, &SnapshotError{Path: s.config.snapshotFile, Op: "save", Err: err}, "Informer snapshot not written", "type", fmt.Sprintf("%T", s.objectType))
		return
	}
	klog.FromContext(ctx).V(2).Info("Informer snapshot written", "path", s.config.snapshotFile, "resourceVersion", rv)
}
