package cache

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kinformer/kinformer/internal/fakeapi"
	"github.com/kinformer/kinformer/listadmission"
)

// admissionClockStart is where the fake clocks of these tests start.
var admissionClockStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// admissionUntil waits until cond holds of a's stats, or fails t.
func admissionUntil(t *testing.T, a *listadmission.Admission, what string, cond func(listadmission.Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond(a.Stats()) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; stats %+v", what, a.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}

// gatedAPI is the scripted server of the list admission tests: it sends
// every request it gets, named ("<name> list", "<name> list continue",
// "<name> watch" or "<name> stream"), to requests; each LIST waits until
// the test releases it through gate (with an error: that error is the
// answer instead of the next page) and then answers the next page; its
// watches and streams stay open, silent until the test sends on them.
type gatedAPI struct {
	*fakeapi.API
	gate *fakeapi.Gate
}

func newGatedAPI(name string, requests chan string, pages ...runtime.Object) *gatedAPI {
	gate := fakeapi.NewGate()
	api := fakeapi.New().WatchAnswers(fakeapi.WatchAnswer{Hold: true})
	for _, page := range pages {
		api.ListAnswers(fakeapi.ListAnswer{Object: page})
	}
	api.BeforeList(func(ctx context.Context, options metav1.ListOptions) error {
		if options.Continue != "" {
			requests <- name + " list continue"
		} else {
			requests <- name + " list"
		}
		return gate.Pass(ctx)
	})
	api.OnWatch(func(options metav1.ListOptions) {
		if options.SendInitialEvents != nil && *options.SendInitialEvents {
			requests <- name + " stream"
		} else {
			requests <- name + " watch"
		}
	})
	return &gatedAPI{API: api, gate: gate}
}

// admissionPodList is a page of a pod LIST at rv, continued by cont.
func admissionPodList(rv, cont string, names ...string) *v1.PodList {
	list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: rv, Continue: cont}}
	for _, n := range names {
		list.Items = append(list.Items, v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: n, ResourceVersion: rv}})
	}
	return list
}

// admissionInformers runs informers and stops them at the end of the test.
type admissionInformers struct {
	t       *testing.T
	wg      sync.WaitGroup
	cancels []context.CancelFunc
}

func (r *admissionInformers) run(lw ListerWatcher, a *listadmission.Admission, priority int) (SharedIndexInformer, context.CancelFunc) {
	informer := NewSharedIndexInformerWithOptions(lw, &v1.Pod{}, SharedIndexInformerOptions{ListAdmission: a, ListAdmissionPriority: priority})
	ctx, cancel := context.WithCancel(r.t.Context())
	r.cancels = append(r.cancels, cancel)
	r.wg.Go(func() { informer.RunWithContext(ctx) })
	return informer, cancel
}

func (r *admissionInformers) stop() {
	for _, c := range r.cancels {
		c()
	}
	r.wg.Wait()
}

// expectRequest waits for the next request any gatedAPI records.
func expectRequest(t *testing.T, requests chan string, want string) {
	t.Helper()
	select {
	case got := <-requests:
		if got != want {
			t.Fatalf("request %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no request; want %q", want)
	}
}

// expectNoRequest checks that no request was made meanwhile.
func expectNoRequest(t *testing.T, requests chan string) {
	t.Helper()
	select {
	case got := <-requests:
		t.Fatalf("unexpected request %q", got)
	default:
	}
}

func waitSynced(t *testing.T, informers ...SharedIndexInformer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, i := range informers {
		if !WaitForCacheSync(ctx.Done(), i.HasSynced) {
			t.Fatal("informer did not sync")
		}
	}
}

// TestInformerHoldsListSlotUntilLastPage: a paged LIST holds its slot from its
// first request until its last page; the informer waiting for the slot lists
// only then.
func TestInformerHoldsListSlotUntilLastPage(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	a := listadmission.New(listadmission.Options{MaxConcurrent: 1})
	requests := make(chan string, 16)
	first := newGatedAPI("first", requests, admissionPodList("10", "c1", "p1"), admissionPodList("10", "", "p2"))
	second := newGatedAPI("second", requests, admissionPodList("20", "", "q1"))
	r := &admissionInformers{t: t}
	defer r.stop()

	i1, _ := r.run(first, a, 0)
	expectRequest(t, requests, "first list")
	i2, _ := r.run(second, a, 0)
	admissionUntil(t, a, "the second informer to wait", func(s listadmission.Stats) bool { return s.Waiting == 1 })
	first.gate.Release(nil)
	expectRequest(t, requests, "first list continue")
	expectNoRequest(t, requests)
	if s := a.Stats(); s.InFlight != 1 || s.Waiting != 1 {
		t.Fatalf("between two pages: %+v, want the first list in flight and the second waiting", s)
	}
	first.gate.Release(nil)
	// The last page arrived: the slot goes to the second informer while
	// the first goes on to watch.
	got := []string{<-requests, <-requests}
	if !(got[0] == "first watch" && got[1] == "second list" || got[0] == "second list" && got[1] == "first watch") {
		t.Fatalf("requests %q after the first list's last page, want the first's watch and the second's list", got)
	}
	second.gate.Release(nil)
	expectRequest(t, requests, "second watch")
	waitSynced(t, i1, i2)
	if s := a.Stats(); s.InFlight != 0 || s.Waiting != 0 || s.Admitted != 2 || s.PeakInFlight != 1 {
		t.Fatalf("after both synced: %+v", s)
	}
}

// TestInformerHoldsStreamSlotUntilEndBookmark: a streaming list holds its slot
// until the bookmark that ends its initial events.
func TestInformerHoldsStreamSlotUntilEndBookmark(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, true)
	a := listadmission.New(listadmission.Options{MaxConcurrent: 1})
	requests := make(chan string, 16)
	first := newGatedAPI("first", requests)
	second := newGatedAPI("second", requests)
	r := &admissionInformers{t: t}
	defer r.stop()

	i1, _ := r.run(first, a, 0)
	expectRequest(t, requests, "first stream")
	i2, _ := r.run(second, a, 0)
	admissionUntil(t, a, "the second informer to wait", func(s listadmission.Stats) bool { return s.Waiting == 1 })
	firstStream := openedWatch(t, first.API, 0)
	firstStream.Send(fakeapi.Added(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p1", ResourceVersion: "5"}}))
	expectNoRequest(t, requests)
	if s := a.Stats(); s.InFlight != 1 || s.Waiting != 1 {
		t.Fatalf("during the first stream: %+v", s)
	}
	firstStream.Send(endOfInitialEvents("6"))
	expectRequest(t, requests, "second stream")
	openedWatch(t, second.API, 0).Send(endOfInitialEvents("7"))
	waitSynced(t, i1, i2)
	admissionUntil(t, a, "both slots back", func(s listadmission.Stats) bool { return s.InFlight == 0 })
	if s := a.Stats(); s.Waiting != 0 || s.Admitted != 2 || s.PeakInFlight != 1 {
		t.Fatalf("after both synced: %+v", s)
	}
	// The stream went on as the watch: no other request.
	expectNoRequest(t, requests)
}

// TestStoppedInformerReleasesSlotAndPlace: an informer stopped while it
// lists gives its slot back, one stopped while it waits leaves the line.
func TestStoppedInformerReleasesSlotAndPlace(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	a := listadmission.New(listadmission.Options{MaxConcurrent: 1})
	requests := make(chan string, 16)
	stuck := newGatedAPI("stuck", requests, admissionPodList("1", ""))
	gone := newGatedAPI("gone", requests, admissionPodList("1", ""))
	last := newGatedAPI("last", requests, admissionPodList("3", "", "z"))
	r := &admissionInformers{t: t}
	defer r.stop()

	_, stopStuck := r.run(stuck, a, 0)
	expectRequest(t, requests, "stuck list")
	_, stopGone := r.run(gone, a, 5)
	admissionUntil(t, a, "gone to wait", func(s listadmission.Stats) bool { return s.Waiting == 1 })
	i3, _ := r.run(last, a, 0)
	admissionUntil(t, a, "last to wait", func(s listadmission.Stats) bool { return s.Waiting == 2 })

	stopGone()
	admissionUntil(t, a, "gone to leave the line", func(s listadmission.Stats) bool { return s.Waiting == 1 })
	expectNoRequest(t, requests)
	stopStuck()
	expectRequest(t, requests, "last list")
	last.gate.Release(nil)
	expectRequest(t, requests, "last watch")
	waitSynced(t, i3)
	if s := a.Stats(); s.InFlight != 0 || s.Waiting != 0 || s.Admitted != 2 {
		t.Fatalf("stats %+v, want 2 admitted (stuck, last), none in flight or waiting", s)
	}
}

// TestInformerAdmissionFollowsPriority: the waiting informer of the highest
// priority lists first.
func TestInformerAdmissionFollowsPriority(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	a := listadmission.New(listadmission.Options{MaxConcurrent: 1})
	requests := make(chan string, 16)
	r := &admissionInformers{t: t}
	defer r.stop()
	lws := map[string]*gatedAPI{}
	var all []SharedIndexInformer
	for i, w := range []struct {
		name     string
		priority int
	}{{"holder", 0}, {"low", -1}, {"plain", 0}, {"high", 7}} {
		lw := newGatedAPI(w.name, requests, admissionPodList(fmt.Sprint(i+1), "", w.name+"-pod"))
		lws[w.name] = lw
		informer, _ := r.run(lw, a, w.priority)
		all = append(all, informer)
		if i == 0 {
			expectRequest(t, requests, "holder list")
		} else {
			admissionUntil(t, a, w.name+" to wait", func(s listadmission.Stats) bool { return s.Waiting == i })
		}
	}
	for _, next := range []string{"high", "plain", "low"} {
		prev := map[string]string{"high": "holder", "plain": "high", "low": "plain"}[next]
		lws[prev].gate.Release(nil)
		got := []string{<-requests, <-requests}
		if !(got[0] == prev+" watch" && got[1] == next+" list" || got[1] == prev+" watch" && got[0] == next+" list") {
			t.Fatalf("after %s listed: %q, want %q and %q", prev, got, prev+" watch", next+" list")
		}
	}
	lws["low"].gate.Release(nil)
	expectRequest(t, requests, "low watch")
	waitSynced(t, all...)
}

// TestInformer429SlowsTheGroup: the 429s one informer's LIST gets halve the
// number of lists every informer sharing the admission may run, then, at
// one list at a time, pause them all.
func TestInformer429SlowsTheGroup(t *testing.T) {
	clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)
	a := listadmission.New(listadmission.Options{MaxConcurrent: 2, Jitter: -1})
	requests := make(chan string, 16)
	throttled := newGatedAPI("throttled", requests, admissionPodList("1", "", "p"))
	r := &admissionInformers{t: t}
	defer r.stop()
	informer, _ := r.run(throttled, a, 0)
	expectRequest(t, requests, "throttled list")
	throttled.gate.Release(apierrors.NewTooManyRequests("slow down", 1))
	admissionUntil(t, a, "the 429 to be reported", func(s listadmission.Stats) bool { return s.Throttled == 1 })
	if s := a.Stats(); s.CurrentLimit != 1 || !s.PausedUntil.IsZero() {
		t.Fatalf("after a 429: %+v, want the limit halved and no pause", s)
	}
	// The informer retries after its backoff, and is answered 429 again:
	// at one list at a time, the group pauses.
	expectRequest(t, requests, "throttled list")
	start := time.Now()
	throttled.gate.Release(apierrors.NewTooManyRequests("slow down", 1))
	admissionUntil(t, a, "the second 429 to be reported", func(s listadmission.Stats) bool { return s.Throttled == 2 })
	if s := a.Stats(); s.CurrentLimit != 1 || s.PausedUntil.Before(start.Add(time.Second)) {
		t.Fatalf("after a 429 with Retry-After 1 at one list at a time: %+v, want a pause of a second", s)
	}
	// The informer retries after its backoff and the pause, and syncs.
	expectRequest(t, requests, "throttled list")
	throttled.gate.Release(nil)
	expectRequest(t, requests, "throttled watch")
	waitSynced(t, informer)
	if s := a.Stats(); s.CurrentLimit != 2 {
		t.Fatalf("after a completed list: %+v, want the limit raised to 2", s)
	}
}

// TestInformerStatusReportsTheListAdmissionPause: an informer's status says
// until when its admission pauses its lists.
func TestInformerStatusReportsTheListAdmissionPause(t *testing.T) {
	clk := testingclock.NewFakeClock(admissionClockStart)
	a := listadmission.New(listadmission.Options{MaxConcurrent: 1, Jitter: -1, Clock: clk})
	informer := NewSharedIndexInformerWithOptions(&ListWatch{}, &v1.Pod{}, SharedIndexInformerOptions{ListAdmission: a})
	st, _ := GetInformerStatus(informer)
	if !st.ListsPausedUntil.IsZero() {
		t.Fatalf("paused until %v before any 429", st.ListsPausedUntil)
	}
	a.Throttled(5 * time.Second)
	a.Throttled(5 * time.Second)
	st, _ = GetInformerStatus(informer)
	if want := admissionClockStart.Add(5 * time.Second); !st.ListsPausedUntil.Equal(want) {
		t.Fatalf("paused until %v, want %v", st.ListsPausedUntil, want)
	}
}
