package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// fuzzFile writes a snapshot of two pods at rv 7 (encrypted with key unless
// nil) and returns the file's bytes: the valid seed the fuzz targets
// mutate.
func fuzzFile(f *testing.F, key []byte) []byte {
	f.Helper()
	path := filepath.Join(f.TempDir(), "pods.snap")
	objects := []interface{}{testPod("a", "3"), testPod("b", "7")}
	if err := podFile(f, path, key).Write(objects, "7"); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return data
}

// FuzzParse: parsing any plain snapshot file never panics and never
// allocates without bound; what it accepts has a resourceVersion and only
// pods.
func FuzzParse(f *testing.F) {
	f.Add(fuzzFile(f, nil))
	file := podFile(f, "", nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		objects, rv, err := file.parse(data)
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

// FuzzDecrypt: decrypting any file never panics, and what it accepts (only
// what the key authenticated) holds a valid snapshot.
func FuzzDecrypt(f *testing.F) {
	key := testKey(1)
	f.Add(fuzzFile(f, key))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !IsEncrypted(data) {
			return
		}
		plain, err := decrypt(data, key)
		if err != nil {
			return
		}
		if _, _, err := podFile(t, "", nil).parse(plain); err != nil {
			t.Fatalf("an authenticated file holds no valid snapshot: %v", err)
		}
	})
}
