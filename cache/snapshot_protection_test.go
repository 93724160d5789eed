package cache

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache/internal/snapshot"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// testSnapshotKey returns a key of the right size whose bytes start at b.
func testSnapshotKey(b byte) []byte {
	key := make([]byte, SnapshotKeySize)
	for i := range key {
		key[i] = b + byte(i)
	}
	return key
}

// snapshotLoadError runs an informer over a server holding one pod, with
// the snapshot at path, and returns the *SnapshotError its first list
// followed (nil when it loaded the snapshot instead).
func snapshotLoadError(t *testing.T, path string, protection SnapshotProtection) *SnapshotError {
	t.Helper()
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	srv.Create("x") // 1
	informer, rec, errs := snapshotInformer(t, srv, SharedIndexInformerOptions{SnapshotFile: path, SnapshotProtection: protection})
	stop := runInformerUntil(t, informer)
	rec.waitN(t, 1)
	stop()
	lists, _ := requestCounts(srv)
	got := errs()
	if lists == 0 {
		assert.Empty(t, got)
		return nil
	}
	require.NotEmpty(t, got, "the informer listed, so the snapshot was refused")
	var serr *SnapshotError
	require.True(t, errors.As(got[0], &serr), "%v", got[0])
	assert.Equal(t, "load", serr.Op)
	return serr
}

func TestSnapshotSensitiveObjectsStayOffDiskWithoutKey(t *testing.T) {
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	dir := t.TempDir()
	path := filepath.Join(dir, "pods.snap")
	// A plain snapshot left by a run that did not mark them sensitive.
	firstSnapshotRun(t, srv, path)

	informer, rec, errs := snapshotInformer(t, srv, SharedIndexInformerOptions{SnapshotFile: path, SnapshotProtection: SnapshotProtection{Sensitive: true}})
	stop := runInformerUntil(t, informer)
	assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/b@2 initial=true"}, rec.waitN(t, 2))
	lists, _ := requestCounts(srv)
	assert.Equal(t, 2, lists, "the plain file was not loaded: the informer listed")
	_, err := os.Lstat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "the plain file of sensitive objects was removed on start")
	stop()

	_, err = os.Lstat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "nothing was written on stop")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, "no temporary file either")
	st, ok := GetInformerStatus(informer)
	require.True(t, ok)
	assert.Equal(t, uint64(1), st.SnapshotsSkipped)
	assert.Empty(t, errs())
}

// TestIsSensitiveResource: core secrets, in any version, are sensitive
// whatever the options say; a secrets resource of another group and other
// core resources are not.
func TestIsSensitiveResource(t *testing.T) {
	assert.True(t, IsSensitiveResource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}))
	assert.False(t, IsSensitiveResource(schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "secrets"}))
	assert.False(t, IsSensitiveResource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}))
	assert.True(t, IsSensitiveResource(schema.GroupVersionResource{Version: "v2", Resource: "secrets"}), "by group and resource, whatever the version")
}

func TestSnapshotEncryptedWarmRestart(t *testing.T) {
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	path := filepath.Join(t.TempDir(), "pods.snap")
	key := testSnapshotKey(1)
	protection := SnapshotProtection{Sensitive: true, Key: key}

	srv.Create("a") // 1
	informer, rec, _ := snapshotInformer(t, srv, SharedIndexInformerOptions{SnapshotFile: path, SnapshotProtection: protection})
	stop := runInformerUntil(t, informer)
	rec.waitN(t, 1)
	stop()
	srv.StopWatches()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, snapshot.IsEncrypted(data), "the file is encrypted")
	assert.False(t, bytes.Contains(data, []byte("ns")), "no plain text of the pod in the file")
	st, ok := GetInformerStatus(informer)
	require.True(t, ok)
	assert.Zero(t, st.SnapshotsSkipped)

	srv.Create("b") // 2
	informer, rec, errs := snapshotInformer(t, srv, SharedIndexInformerOptions{SnapshotFile: path, SnapshotProtection: protection})
	runInformerUntil(t, informer)
	assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/b@2 initial=false"}, rec.waitN(t, 2))
	lists, _ := requestCounts(srv)
	assert.Equal(t, 1, lists, "the second run resumed from the encrypted file")
	assert.Empty(t, errs())
}

// writeTestSnapshot writes a snapshot of one pod at path, encrypted with key
// unless nil.
func writeTestSnapshot(t *testing.T, path string, key []byte) {
	t.Helper()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "old", ResourceVersion: "1"}}
	file := snapshot.File{Path: path, Identity: snapshot.Identity(&v1.Pod{}, ""), Codec: podSnapshotCodec(t), Key: key}
	require.NoError(t, file.Write([]interface{}{pod}, "1"))
}

func TestSnapshotEncryptedFilesRejected(t *testing.T) {
	key := testSnapshotKey(1)
	cases := []struct {
		name string
		// prepare writes the file at path.
		prepare func(t *testing.T, path string)
		key     []byte
		want    string
	}{
		{"plain file where a key is set", func(t *testing.T, path string) { writeTestSnapshot(t, path, nil) }, key,
			"not encrypted"},
		{"encrypted file without a key", func(t *testing.T, path string) { writeTestSnapshot(t, path, key) }, nil,
			"encrypted and this informer has no key"},
		{"another key", func(t *testing.T, path string) { writeTestSnapshot(t, path, testSnapshotKey(2)) }, key,
			"fails authentication"},
		{"a flipped bit", func(t *testing.T, path string) {
			writeTestSnapshot(t, path, key)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			data[len(data)/2+snapshot.EncryptedHeaderSize/2] ^= 0x10
			require.NoError(t, os.WriteFile(path, data, 0o600))
		}, key, "fails authentication"},
		{"a flipped salt", func(t *testing.T, path string) {
			writeTestSnapshot(t, path, key)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			data[snapshot.EncryptedHeaderSize-1] ^= 1
			require.NoError(t, os.WriteFile(path, data, 0o600))
		}, key, "fails authentication"},
		{"truncated", func(t *testing.T, path string) {
			writeTestSnapshot(t, path, key)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, data[:len(data)-1], 0o600))
		}, key, "fails authentication"},
		{"header only", func(t *testing.T, path string) {
			writeTestSnapshot(t, path, key)
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, data[:snapshot.EncryptedHeaderSize], 0o600))
		}, key, "fails authentication"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pods.snap")
			tc.prepare(t, path)
			serr := snapshotLoadError(t, path, SnapshotProtection{Key: tc.key})
			require.NotNil(t, serr, "the file was loaded")
			assert.Contains(t, serr.Error(), tc.want)
		})
	}
}

func TestSnapshotFileAndDirectoryAreOwnerOnly(t *testing.T) {
	if !snapshot.ModesApply {
		t.Skip("permission bits do not apply on this platform")
	}
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	dir := filepath.Join(t.TempDir(), "state", "snapshots")
	path := filepath.Join(dir, "pods.snap")
	firstSnapshotRun(t, srv, path)
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm(), "the directory is created owner-only")
	info, err = os.Stat(filepath.Dir(dir))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm(), "so are missing parents")
	info, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the file is owner-only")
}

func TestSnapshotRefusesWhatOthersCouldHaveWritten(t *testing.T) {
	if !snapshot.ModesApply {
		t.Skip("permission bits do not apply on this platform")
	}
	cases := []struct {
		name    string
		prepare func(t *testing.T, path string)
		want    string
	}{
		{"a directory others may write to", func(t *testing.T, path string) {
			writeTestSnapshot(t, path, nil)
			require.NoError(t, os.Chmod(filepath.Dir(path), 0o777))
		}, "others may write to it"},
		{"a directory its group may write to", func(t *testing.T, path string) {
			writeTestSnapshot(t, path, nil)
			require.NoError(t, os.Chmod(filepath.Dir(path), 0o770))
		}, "has mode 0770"},
		{"a file others may write to", func(t *testing.T, path string) {
			writeTestSnapshot(t, path, nil)
			require.NoError(t, os.Chmod(path, 0o666))
		}, "snapshot files are owner-only"},
		{"a file others may read", func(t *testing.T, path string) {
			writeTestSnapshot(t, path, nil)
			require.NoError(t, os.Chmod(path, 0o644))
		}, "has mode 0644"},
		{"a symbolic link", func(t *testing.T, path string) {
			other := filepath.Join(filepath.Dir(path), "elsewhere.snap")
			writeTestSnapshot(t, other, nil)
			require.NoError(t, os.Symlink(other, path))
		}, "symbolic link"},
		{"a file swapped by another user", func(t *testing.T, path string) {
			if os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root")
			}
			writeTestSnapshot(t, path, nil)
			require.NoError(t, os.Chown(path, 65534, 65534))
		}, "belongs to user 65534"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pods.snap")
			tc.prepare(t, path)
			serr := snapshotLoadError(t, path, SnapshotProtection{})
			require.NotNil(t, serr, "the file was loaded")
			assert.Contains(t, serr.Error(), tc.want)
		})
	}
}

func TestConfigureInformerRejectsABadSnapshotKeyAndCopiesAGoodOne(t *testing.T) {
	informer := NewSharedIndexInformer(&ListWatch{}, &v1.Pod{}, 0, Indexers{})
	protect := func(p SnapshotProtection) func(*SharedIndexInformerOptions) {
		return func(o *SharedIndexInformerOptions) { o.SnapshotProtection = p }
	}
	err := ConfigureInformer(informer, protect(SnapshotProtection{Key: []byte("short")}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "has 5 bytes; it must have 32")
	assert.Nil(t, sharedOf(informer).config.SnapshotProtection.Key, "a refused configuration changes nothing")

	key := testSnapshotKey(9)
	require.NoError(t, ConfigureInformer(informer, protect(SnapshotProtection{Key: key})))
	key[0] ^= 0xff
	got := sharedOf(informer).config.SnapshotProtection.Key
	assert.Equal(t, testSnapshotKey(9), got, "the key was copied")
}

// TestSnapshotRefusedPlainFileOfSensitiveObjectsIsRemoved: an informer of
// sensitive objects with a key refuses a plain snapshot file (left by a run
// without a key) and deletes it at once, instead of leaving the objects in
// clear on disk until its next clean stop.
func TestSnapshotRefusedPlainFileOfSensitiveObjectsIsRemoved(t *testing.T) {
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	path := filepath.Join(t.TempDir(), "pods.snap")
	firstSnapshotRun(t, srv, path)

	informer, rec, errs := snapshotInformer(t, srv, SharedIndexInformerOptions{SnapshotFile: path, SnapshotProtection: SnapshotProtection{Sensitive: true, Key: testSnapshotKey(1)}})
	runInformerUntil(t, informer)
	assert.Equal(t, []string{"add ns/a@1 initial=true", "add ns/b@2 initial=true"}, rec.waitN(t, 2))
	lists, _ := requestCounts(srv)
	assert.Equal(t, 2, lists, "the plain file was refused: the informer listed")
	_, err := os.Lstat(path)
	assert.ErrorIs(t, err, os.ErrNotExist, "the refused plain file of sensitive objects was removed on start")
	got := errs()
	require.Len(t, got, 1)
	var serr *SnapshotError
	require.ErrorAs(t, got[0], &serr)
	assert.Equal(t, "load", serr.Op)
}
