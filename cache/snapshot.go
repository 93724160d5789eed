package cache

import (
	"bytes"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache/internal/snapshot"
)

// SnapshotKeySize is the size in bytes of a snapshot encryption key
// (SnapshotProtection.Key): an AES-256 key. kinformer extension.
const SnapshotKeySize = 32

// SnapshotKeySize is the snapshot engine's key size: either declaration has
// a negative length, and does not compile, when they differ.
var (
	_ [SnapshotKeySize - snapshot.KeySize]struct{}
	_ [snapshot.KeySize - SnapshotKeySize]struct{}
)

// SnapshotError is the error of a snapshot file that cannot be loaded
// (corrupt, truncated, of another object type, scope or format version) or
// written. kinformer extension, not in client-go.
type SnapshotError struct {
	// Path is the snapshot file.
	Path string
	// Op is "load", "save" or "remove" (a snapshot of sensitive objects
	// found where none may be kept; see SnapshotProtection).
	Op string
	// Err says what is wrong.
	Err error
}

// Error implements error.
func (e *SnapshotError) Error() string {
	return fmt.Sprintf("informer snapshot %s: %s: %v", e.Path, e.Op, e.Err)
}

// Unwrap returns the cause.
func (e *SnapshotError) Unwrap() error { return e.Err }

// reflectorResume is the state a Reflector starts from instead of its
// first list: the objects go to the store's Replace and the watch starts
// at resourceVersion.
type reflectorResume struct {
	objects         []interface{}
	resourceVersion string
}

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

// SnapshotProtection says what an informer may write to its snapshot file
// (SharedIndexInformerOptions.SnapshotFile) and how. A snapshot is a copy of
// the cluster's objects outside the API server's encryption at rest and
// access control, so the objects of a sensitive type stay off disk unless a
// key encrypts them:
//
//   - Secrets (typed *v1.Secret informers, dynamic or metadata informers
//     of the core group's secrets resource in any version, and informers
//     whose example is an unstructured object or a PartialObjectMetadata of
//     the core group's kind Secret; metadata may hold the data in a
//     last-applied-configuration annotation) are always sensitive;
//     Sensitive marks any other informer's objects so.
//   - Without a Key, a sensitive informer writes no snapshot: on stop it logs
//     why and counts it (InformerStatus.SnapshotsSkipped), and on start it
//     lists as usual and deletes a snapshot file it finds, which an older
//     version or another configuration may have left in plain text. Other
//     informers write plain files, and refuse encrypted ones.
//   - With a Key, every snapshot file the informer writes is encrypted and
//     authenticated (AES-256-GCM, one key per file derived with HKDF-SHA256
//     from Key and a random salt), sensitive or not, and it loads only files
//     that decrypt and authenticate with Key: a plain file, a file written
//     with another key, and a file altered, cut or assembled from others are
//     rejected as a *SnapshotError, like a corrupt one, and the informer
//     lists as usual. A plain file refused by an informer of sensitive
//     objects is deleted at once, since it holds them in clear.
//
// Whatever the protection, snapshot directories are created owner-only
// (0700) and files 0600, and a directory others may write to, a file that
// is not the process user's or not owner-only, and a symbolic link are
// refused (a *SnapshotError on load, a logged error on save).
//
// Keep the key out of the snapshot directory and out of the process's
// command line; a Kubernetes Secret mounted as a file, or a key management
// service, are the usual sources. Changing the key makes existing files
// unreadable, which costs one list per informer. kinformer extension, not in
// client-go.
type SnapshotProtection struct {
	// Sensitive marks the informer's objects as sensitive (Secrets always
	// are): without a Key they are never written to disk.
	Sensitive bool
	// Key, when not nil, is the SnapshotKeySize-byte key that encrypts
	// the snapshot file. It is copied when the informer is built or the
	// protection set.
	Key []byte
}

// clone returns p with its own copy of the key.
func (p SnapshotProtection) clone() SnapshotProtection {
	if p.Key != nil {
		p.Key = bytes.Clone(p.Key)
	}
	return p
}

// IsSensitiveResource tells whether the objects of gvr are sensitive
// whatever the options say: core/v1 secrets. The dynamic and metadata
// factories mark their informers of such resources Sensitive with it.
// kinformer extension, not in client-go.
func IsSensitiveResource(gvr schema.GroupVersionResource) bool {
	return snapshot.SensitiveResource(gvr)
}

// checkSnapshotKey returns an error saying what is wrong unless key is a
// usable SnapshotProtection.Key.
func checkSnapshotKey(key []byte) error {
	return snapshot.CheckKey(key)
}
