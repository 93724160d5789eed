package cache

import (
	"fmt"

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
