package fakeapi

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// Namespace is the namespace of every pod a Server holds.
const Namespace = "ns"

// Server is an in-memory API server for the pods of one namespace, with the behaviour of the
// real one that informers depend on: every change takes the next resourceVersion; a LIST
// returns the pods sorted by name at the current version, in pages when the request sets a
// limit (from a snapshot taken at the first page, as the server's consistent pages are); a
// WATCH replays the changes after the requested version and then streams new ones, or fails
// with 410 Gone when that version was compacted away (a watch without a version, or from "0"
// once changes were compacted, starts with the current state as ADDED events); a streaming
// list (sendInitialEvents) sends every pod and then the bookmark that ends the initial events.
// It is a ListerWatcher.
//
// Build one with NewServer; stop its watches with StopWatches when the test ends (for example
// with t.Cleanup), so that no watch goroutine outlives the test. Safe for concurrent use.
type Server struct {
	mu        sync.Mutex
	rv        int
	pods      map[string]*v1.Pod
	history   []watch.Event
	compacted int // a watch from a version below this gets 410 Gone
	streams   []*stream
	snapshots []*v1.PodList
	requests  []string

	streaming bool
	listErr   error
	watchErr  error
	opened    chan struct{}

	listOpts      []metav1.ListOptions
	beforeList    func(context.Context, metav1.ListOptions) error
	pageSize      int
	pageUnpaged   bool
	answerListsAs func(*v1.PodList) runtime.Object
}

// NewServer returns an empty server at resourceVersion 0. streaming says whether it serves
// streaming lists; one that does not rejects them as an older server does (Invalid), and says
// so through IsWatchListSemanticsUnSupported, so that a Reflector does not ask.
func NewServer(streaming bool) *Server {
	return &Server{pods: map[string]*v1.Pod{}, streaming: streaming, opened: make(chan struct{}, 1000)}
}

// Pod returns a pod of the server's namespace with the given name and resourceVersion.
func Pod(name, rv string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name, ResourceVersion: rv}}
}

// Create stores a new pod and sends its ADDED event to every open watch.
func (s *Server) Create(name string) { s.put(name, watch.Added, true) }

// Update changes a pod (it takes the next resourceVersion) and sends its MODIFIED event.
func (s *Server) Update(name string) { s.put(name, watch.Modified, true) }

// Delete removes a pod and sends its DELETED event, carrying the deletion's resourceVersion.
func (s *Server) Delete(name string) { s.remove(name, true) }

// CreateMissed, UpdateMissed and DeleteMissed change the server as Create, Update and Delete
// do, but no watch hears of it: the change is compacted away at once, so a watch asked from
// an older version gets 410 Gone and only a relist sees the change.
func (s *Server) CreateMissed(name string) { s.put(name, watch.Added, false) }

// UpdateMissed is Update, unheard; see CreateMissed.
func (s *Server) UpdateMissed(name string) { s.put(name, watch.Modified, false) }

// DeleteMissed is Delete, unheard; see CreateMissed.
func (s *Server) DeleteMissed(name string) { s.remove(name, false) }

func (s *Server) put(name string, t watch.EventType, heard bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	pod := Pod(name, strconv.Itoa(s.rv))
	s.pods[name] = pod
	s.changedLocked(t, pod, heard)
}

func (s *Server) remove(name string, heard bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.pods[name]
	if !ok {
		panic(fmt.Sprintf("fakeapi.Server: delete of pod %q, which does not exist", name))
	}
	delete(s.pods, name)
	s.rv++
	pod := old.DeepCopy()
	pod.ResourceVersion = strconv.Itoa(s.rv)
	s.changedLocked(watch.Deleted, pod, heard)
}

func (s *Server) changedLocked(t watch.EventType, pod *v1.Pod, heard bool) {
	if !heard {
		s.compacted = s.rv
		return
	}
	s.history = append(s.history, watch.Event{Type: t, Object: pod})
	for _, w := range s.streams {
		w.send(watch.Event{Type: t, Object: pod.DeepCopy()})
	}
}

// UpdateUnsent changes a pod as Update does and records its MODIFIED event in the history, but
// sends it to no open watch: a watch opened later from an older resourceVersion replays it, as
// kube-apiserver's watch cache does, while the watches open now never hear of it.
func (s *Server) UpdateUnsent(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	pod := Pod(name, strconv.Itoa(s.rv))
	s.pods[name] = pod
	s.history = append(s.history, watch.Event{Type: watch.Modified, Object: pod})
}

// Edit changes a stored pod in place with f, keeping its resourceVersion and sending no event,
// as an etcd restore or a cloned cluster may present another object under the same name and
// version. Only a later LIST (or a watch that starts with the current state) shows the change.
// It panics when the pod does not exist, which is a mistake in the test.
func (s *Server) Edit(name string, f func(*v1.Pod)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pod, ok := s.pods[name]
	if !ok {
		panic(fmt.Sprintf("fakeapi.Server: edit of pod %q, which does not exist", name))
	}
	f(pod)
}

// AdvanceVersion moves the server's resourceVersion on by n, as writes to other resources do:
// no pod changes and no watch hears of it, until a bookmark carries the new version.
func (s *Server) AdvanceVersion(n int) {
	s.mu.Lock()
	s.rv += n
	s.mu.Unlock()
}

// SendToWatches sends events, in order, to every open watch and records them nowhere: the
// server's state and history do not change, so a later LIST or watch does not see them. Use it
// for what a server sends but does not store (a bogus event, a burst a benchmark delivers).
func (s *Server) SendToWatches(events ...watch.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.streams {
		w.send(events...)
	}
}

// EndWatches sends events, in order, to every open watch and then ends it, as CloseWatches does.
// With an ERROR event it ends watches as a server does on an internal error; with none it is
// CloseWatches.
func (s *Server) EndWatches(events ...watch.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.streams {
		w.send(events...)
		w.end()
	}
	s.streams = nil
}

// BlackHoleWatches detaches every open watch without ending it: it stays open and hears
// nothing more, as a watch behind a black-holed connection, while later changes still go to
// the history that new watches replay. It returns, for each detached watch, a channel that
// is closed once the consumer stops that watch.
func (s *Server) BlackHoleWatches() []<-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]<-chan struct{}, 0, len(s.streams))
	for _, w := range s.streams {
		out = append(out, w.stopped)
	}
	s.streams = nil
	return out
}

// Expire ends every open watch with a 410 Gone ERROR event and compacts the history, so that
// no watch can resume and every informer relists.
func (s *Server) Expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compacted = s.rv
	for _, w := range s.streams {
		w.send(watch.Event{Type: watch.Error, Object: &apierrors.NewResourceExpired("too old resource version").ErrStatus})
		w.end()
	}
	s.streams = nil
}

// CloseWatches ends every open watch as a server does when its watch timeout runs out: the
// result channel closes with no error, and a watch may resume from its last version.
func (s *Server) CloseWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.streams {
		w.end()
	}
	s.streams = nil
}

// SendBookmark sends a BOOKMARK at the current resourceVersion to every open watch that asked
// for bookmarks.
func (s *Server) SendBookmark() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.streams {
		if w.bookmarks {
			w.send(Bookmark(&v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.Itoa(s.rv)}}))
		}
	}
}

// FailLists makes every later List call fail with err, until FailLists(nil).
func (s *Server) FailLists(err error) {
	s.mu.Lock()
	s.listErr = err
	s.mu.Unlock()
}

// FailWatches makes every later Watch call fail with err, until FailWatches(nil).
func (s *Server) FailWatches(err error) {
	s.mu.Lock()
	s.watchErr = err
	s.mu.Unlock()
}

// BeforeList sets a function that runs at the start of every LIST request (every page), with
// the request's context and options, before the server answers it. It may block, to hold the
// request until the test lets it go (see Gate); when it returns an error, the request is
// answered with that error (and recorded as failed). Nil removes it. It may be set while the
// code under test runs: a request already past it is not affected.
func (s *Server) BeforeList(f func(ctx context.Context, options metav1.ListOptions) error) {
	s.mu.Lock()
	s.beforeList = f
	s.mu.Unlock()
}

// PageSize makes the server answer LISTs in pages of at most n pods, fewer than the request's
// limit asks for when the limit is larger (as the real server may answer), and, when
// unpagedToo is set, makes it page requests without a limit too (as a client whose
// ListerWatcher sets its own limit sees it). A page still never holds more than the limit.
// n <= 0 restores the default: pages of the limit, none without one.
func (s *Server) PageSize(n int, unpagedToo bool) {
	s.mu.Lock()
	s.pageSize, s.pageUnpaged = n, unpagedToo
	s.mu.Unlock()
}

// AnswerListsAs makes the server pass every successful LIST answer (one page, a *v1.PodList
// of its own) through f and answer with what f returns: another list type (a metav1.List, a
// table), or the same objects tracked by the test. f runs while the server is locked: it must
// not call the server. Nil restores the default.
func (s *Server) AnswerListsAs(f func(*v1.PodList) runtime.Object) {
	s.mu.Lock()
	s.answerListsAs = f
	s.mu.Unlock()
}

// ListOptions returns the options of every LIST request so far (every page), in order,
// failed ones included.
func (s *Server) ListOptions() []metav1.ListOptions {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]metav1.ListOptions(nil), s.listOpts...)
}

// StopWatches ends every open watch from the server's side and waits for nothing; call it
// when the test ends.
func (s *Server) StopWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range s.streams {
		w.Stop()
	}
	s.streams = nil
}

// WatchOpened receives one value for every watch the server opened (up to 1000 not yet
// received), so a test can wait for a watch before it changes the server.
func (s *Server) WatchOpened() <-chan struct{} { return s.opened }

// Requests returns the requests served so far, in order, one line each: "list", "list page
// <continue token>" (a page after the first), "watch from <rv>", "stream" (a streaming list),
// each followed by " failed" when it was answered with an error.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// ResourceVersion returns the server's current resourceVersion.
func (s *Server) ResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strconv.Itoa(s.rv)
}

// IsWatchListSemanticsUnSupported reports whether the server refuses streaming lists.
func (s *Server) IsWatchListSemanticsUnSupported() bool { return !s.streaming }

// List answers a LIST; see Server.
func (s *Server) List(options metav1.ListOptions) (runtime.Object, error) {
	return s.ListWithContext(context.Background(), options)
}

// Watch answers a WATCH or a streaming list; see Server.
func (s *Server) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return s.WatchWithContext(context.Background(), options)
}

// ListWithContext is List; the context is passed to the BeforeList function.
func (s *Server) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	s.mu.Lock()
	before := s.beforeList
	s.mu.Unlock()
	var refused error
	if before != nil {
		refused = before(ctx, options)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listOpts = append(s.listOpts, options)
	request := "list"
	if options.Continue != "" {
		request = "list page " + options.Continue
	}
	if refused == nil {
		refused = s.listErr
	}
	if refused != nil {
		s.requests = append(s.requests, request+" failed")
		return nil, refused
	}
	var snap, offset int
	if options.Continue == "" {
		s.snapshots = append(s.snapshots, s.snapshotLocked())
		snap = len(s.snapshots) - 1
	} else {
		var ok bool
		if snap, offset, ok = parseContinue(options.Continue); !ok || snap >= len(s.snapshots) || offset > len(s.snapshots[snap].Items) {
			s.requests = append(s.requests, request+" failed")
			return nil, apierrors.NewBadRequest("fakeapi: malformed continue token " + strconv.Quote(options.Continue))
		}
	}
	s.requests = append(s.requests, request)
	full := s.snapshots[snap]
	page := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: full.ResourceVersion}}
	end := len(full.Items)
	if size := s.pageSizeLocked(options); size > 0 && offset+size < end {
		end = offset + size
		page.Continue = strconv.Itoa(snap) + ":" + strconv.Itoa(end)
	}
	for i := offset; i < end; i++ {
		page.Items = append(page.Items, *full.Items[i].DeepCopy())
	}
	if s.answerListsAs != nil {
		return s.answerListsAs(page), nil
	}
	return page, nil
}

// pageSizeLocked returns how many pods a page answering options holds at most (0: all).
func (s *Server) pageSizeLocked(options metav1.ListOptions) int {
	size := int(options.Limit)
	paged := options.Limit > 0 || options.Continue != ""
	if s.pageSize > 0 && (paged || s.pageUnpaged) && (size <= 0 || s.pageSize < size) {
		size = s.pageSize
	}
	return size
}

// snapshotLocked returns the pods sorted by name, at the current version.
func (s *Server) snapshotLocked() *v1.PodList {
	names := make([]string, 0, len(s.pods))
	for name := range s.pods {
		names = append(names, name)
	}
	sort.Strings(names)
	list := &v1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(s.rv)}}
	for _, name := range names {
		list.Items = append(list.Items, *s.pods[name].DeepCopy())
	}
	return list
}

// parseContinue parses a continue token "<snapshot>:<offset>".
func parseContinue(token string) (snap, offset int, ok bool) {
	a, b, found := strings.Cut(token, ":")
	if !found {
		return 0, 0, false
	}
	snap, err1 := strconv.Atoi(a)
	offset, err2 := strconv.Atoi(b)
	return snap, offset, err1 == nil && err2 == nil && snap >= 0 && offset >= 0
}

// WatchWithContext is Watch; the context is not used (the consumer stops a watch with Stop).
func (s *Server) WatchWithContext(_ context.Context, options metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	streamList := options.SendInitialEvents != nil && *options.SendInitialEvents
	request := "watch from " + options.ResourceVersion
	if streamList {
		request = "stream"
	}
	fail := func(err error) (watch.Interface, error) {
		s.requests = append(s.requests, request+" failed")
		return nil, err
	}
	switch {
	case s.watchErr != nil:
		return fail(s.watchErr)
	case streamList && !s.streaming:
		return fail(apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "", nil))
	}
	w := newStream(options.AllowWatchBookmarks)
	if streamList {
		for _, pod := range s.snapshotLocked().Items {
			w.send(Added(pod.DeepCopy()))
		}
		w.send(EndOfInitialEvents(&v1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.Itoa(s.rv)}}))
	} else {
		if options.ResourceVersion == "" || (options.ResourceVersion == "0" && s.compacted > 0) {
			// As the real server: the current state as ADDED events, then the changes.
			// From "0" with the whole history kept, the server replays the history
			// instead (below): the state at version 0 was empty, so that answer is
			// one the real server may give too, and it is the same every run.
			for _, pod := range s.snapshotLocked().Items {
				w.send(Added(pod.DeepCopy()))
			}
			s.requests = append(s.requests, request)
			s.streams = append(s.streams, w)
			s.signalOpenedLocked()
			return w, nil
		}
		from, err := strconv.Atoi(options.ResourceVersion)
		if err != nil {
			w.Stop()
			return fail(apierrors.NewBadRequest("fakeapi: malformed resourceVersion " + strconv.Quote(options.ResourceVersion)))
		}
		if from < s.compacted {
			w.Stop()
			return fail(apierrors.NewResourceExpired("too old resource version"))
		}
		for _, ev := range s.history {
			pod := ev.Object.(*v1.Pod)
			if rv, _ := strconv.Atoi(pod.ResourceVersion); rv > from {
				w.send(watch.Event{Type: ev.Type, Object: pod.DeepCopy()})
			}
		}
	}
	s.requests = append(s.requests, request)
	s.streams = append(s.streams, w)
	s.signalOpenedLocked()
	return w, nil
}

func (s *Server) signalOpenedLocked() {
	select {
	case s.opened <- struct{}{}:
	default:
	}
}
