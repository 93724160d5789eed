package cache

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kinformer/kinformer/cache/internal/snapshot"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// runInformerUntil runs informer until it synced and stop is called; stop waits
// for it to return (and so for the snapshot to be written).
func runInformerUntil(t *testing.T, informer SharedInformer) (stop func()) {
	t.Helper()
	stop = runInBackground(t, informer.RunWithContext, "informer")
	waitUntilSynced(t, informer.HasSyncedChecker())
	return stop
}

// firstSnapshotRun lists a and b (rv 1, 2) into a new snapshot at path.
func firstSnapshotRun(t *testing.T, srv *fakeapi.Server, path string) {
	t.Helper()
	srv.Create("a") // 1
	srv.Create("b") // 2
	informer, rec, _ := snapshotInformer(t, srv, SharedIndexInformerOptions{SnapshotFile: path})
	stop := runInformerUntil(t, informer)
	rec.waitN(t, 2)
	// Stop only once the watch is open, so that every test sees one list
	// and one watch from the first run.
	require.Eventually(t, func() bool { _, watches := requestCounts(srv); return watches == 1 }, waitTimeout, time.Millisecond)
	stop()
	srv.StopWatches()
	_, err := os.Stat(path)
	require.NoError(t, err, "the snapshot was written on stop")
}

func TestSnapshotResumeWithoutRelist(t *testing.T) {
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	path := filepath.Join(t.TempDir(), "pods.snap")
	firstSnapshotRun(t, srv, path)

	// While down: an update, a delete and a create, all still in the
	// server's watch history.
	srv.Update("a") // 3
	srv.Delete("b") // 4
	srv.Create("c") // 5

	informer, rec, errs := snapshotInformer(t, srv, SharedIndexInformerOptions{SnapshotFile: path})
	runInformerUntil(t, informer)
	got := rec.waitN(t, 5)
	assert.Equal(t, []string{
		"add ns/a@1 initial=true",
		"add ns/b@2 initial=true",
		"update ns/a@1 -> ns/a@3",
		"delete ns/b@4",
		"add ns/c@5 initial=false",
	}, got)
	lists, watches := requestCounts(srv)
	assert.Equal(t, 1, lists, "only the first run listed")
	assert.Equal(t, 2, watches)
	assert.Equal(t, []string{"ns/a@3", "ns/c@5"}, describedStore(informer.GetStore()))
	assert.Empty(t, errs())
	require.NoError(t, WaitForResourceVersion(context.Background(), informer, "5"))
}

func TestSnapshotResumeWith410Reconciles(t *testing.T) {
	srv := fakeapi.NewServer(false)
	t.Cleanup(srv.StopWatches)
	path := filepath.Join(t.TempDir(), "pods.snap")
	firstSnapshotRun(t, srv, path)

	// While down, and compacted away: the watch from rv 2 gets 410.
	srv.UpdateMissed("a") // 3
	srv.DeleteMissed("b") // 4
	srv.CreateMissed("c") // 5

	informer, rec, errs := snapshotInformer(t, srv, SharedIndexInformerOptions{SnapshotFile: path})
	runInformerUntil(t, informer)
	got := rec.waitN(t, 5)
	assert.Equal(t, []string{
		"add ns/a@1 initial=true",
		"add ns/b@2 initial=true",
		// The relist, applied in one step: the deletion of what it no
		// longer has, then its updates and adds in list order.
		"delete tombstone(ns/b@2)",
		"update ns/a@1 -> ns/a@3",
		"add ns/c@5 initial=false",
	}, got, "the relist is reconciled against the loaded cache")
	lists, _ := requestCounts(srv)
	assert.Equal(t, 2, lists, "the first run's list and the relist after 410")
	assert.Equal(t, []string{"ns/a@3", "ns/c@5"}, describedStore(informer.GetStore()))
	for _, err := range errs() {
		var serr *SnapshotError
		assert.False(t, errors.As(err, &serr), "unexpected snapshot error %v", err)
	}
}

func TestSnapshotRejectedFiles(t *testing.T) {
	good := func(t *testing.T, path string) []byte {
		srv := fakeapi.NewServer(false)
		firstSnapshotRun(t, srv, path)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		return data
	}
	cases := []struct {
		name   string
		mangle func(t *testing.T, path string, data []byte) []byte
		want   string
	}{
		{"empty", func(*testing.T, string, []byte) []byte { return nil }, "bad magic"},
		{"not a snapshot", func(*testing.T, string, []byte) []byte { return []byte(`{"kind":"PodList"}`) }, "bad magic"},
		{"truncated", func(_ *testing.T, _ string, d []byte) []byte { return d[:len(d)-7] }, "checksum"},
		{"flipped byte", func(_ *testing.T, _ string, d []byte) []byte {
			d = append([]byte(nil), d...)
			d[len(d)/2] ^= 0x40
			return d
		}, "checksum"},
		{"other format version", func(_ *testing.T, _ string, d []byte) []byte {
			d = append([]byte(nil), d...)
			binary.LittleEndian.PutUint16(d[len(snapshot.Magic):], 7)
			return d
		}, "format version 7"},
		{"foreign type", func(t *testing.T, path string, _ []byte) []byte {
			codec, err := snapshot.CodecFor(&unstructured.Unstructured{})
			require.NoError(t, err)
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("v1")
			u.SetKind("ConfigMap")
			u.SetNamespace("ns")
			u.SetName("cm")
			require.NoError(t, snapshot.File{Path: path, Identity: snapshot.Identity(u, ""), Codec: codec}.Write([]interface{}{u}, "9"))
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			return data
		}, `this informer caches "k8s.io/api/core/v1.Pod"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pods.snap")
			data := good(t, path)
			require.NoError(t, os.WriteFile(path, tc.mangle(t, path, data), 0o600))

			srv := fakeapi.NewServer(false)
			t.Cleanup(srv.StopWatches)
			srv.Create("x") // 1
			informer, rec, errs := snapshotInformer(t, srv, SharedIndexInformerOptions{SnapshotFile: path})
			stop := runInformerUntil(t, informer)
			assert.Equal(t, []string{"add ns/x@1 initial=true"}, rec.waitN(t, 1), "a normal list follows")
			lists, _ := requestCounts(srv)
			assert.Equal(t, 1, lists)
			got := errs()
			require.NotEmpty(t, got)
			var serr *SnapshotError
			require.True(t, errors.As(got[0], &serr), "%v", got[0])
			assert.Equal(t, path, serr.Path)
			assert.Equal(t, "load", serr.Op)
			assert.Contains(t, serr.Error(), tc.want)

			// On stop the rejected file is replaced by a good one.
			stop()
			objects, rv, err := readPodSnapshot(t, path, snapshot.Tie{})
			require.NoError(t, err)
			assert.Equal(t, "1", rv)
			assert.Equal(t, []string{"ns/x@1"}, describedStore(objectListOf(objects)))
		})
	}
}

func podSnapshotCodec(t *testing.T) snapshot.Codec {
	codec, err := snapshot.CodecFor(&v1.Pod{})
	require.NoError(t, err)
	return codec
}

// readPodSnapshot reads the plain snapshot of pods at path, tied to tie.
func readPodSnapshot(t *testing.T, path string, tie snapshot.Tie) ([]interface{}, string, error) {
	return snapshot.File{Path: path, Identity: snapshot.Identity(&v1.Pod{}, ""), Tie: tie, Codec: podSnapshotCodec(t)}.Read()
}

type objectList []interface{}

func (l objectList) List() []interface{} { return l }

func objectListOf(objects []interface{}) objectList { return objectList(objects) }

// eventsByObjectKey groups recorded events ("kind ns/name@rv ...") by object
// key, keeping their order.
func eventsByObjectKey(events []string) map[string][]string {
	out := map[string][]string{}
	for _, ev := range events {
		fields := strings.Fields(ev)
		if len(fields) < 2 {
			out[""] = append(out[""], ev)
			continue
		}
		key := strings.TrimPrefix(fields[1], "tombstone(")
		if i := strings.IndexByte(key, '@'); i >= 0 {
			key = key[:i]
		}
		out[key] = append(out[key], ev)
	}
	return out
}

// TestSnapshotLoadDoesNotReapplyTransform: the objects loaded from a snapshot
// are the transformed objects as cached; the transform is not applied to
// them again (it is to everything the server sends afterwards, once), with
// either queue. The transform here is deliberately not idempotent: it
// counts its calls in an annotation.
func TestSnapshotLoadDoesNotReapplyTransform(t *testing.T) {
	for _, q := range queueKinds {
		t.Run(q.name, func(t *testing.T) {
			var mu sync.Mutex
			calls := map[string]int{}
			transform := func(obj interface{}) (interface{}, error) {
				pod, ok := obj.(*v1.Pod)
				if !ok {
					return obj, nil
				}
				n, _ := strconv.Atoi(pod.Annotations["transformed"])
				pod.Annotations = map[string]string{"transformed": strconv.Itoa(n + 1)}
				mu.Lock()
				calls[pod.Name+"@"+pod.ResourceVersion]++
				mu.Unlock()
				return pod, nil
			}
			callsSoFar := func() map[string]int {
				mu.Lock()
				defer mu.Unlock()
				out := map[string]int{}
				for k, v := range calls {
					out[k] = v
				}
				return out
			}
			annotations := func(store Store) map[string]string {
				out := map[string]string{}
				for _, obj := range store.List() {
					out[describeObj(obj)] = obj.(*v1.Pod).Annotations["transformed"]
				}
				return out
			}
			path := filepath.Join(t.TempDir(), "pods.snap")
			srv := fakeapi.NewServer(false)
			t.Cleanup(srv.StopWatches)
			srv.Create("a") // 1
			srv.Create("b") // 2
			opts := SharedIndexInformerOptions{SnapshotFile: path, UseDeltaFIFO: q.useDeltaFIFO}

			first, rec, _ := snapshotInformer(t, srv, opts)
			require.NoError(t, first.SetTransform(transform))
			stop := runInformerUntil(t, first)
			rec.waitN(t, 2)
			require.Eventually(t, func() bool { _, watches := requestCounts(srv); return watches == 1 }, waitTimeout, time.Millisecond)
			stop()
			srv.StopWatches()
			assert.Equal(t, map[string]int{"a@1": 1, "b@2": 1}, callsSoFar())

			srv.Update("a") // 3, in the watch history
			second, rec, errs := snapshotInformer(t, srv, opts)
			require.NoError(t, second.SetTransform(transform))
			runInformerUntil(t, second)
			// Per object: the DeltaFIFO may pop a's load and update together.
			assert.Equal(t, map[string][]string{
				"ns/a": {"add ns/a@1 initial=true", "update ns/a@1 -> ns/a@3"},
				"ns/b": {"add ns/b@2 initial=true"},
			}, eventsByObjectKey(rec.waitN(t, 3)))
			assert.Empty(t, errs())
			lists, _ := requestCounts(srv)
			assert.Equal(t, 1, lists, "the second run loaded the snapshot")
			assert.Equal(t, map[string]int{"a@1": 1, "b@2": 1, "a@3": 1}, callsSoFar(),
				"the loaded objects were not transformed again; the watched update was, once")
			assert.Equal(t, map[string]string{"ns/a@3": "1", "ns/b@2": "1"}, annotations(second.GetStore()))
		})
	}
}

// TestSnapshotErrorUnwrapsToItsCause: errors.Is on a SnapshotError reaches its
// cause, and its message names the file and the operation.
func TestSnapshotErrorUnwrapsToItsCause(t *testing.T) {
	cause := errors.New("boom")
	err := error(&SnapshotError{Path: "p", Op: "load", Err: cause})
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, "informer snapshot p: load: boom", err.Error())
}
