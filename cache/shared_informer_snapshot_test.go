package cache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache/internal/reflector"
	"github.com/kinformer/kinformer/cache/internal/snapshot"

	"github.com/kinformer/kinformer/internal/fakeapi"
)

// frozenNowClock is the real clock with a Now that does not move, so that
// every watch lasts no time at all; its timers are real.
type frozenNowClock struct {
	clock.RealClock
	now time.Time
}

func (c frozenNowClock) Now() time.Time                  { return c.now }
func (c frozenNowClock) Since(t time.Time) time.Duration { return c.now.Sub(t) }

// blockingIndex is an index function that, once armed, blocks the
// informer's processing loop in the store when it indexes key, until
// released.
type blockingIndex struct {
	key         string
	mu          sync.Mutex
	armed       bool
	blocked     chan struct{}
	release     chan struct{}
	releaseOnce sync.Once
}

func newBlockingIndex(key string) *blockingIndex {
	return &blockingIndex{key: key, blocked: make(chan struct{}), release: make(chan struct{})}
}

// unblock lets the blocked index call (and every later one) return.
func (b *blockingIndex) unblock() { b.releaseOnce.Do(func() { close(b.release) }) }

func (b *blockingIndex) arm() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = true
}

func (b *blockingIndex) index(obj interface{}) ([]string, error) {
	key, err := MetaNamespaceKeyFunc(obj)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	block := b.armed && key == b.key
	if block {
		b.armed = false
		close(b.blocked)
	}
	b.mu.Unlock()
	if block {
		<-b.release
	}
	return []string{key}, nil
}

// relistCause is a way to end an informer's watch that makes it relist.
type relistCause struct {
	name string
	// frozenClock: the informer runs on frozenNowClock.
	frozenClock bool
	end         func(srv *fakeapi.Server)
}

var relistCauses = []relistCause{
	{name: "410 Gone", end: func(srv *fakeapi.Server) { srv.Expire() }},
	{name: "ERROR 500 event", end: func(srv *fakeapi.Server) {
		srv.EndWatches(watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(errors.New("etcd leader changed")).ErrStatus})
	}},
	{name: "decoding error", end: func(srv *fakeapi.Server) {
		status := apierrors.NewInternalError(errors.New("unable to decode an event from the watch stream: bad frame")).ErrStatus
		status.Details.Causes = []metav1.StatusCause{{Type: reflector.ClientWatchDecodingCause, Message: "unable to decode an event from the watch stream: bad frame"}}
		srv.EndWatches(watch.Event{Type: watch.Error, Object: &status})
	}},
	{name: "very short watch", frozenClock: true, end: func(srv *fakeapi.Server) { srv.EndWatches() }},
}

// nonAtomicRelistModes are the informer configurations whose relists do not
// replace the cache in one step.
var nonAtomicRelistModes = []struct {
	name                     string
	useDeltaFIFO, pageByPage bool
}{
	{"RealFIFO page by page", false, true},
	{"DeltaFIFO", true, false},
	{"DeltaFIFO page by page", true, true},
}

// rvWentBack returns the updates among events (eventRecorder's) whose new
// object is older than the old one.
func rvWentBack(t *testing.T, events []string) []string {
	t.Helper()
	var back []string
	for _, ev := range events {
		rest, ok := strings.CutPrefix(ev, "update ")
		if !ok {
			continue
		}
		from, to, ok := strings.Cut(rest, " -> ")
		require.True(t, ok, ev)
		rvOf := func(s string) int {
			_, rv, _ := strings.Cut(s, "@")
			n, err := strconv.Atoi(rv)
			require.NoError(t, err, ev)
			return n
		}
		if rvOf(to) < rvOf(from) {
			back = append(back, ev)
		}
	}
	return back
}

// TestSnapshotNeverMixesStatesOfANonAtomicRelist: an informer whose relist
// is not atomic (page by page, or any DeltaFIFO relist) is stopped while
// the relist has applied a@7 but not the rest, the cache's watermark still
// at 5. Whatever ended the watch, the snapshot it leaves is never that mix
// (a@7 saved under resourceVersion 5): the informer restarted from the
// snapshot directory never hears of an object going back to an older
// version (replaying a@6 over a@7), and ends with the server's state.
func TestSnapshotNeverMixesStatesOfANonAtomicRelist(t *testing.T) {
	for _, mode := range nonAtomicRelistModes {
		for _, cause := range relistCauses {
			t.Run(mode.name+"/"+cause.name, func(t *testing.T) {
				srv := fakeapi.NewServer(false)
				t.Cleanup(srv.StopWatches)
				createAtoE(srv) // 1..5
				srv.PageSize(2, true)
				path := filepath.Join(t.TempDir(), "pods.snap")
				block := newBlockingIndex("ns/c")
				opts := SharedIndexInformerOptions{
					SnapshotFile:     path,
					UseDeltaFIFO:     mode.useDeltaFIFO,
					RelistPageByPage: mode.pageByPage,
					Indexers:         Indexers{"block": block.index},
				}
				informer := NewSharedIndexInformerWithOptions(srv, &v1.Pod{}, opts).(*sharedIndexInformer)
				first := &eventRecorder{}
				_, err := informer.AddEventHandler(first)
				require.NoError(t, err)
				if cause.frozenClock {
					informer.clock = frozenNowClock{now: time.Unix(1000, 0)}
				}
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); informer.RunWithContext(ctx) }()
				t.Cleanup(func() {
					cancel()
					block.unblock()
					<-done
				})
				waitUntilSynced(t, informer.HasSyncedChecker())
				waitForNextWatch(t, srv)

				block.arm()
				srv.UpdateUnsent("a") // 6
				srv.UpdateUnsent("a") // 7
				cause.end(srv)
				select {
				case <-block.blocked:
				case <-time.After(waitTimeout):
					t.Fatal("the relist did not reach c")
				}
				// The store is locked while c is indexed: the handlers tell
				// what was applied.
				require.Eventually(t, func() bool {
					return slices.Contains(first.get(), "update ns/a@1 -> ns/a@7")
				}, waitTimeout, eventuallyTick, "the relist applied a before c: %v", first.get())
				cancel()
				block.unblock()
				select {
				case <-done:
				case <-time.After(waitTimeout):
					t.Fatal("informer did not stop")
				}
				srv.StopWatches()

				if objects, rv, err := readPodSnapshot(t, path, snapshot.Tie{}); err == nil {
					for _, obj := range objects {
						objRV, _ := strconv.Atoi(obj.(*v1.Pod).ResourceVersion)
						snapRV, _ := strconv.Atoi(rv)
						assert.LessOrEqual(t, objRV, snapRV, "the snapshot at %s holds %s", rv, describeObj(obj))
					}
				} else {
					require.ErrorIs(t, err, os.ErrNotExist)
				}

				restarted, rec, _ := snapshotInformer(t, srv, SharedIndexInformerOptions{SnapshotFile: path, UseDeltaFIFO: mode.useDeltaFIFO, RelistPageByPage: mode.pageByPage})
				stop := runInformerUntil(t, restarted)
				want := []string{"ns/a@7", "ns/b@2", "ns/c@3", "ns/d@4", "ns/e@5"}
				require.Eventually(t, func() bool {
					return assert.ObjectsAreEqual(want, describedStore(restarted.GetStore())) &&
						restarted.GetStore().LastStoreSyncResourceVersion() == "7"
				}, waitTimeout, eventuallyTick, "the restarted informer holds %v", describedStore(restarted.GetStore()))
				stop()
				assert.Empty(t, rvWentBack(t, rec.get()), "handlers heard of objects going back in time: %v", rec.get())
			})
		}
	}
}
