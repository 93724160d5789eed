package cache

import (
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// fuzzSnapshotFile writes a snapshot of two pods at rv 7 (encrypted with
// key unless nil) and returns the file's bytes: the valid seed the fuzz
// targets mutate.
func fuzzSnapshotFile(f *testing.F, key []byte) []byte {
	f.Helper()
	codec, err := snapshotCodecFor(&v1.Pod{})
	if err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(f.TempDir(), "pods.snap")
	objects := []interface{}{infPod("a", "3"), infPod("b", "7")}
	if err := writeSnapshot(path, snapshotIdentity(&v1.Pod{}, ""), snapshotTie{}, codec, objects, "7", key); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return data
}

// FuzzSnapshotParse: parsing any plain snapshot file never panics and
// never allocates without bound; what it accepts has a resourceVersion and
// only pods.
func FuzzSnapshotParse(f *testing.F) {
	f.Add(fuzzSnapshotFile(f, nil))
	codec, err := snapshotCodecFor(&v1.Pod{})
	if err != nil {
		f.Fatal(err)
	}
	identity := snapshotIdentity(&v1.Pod{}, "")
	f.Fuzz(func(t *testing.T, data []byte) {
		objects, rv, err := parseSnapshot(data, identity, snapshotTie{}, codec)
		if err != nil {
			return
		}
		if rv == "" {
			t.Fatal("accepted a snapshot without a resourceVersion")
		}
		for i, obj := range objects {
			if _, ok := obj.(*v1.Pod); !ok {
				t.Fatalf("object #%d is a %T", i, obj)
			}
		}
	})
}

// FuzzSnapshotDecrypt: decrypting any file never panics, and what it
// accepts (only what the key authenticated) holds a valid snapshot.
func FuzzSnapshotDecrypt(f *testing.F) {
	key := testSnapshotKey(1)
	seed := fuzzSnapshotFile(f, key)
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		if !isEncryptedSnapshot(data) {
			return
		}
		plain, err := decryptSnapshot(data, key)
		if err != nil {
			return
		}
		if _, _, err := parseSnapshot(plain, snapshotIdentity(&v1.Pod{}, ""), snapshotTie{}, mustPodCodec(t)); err != nil {
			t.Fatalf("an authenticated file holds no valid snapshot: %v", err)
		}
	})
}

func mustPodCodec(t *testing.T) snapshotCodec {
	codec, err := snapshotCodecFor(&v1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	return codec
}
