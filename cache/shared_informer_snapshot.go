package cache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache/internal/snapshot"
)

// loadSnapshot reads the informer's snapshot file; it is the Reflector's
// resume function (called once, on its goroutine, before its first list).
// It returns nil without error when there is no file yet, and a
// *SnapshotError for a file that cannot be used, which the Reflector logs
// and passes to the watch error handler before it lists as usual.
func (s *sharedIndexInformer) loadSnapshot(ctx context.Context) (*reflectorResume, error) {
	codec, err := snapshot.CodecFor(s.objectType)
	if err != nil {
		return nil, &SnapshotError{Path: s.config.SnapshotFile, Op: "load", Err: err}
	}
	protection := s.config.SnapshotProtection
	if protection.Key == nil && snapshot.Sensitive(s.objectType, protection.Sensitive) {
		s.removeSensitiveSnapshot(ctx)
		return nil, nil
	}
	scope, known := s.resolveSnapshotScope(ctx)
	if !known {
		return nil, nil
	}
	objects, rv, err := s.snapshotFile(scope, codec).Read()
	if errors.Is(err, os.ErrNotExist) {
		klog.FromContext(ctx).V(2).Info("No informer snapshot yet; listing", "path", s.config.SnapshotFile)
		return nil, nil
	}
	if err != nil {
		if errors.Is(err, snapshot.ErrNotEncrypted) && snapshot.Sensitive(s.objectType, protection.Sensitive) {
			// Sensitive objects in clear: not kept until the next stop.
			s.removeSensitiveSnapshot(ctx)
		}
		return nil, &SnapshotError{Path: s.config.SnapshotFile, Op: "load", Err: err}
	}
	return &reflectorResume{objects: objects, resourceVersion: rv}, nil
}

// saveSnapshot writes the informer's cache to its snapshot file, if
// configured, once the informer has stopped. Only a synced cache with a
// resource version is written; failures are logged.
func (s *sharedIndexInformer) saveSnapshot(ctx context.Context) {
	if s.config.SnapshotFile == "" || !s.HasSynced() {
		return
	}
	rv := storeResourceVersion(s.indexer)
	if rv == "" {
		return
	}
	protection := s.config.SnapshotProtection
	if protection.Key == nil && snapshot.Sensitive(s.objectType, protection.Sensitive) {
		s.stats.CountSnapshotSkipped()
		klog.FromContext(ctx).Info("Informer snapshot not written: the informer's objects are sensitive and no snapshot encryption key is set (SnapshotProtection)",
			"path", s.config.SnapshotFile, "type", fmt.Sprintf("%T", s.objectType))
		return
	}
	if !s.cacheSettled() {
		s.stats.CountSnapshotSkipped()
		klog.FromContext(ctx).Info("Informer snapshot not written: the cache was stopped in the middle of applying a relist or queued changes piece by piece, so it holds no single state at its resourceVersion; the snapshot file keeps its previous content",
			"path", s.config.SnapshotFile, "type", fmt.Sprintf("%T", s.objectType), "resourceVersion", rv)
		return
	}
	scope, known := s.snapshotScopeOfRun()
	if !known {
		s.stats.CountSnapshotSkipped()
		klog.FromContext(ctx).Info("Informer snapshot not written: the identity of the cluster could not be read (SnapshotCluster)",
			"path", s.config.SnapshotFile, "type", fmt.Sprintf("%T", s.objectType))
		return
	}
	codec, err := snapshot.CodecFor(s.objectType)
	if err == nil {
		err = s.snapshotFile(scope, codec).Write(storeObjectsByKey(s.indexer), rv)
	}
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, &SnapshotError{Path: s.config.SnapshotFile, Op: "save", Err: err}, "Informer snapshot not written", "type", fmt.Sprintf("%T", s.objectType))
		return
	}
	klog.FromContext(ctx).V(2).Info("Informer snapshot written", "path", s.config.SnapshotFile, "resourceVersion", rv)
}

// snapshotFile is the informer's snapshot file under scope, its objects
// encoded with codec.
func (s *sharedIndexInformer) snapshotFile(scope string, codec snapshot.Codec) snapshot.File {
	return snapshot.File{
		Path:     s.config.SnapshotFile,
		Identity: snapshot.Identity(s.objectType, s.config.ObjectDescription),
		Tie:      snapshot.Tie{Scope: scope, Projection: s.config.SnapshotProjection},
		Codec:    codec,
		Key:      s.config.SnapshotProtection.Key,
		Describe: snapshotObjectName,
	}
}

// storeObjectsByKey returns the objects of store in key order, so that a
// snapshot's file is the same for the same cache and a warm start hands the
// loaded objects to the handlers in key order, as the first list did.
func storeObjectsByKey(store Store) []interface{} {
	keys := store.ListKeys()
	slices.Sort(keys)
	objs := make([]interface{}, 0, len(keys))
	for _, key := range keys {
		if obj, exists, err := store.GetByKey(key); err == nil && exists {
			objs = append(objs, obj)
		}
	}
	return objs
}

// snapshotObjectName names obj in the error of an object that cannot be
// written to a snapshot: its type and key.
func snapshotObjectName(obj interface{}) string {
	if key, err := MetaNamespaceKeyFunc(obj); err == nil {
		return fmt.Sprintf("%T %s", obj, key)
	}
	return fmt.Sprintf("%T", obj)
}

// resolveSnapshotScope returns the scope this run's snapshot is tied to: the
// informer's SnapshotScope and shard (shardedSnapshotScope), followed by the
// cluster's identity when SnapshotCluster is set. known is false when the identity could not be
// read: the run then neither reads nor writes a snapshot. It records the
// outcome for saveSnapshot.
func (s *sharedIndexInformer) resolveSnapshotScope(ctx context.Context) (scope string, known bool) {
	scope = s.shardedSnapshotScope()
	if s.config.SnapshotCluster != nil {
		id, err := s.config.SnapshotCluster(ctx)
		if err == nil && id == "" {
			err = errors.New("the cluster identity is empty")
		}
		if err != nil {
			// Not the error text: it may name the server and the
			// account; the reason is enough to act on.
			klog.FromContext(ctx).Info("Informer snapshot not used: the identity of the cluster could not be read; listing",
				"path", s.config.SnapshotFile, "type", fmt.Sprintf("%T", s.objectType), "reason", snapshotClusterReason(err))
			s.snapshotRun.Store(&snapshotRunScope{})
			return "", false
		}
		if scope != "" {
			scope += " "
		}
		scope += "cluster=" + strconv.Quote(id)
	}
	s.snapshotRun.Store(&snapshotRunScope{scope: scope, known: true})
	return scope, true
}

// snapshotScopeOfRun returns the scope resolveSnapshotScope found in this
// run; before it ran (no snapshot was tried), the informer's own scope when
// it needs no cluster identity.
func (s *sharedIndexInformer) snapshotScopeOfRun() (string, bool) {
	if run := s.snapshotRun.Load(); run != nil {
		return run.scope, run.known
	}
	return s.shardedSnapshotScope(), s.config.SnapshotCluster == nil
}

// shardedSnapshotScope returns the informer's SnapshotScope followed by its
// shard selector when it has a Shard, so that a snapshot of one shard is
// never loaded by an informer of another (nor by an unsharded one).
func (s *sharedIndexInformer) shardedSnapshotScope() string {
	scope := s.config.SnapshotScope
	selector, err := s.config.Shard.Selector()
	if err != nil || selector == "" {
		return scope
	}
	if scope != "" {
		scope += " "
	}
	return scope + "shard=" + strconv.Quote(selector)
}

// snapshotClusterReason is what the log says of a failure to read the
// cluster's identity: the API's reason (Forbidden, NotFound, ...), or
// "Unknown" for other errors.
func snapshotClusterReason(err error) string {
	if reason := apierrors.ReasonForError(err); reason != metav1.StatusReasonUnknown {
		return string(reason)
	}
	return "Unknown"
}

// snapshotRunScope is the outcome of resolveSnapshotScope.
type snapshotRunScope struct {
	scope string
	known bool
}

// removeSensitiveSnapshot deletes the plain snapshot file of an informer of
// sensitive objects: without a key, which never writes one, or with a key,
// which refuses it. Such a file was left by an older version or another
// configuration, in plain text.
func (s *sharedIndexInformer) removeSensitiveSnapshot(ctx context.Context) {
	path := s.config.SnapshotFile
	if _, err := os.Lstat(path); err != nil {
		return
	}
	if err := os.Remove(path); err != nil {
		utilruntime.HandleErrorWithContext(ctx, &SnapshotError{Path: path, Op: "remove", Err: err}, "Snapshot of sensitive objects not removed", "type", fmt.Sprintf("%T", s.objectType))
		return
	}
	klog.FromContext(ctx).Info("Removed a plain snapshot file of sensitive objects: they are kept on disk only encrypted (SnapshotProtection); listing",
		"path", path, "type", fmt.Sprintf("%T", s.objectType))
}

// noteRelistPiecesLocked records, after deltas were applied, whether the
// cache holds pieces of a relist that no complete list settled yet: a
// Replaced delta (a page of a relist applied page by page) or a deletion a
// relist derived (a DeletedFinalStateUnknown) opens such a state; a
// ReplacedAll (an atomic list) and a Bookmark (which, in a RealFIFO, ends a
// relist applied page by page once its deletions are applied; no watch runs
// during a list) settle it. While a relist is unsettled, the cache holds
// newer states of some objects (and lacks deleted ones) under the
// resourceVersion it had before the relist: a snapshot of it would make the
// next run watch from that version and replay older changes over newer
// states. The caller holds blockDeltas; only snapshotting informers track
// it.
func (s *sharedIndexInformer) noteRelistPiecesLocked(deltas []Delta) {
	if s.config.SnapshotFile == "" {
		return
	}
	for _, d := range deltas {
		switch d.Type {
		case Replaced:
			s.relistUnsettled = true
		case Deleted:
			if _, tomb := d.Object.(DeletedFinalStateUnknown); tomb {
				s.relistUnsettled = true
			}
		case ReplacedAll, Bookmark:
			s.relistUnsettled = false
		}
	}
}

// cacheSettled reports whether the stopped informer's cache holds one
// consistent state at its resourceVersion, so that a snapshot of it may be
// written: with a DeltaFIFO, when everything queued was applied and no
// relist applied page by page is unfinished (the queue pops per key, not in
// watch order, so with keys still queued some popped key may hold a state
// newer than the watermark); with the RealFIFO, which applies changes in
// watch order and atomic relists in one step, unless a relist applied page
// by page is unsettled (noteRelistPiecesLocked).
func (s *sharedIndexInformer) cacheSettled() bool {
	if q, ok := s.queue.(*DeltaFIFO); ok {
		return q.settled()
	}
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	return !s.relistUnsettled
}
