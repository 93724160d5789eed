package bench

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

// PodSetBaseRV is the resourceVersion below the first pod of every PodSet:
// pod i of NewPodSet is at PodSetBaseRV+1+i and the set at
// PodSetBaseRV+pods.
const PodSetBaseRV = 1000

// PodSet is an immutable population of pods (NewPod(i, ...) for i in
// [0, Len())), each encoded once in protobuf, and the resourceVersion of
// the whole set. A PodAPI serves PodSets without encoding anything per
// request. Safe for concurrent use.
type PodSet struct {
	rv   int
	pods [][]byte // protobuf of v1.Pod (no envelope), by pod number
	rvs  []int    // resourceVersion of each pod
}

// NewPodSet encodes NewPod(i, rv) for i in [0, pods), pod i at
// resourceVersion PodSetBaseRV+1+i (every pod was written once, in order);
// the set is at PodSetBaseRV+pods.
func NewPodSet(pods int) (*PodSet, error) {
	s := &PodSet{rv: PodSetBaseRV + pods, pods: make([][]byte, pods), rvs: make([]int, pods)}
	for i := range pods {
		rv := PodSetBaseRV + 1 + i
		b, err := NewPod(i, strconv.Itoa(rv)).Marshal()
		if err != nil {
			return nil, fmt.Errorf("encoding pod %d: %w", i, err)
		}
		s.pods[i], s.rvs[i] = b, rv
	}
	return s, nil
}

// PodSetChangedAnnotation is the annotation whose value Change modifies.
const PodSetChangedAnnotation = "kubectl.kubernetes.io/restartedAt"

// PodSetChangedValue is the value Change gives PodSetChangedAnnotation
// (NewPod's value has the same length, so a changed pod has the size it
// had).
const PodSetChangedValue = "2026-01-02T04:05:06Z"

// Change returns the set after percent % of its pods were written once
// more: every (100/percent)-th pod (pod 0, then evenly spread), in pod
// order, each at the next resourceVersion after s's and with
// PodSetChangedAnnotation set to PodSetChangedValue; the other pods keep
// their encoding and resourceVersion. It also returns how many pods
// changed. percent must divide 100.
func (s *PodSet) Change(percent int) (*PodSet, int, error) {
	if percent <= 0 || percent > 100 || 100%percent != 0 {
		return nil, 0, fmt.Errorf("percent changed must divide 100, got %d", percent)
	}
	step := 100 / percent
	next := &PodSet{rv: s.rv, pods: make([][]byte, len(s.pods)), rvs: make([]int, len(s.rvs))}
	copy(next.pods, s.pods)
	copy(next.rvs, s.rvs)
	changed := 0
	for i := 0; i < len(s.pods); i += step {
		pod := &v1.Pod{}
		if err := pod.Unmarshal(s.pods[i]); err != nil {
			return nil, 0, fmt.Errorf("decoding pod %d: %w", i, err)
		}
		next.rv++
		pod.ResourceVersion = strconv.Itoa(next.rv)
		pod.Annotations[PodSetChangedAnnotation] = PodSetChangedValue
		b, err := pod.Marshal()
		if err != nil {
			return nil, 0, fmt.Errorf("encoding pod %d: %w", i, err)
		}
		next.pods[i], next.rvs[i] = b, next.rv
		changed++
	}
	return next, changed, nil
}

// Len returns the number of pods in the set.
func (s *PodSet) Len() int { return len(s.pods) }

// ResourceVersion returns the set's resourceVersion (that of its newest
// pod).
func (s *PodSet) ResourceVersion() int { return s.rv }

// PodResourceVersion returns the resourceVersion of pod i.
func (s *PodSet) PodResourceVersion(i int) int { return s.rvs[i] }

// PodAPIPaging says how a PodAPI answers a LIST with a limit.
type PodAPIPaging int

const (
	// PagingLikeWatchCache answers a LIST at resourceVersion "0" or at a
	// given version whole, ignoring its limit, as the API server's watch
	// cache does; a LIST at "" (the latest data) is paged by its limit.
	PagingLikeWatchCache PodAPIPaging = iota
	// PagingAlways pages every LIST with a limit, whatever its
	// resourceVersion, as an API server without watch cache for the
	// resource answers (from etcd).
	PagingAlways
)

// PodAPIRequests counts the requests a PodAPI answered, by kind.
type PodAPIRequests struct {
	// Lists are LISTs answered whole; Pages are LIST requests answered in
	// a page of a paged list (its first page included).
	Lists, Pages int64
	// Streams are WATCHes with sendInitialEvents=true (streaming lists);
	// Watches are the other WATCHes, ExpiredWatches those of them answered
	// with 410 Expired at once.
	Streams, Watches, ExpiredWatches int64
	// Refused are requests answered with an error status: not protobuf,
	// bad parameters, an expired continue token, a path other than the
	// pods'.
	Refused int64
}

// Sub returns r minus o, field by field.
func (r PodAPIRequests) Sub(o PodAPIRequests) PodAPIRequests {
	return PodAPIRequests{
		Lists: r.Lists - o.Lists, Pages: r.Pages - o.Pages,
		Streams: r.Streams - o.Streams, Watches: r.Watches - o.Watches, ExpiredWatches: r.ExpiredWatches - o.ExpiredWatches,
		Refused: r.Refused - o.Refused,
	}
}

// PodAPI is an httptest server speaking the Kubernetes API for the pods of
// a PodSet (GET /api/v1/pods, all namespaces), in protobuf only, through a
// real clientset:
//
//   - LIST, paged by limit and continue as its PodAPIPaging says; a page
//     continues the snapshot the list started from. Any resourceVersion is
//     answered with the current pods (the semantics of "not older than",
//     which the API server's watch cache gives);
//   - WATCH from a resourceVersion: no events until the server expires
//     that version (Expire), then an ERROR event with a 410 Expired status,
//     and the watch ends. A WATCH from a version already expired gets that
//     ERROR at once;
//   - WATCH with sendInitialEvents=true (a streaming list): an ADDED event
//     per current pod, then a BOOKMARK carrying the annotation
//     k8s.io/initial-events-end, then as a WATCH.
//
// Requests asking for another media type than protobuf get 406. All
// methods are safe for concurrent use.
type PodAPI struct {
	srv    *httptest.Server
	paging PodAPIPaging
	codec  runtime.Encoder // protobuf, v1

	mu        sync.Mutex
	state     *PodSet
	snapshots map[int]*PodSet // by resourceVersion, for continue tokens
	compacted int             // watches from below this version are expired
	watches   map[*podAPIWatch]struct{}
	watching  chan struct{} // closed and replaced when a watch registers
	closed    bool

	lists, pages, streams, watchesN, expiredWatches, refused atomic.Int64
}

// podAPIWatch is an open watch: expire is closed when its resourceVersion
// expired (it then sends the ERROR event), stop when it must end quietly.
type podAPIWatch struct {
	expire chan struct{}
	stop   chan struct{}
	status *metav1.Status // set before expire is closed
}

// NewPodAPI starts a server for pods, paging as paging says.
func NewPodAPI(pods *PodSet, paging PodAPIPaging) (*PodAPI, error) {
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), MediaProtobuf)
	if !ok {
		return nil, fmt.Errorf("no serializer for %s", MediaProtobuf)
	}
	a := &PodAPI{
		paging:   paging,
		codec:    scheme.Codecs.EncoderForVersion(info.Serializer, v1.SchemeGroupVersion),
		watches:  map[*podAPIWatch]struct{}{},
		watching: make(chan struct{}),
	}
	a.Reset(pods)
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	return a, nil
}

// URL is the server's base URL, for rest.Config.Host.
func (a *PodAPI) URL() string { return a.srv.URL }

// Reset serves pods from now on, forgets earlier snapshots and expired
// versions, ends the open watches quietly and zeroes the request counts.
func (a *PodAPI) Reset(pods *PodSet) {
	a.mu.Lock()
	a.state = pods
	a.snapshots = map[int]*PodSet{pods.rv: pods}
	a.compacted = 0
	ws := a.watches
	a.watches = map[*podAPIWatch]struct{}{}
	a.mu.Unlock()
	for w := range ws {
		close(w.stop)
	}
	for _, c := range []*atomic.Int64{&a.lists, &a.pages, &a.streams, &a.watchesN, &a.expiredWatches, &a.refused} {
		c.Store(0)
	}
}

// Expire serves next from now on (it must be newer than the current set)
// and expires every resourceVersion before next's: each open watch gets an
// ERROR event with a 410 Expired status and ends, as do later watches from
// those versions. A continue token of the current set stays valid.
func (a *PodAPI) Expire(next *PodSet) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if next.rv <= a.state.rv {
		return fmt.Errorf("the next pod set is at resourceVersion %d, not after the current %d", next.rv, a.state.rv)
	}
	old := a.state.rv
	a.state = next
	a.snapshots[next.rv] = next
	a.compacted = next.rv
	for w := range a.watches {
		w.status = expiredStatus(old, next.rv)
		close(w.expire)
	}
	a.watches = map[*podAPIWatch]struct{}{}
	return nil
}

// OpenWatches returns the number of open watches (streaming lists
// included) and a channel closed when the next one opens.
func (a *PodAPI) OpenWatches() (int, <-chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.watches), a.watching
}

// Requests returns the counts of requests answered since the last Reset.
func (a *PodAPI) Requests() PodAPIRequests {
	return PodAPIRequests{
		Lists: a.lists.Load(), Pages: a.pages.Load(),
		Streams: a.streams.Load(), Watches: a.watchesN.Load(), ExpiredWatches: a.expiredWatches.Load(),
		Refused: a.refused.Load(),
	}
}

// Close ends open watches and shuts the server down.
func (a *PodAPI) Close() {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	ws := a.watches
	a.watches = map[*podAPIWatch]struct{}{}
	a.mu.Unlock()
	for w := range ws {
		close(w.stop)
	}
	a.srv.CloseClientConnections()
	a.srv.Close()
}

func expiredStatus(rv, current int) *metav1.Status {
	return &metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusGone,
		Reason:  metav1.StatusReasonExpired,
		Message: fmt.Sprintf("too old resource version: %d (%d)", rv, current),
	}
}

// fail answers with status, encoded in protobuf, and counts a refusal.
func (a *PodAPI) fail(w http.ResponseWriter, status *metav1.Status) {
	a.refused.Add(1)
	status.Status = metav1.StatusFailure
	body, err := runtime.Encode(a.codec, status)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", MediaProtobuf)
	w.WriteHeader(int(status.Code))
	_, _ = w.Write(body)
}

func badRequest(msg string) *metav1.Status {
	return &metav1.Status{Code: http.StatusBadRequest, Reason: metav1.StatusReasonBadRequest, Message: msg}
}

func (a *PodAPI) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.URL.Path != "/api/v1/pods" {
		a.fail(w, &metav1.Status{Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound, Message: "only GET /api/v1/pods is served"})
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), MediaProtobuf) {
		a.refused.Add(1)
		http.Error(w, "only "+MediaProtobuf+" is served", http.StatusNotAcceptable)
		return
	}
	q := r.URL.Query()
	if q.Get("watch") == "true" || q.Get("watch") == "1" {
		a.serveWatch(w, r)
		return
	}
	a.serveList(w, r)
}

func (a *PodAPI) serveList(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var limit int
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			a.fail(w, badRequest("malformed limit "+strconv.Quote(s)))
			return
		}
		limit = n
	}
	rv, cont := q.Get("resourceVersion"), q.Get("continue")
	if cont != "" && rv != "" {
		a.fail(w, badRequest("specifying resource version is not allowed when using continue"))
		return
	}
	if rv != "" && rv != "0" {
		if _, err := strconv.Atoi(rv); err != nil {
			a.fail(w, badRequest("malformed resourceVersion "+strconv.Quote(rv)))
			return
		}
	}

	a.mu.Lock()
	set, first := a.state, 0
	if cont != "" {
		setRV, offset, ok := parseContinue(cont)
		snap := a.snapshots[setRV]
		if !ok || snap == nil || offset > snap.Len() {
			a.mu.Unlock()
			a.fail(w, &metav1.Status{Code: http.StatusGone, Reason: metav1.StatusReasonExpired,
				Message: "the provided continue parameter is too old to display a consistent list result"})
			return
		}
		set, first = snap, offset
	}
	a.mu.Unlock()

	paged := limit > 0 && (cont != "" || rv == "" || a.paging == PagingAlways)
	end := set.Len()
	next := ""
	if paged {
		a.pages.Add(1)
		if first+limit < end {
			end = first + limit
			next = strconv.Itoa(set.rv) + "/" + strconv.Itoa(end)
		}
	} else {
		a.lists.Add(1)
	}
	meta, err := (&metav1.ListMeta{ResourceVersion: strconv.Itoa(set.rv), Continue: next}).Marshal()
	if err != nil {
		a.fail(w, &metav1.Status{Code: http.StatusInternalServerError, Message: err.Error()})
		return
	}
	items := set.pods[first:end]

	// The body is what the protobuf serializer writes for a v1 PodList:
	// the magic prefix, then runtime.Unknown{TypeMeta: v1 PodList, Raw:
	// the PodList message}, whose fields are the ListMeta (1) and one
	// Pod per item (2).
	listLen := fieldLen(len(meta))
	for _, p := range items {
		listLen += fieldLen(len(p))
	}
	head := protoEnvelopeHead(nil, "PodList", listLen)
	total := len(head) + listLen
	head = appendField(head, 1, meta)
	w.Header().Set("Content-Type", MediaProtobuf)
	w.Header().Set("Content-Length", strconv.Itoa(total))
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	_, _ = bw.Write(head)
	var tag [16]byte
	for _, p := range items {
		_, _ = bw.Write(appendFieldHead(tag[:0], 2, len(p)))
		_, _ = bw.Write(p)
	}
	_ = bw.Flush()
}

func parseContinue(token string) (rv, offset int, ok bool) {
	a, b, found := strings.Cut(token, "/")
	if !found {
		return 0, 0, false
	}
	rv, err1 := strconv.Atoi(a)
	offset, err2 := strconv.Atoi(b)
	return rv, offset, err1 == nil && err2 == nil && offset >= 0
}

func (a *PodAPI) serveWatch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	initial := q.Get("sendInitialEvents") == "true"
	rvParam := q.Get("resourceVersion")
	if initial && q.Get("resourceVersionMatch") != string(metav1.ResourceVersionMatchNotOlderThan) {
		a.fail(w, badRequest("sendInitialEvents requires resourceVersionMatch=NotOlderThan"))
		return
	}
	rv := 0
	if rvParam != "" && rvParam != "0" {
		n, err := strconv.Atoi(rvParam)
		if err != nil {
			a.fail(w, badRequest("malformed resourceVersion "+strconv.Quote(rvParam)))
			return
		}
		rv = n
	}
	var timeout <-chan time.Time
	if s := q.Get("timeoutSeconds"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			t := time.NewTimer(time.Duration(n) * time.Second)
			defer t.Stop()
			timeout = t.C
		}
	}

	pw := &podAPIWatch{expire: make(chan struct{}), stop: make(chan struct{})}
	a.mu.Lock()
	set := a.state
	expired := !initial && rv != 0 && rv < a.compacted
	var status *metav1.Status
	switch {
	case a.closed:
		a.mu.Unlock()
		a.fail(w, &metav1.Status{Code: http.StatusServiceUnavailable, Reason: metav1.StatusReasonServiceUnavailable, Message: "server closing"})
		return
	case expired:
		status = expiredStatus(rv, set.rv)
	default:
		a.watches[pw] = struct{}{}
		close(a.watching)
		a.watching = make(chan struct{})
	}
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.watches, pw)
		a.mu.Unlock()
	}()
	switch {
	case initial:
		a.streams.Add(1)
	case expired:
		a.watchesN.Add(1)
		a.expiredWatches.Add(1)
	default:
		a.watchesN.Add(1)
	}

	w.Header().Set("Content-Type", MediaProtobuf+";stream=watch")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	bw := bufio.NewWriterSize(w, 64<<10)
	flush := func() error {
		if err := bw.Flush(); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	if expired {
		_ = a.writeObjectEvent(bw, watch.Error, status)
		_ = flush()
		return
	}
	if initial || rv == 0 {
		// Synthetic ADDED events of the current state, as the API server
		// starts a watch from "" or "0" or a streaming list.
		var head [64]byte
		for _, p := range set.pods {
			if _, err := bw.Write(podEventHead(head[:0], watch.Added, len(p))); err != nil {
				return
			}
			if _, err := bw.Write(p); err != nil {
				return
			}
		}
	}
	if initial {
		bookmark := &v1.Pod{ObjectMeta: metav1.ObjectMeta{
			ResourceVersion: strconv.Itoa(set.rv),
			Annotations:     map[string]string{metav1.InitialEventsAnnotationKey: "true"},
		}}
		if err := a.writeObjectEvent(bw, watch.Bookmark, bookmark); err != nil {
			return
		}
	}
	if flush() != nil {
		return
	}
	select {
	case <-pw.expire:
		_ = a.writeObjectEvent(bw, watch.Error, pw.status)
		_ = flush()
	case <-pw.stop:
	case <-timeout:
	case <-r.Context().Done():
	}
}

// writeObjectEvent writes one watch event carrying obj, encoded by the
// server's protobuf encoder.
func (a *PodAPI) writeObjectEvent(w io.Writer, t watch.EventType, obj runtime.Object) error {
	embedded, err := runtime.Encode(a.codec, obj)
	if err != nil {
		return err
	}
	ev := appendField(nil, 1, []byte(t))
	ev = appendField(ev, 2, appendField(nil, 1, embedded))
	var frame [4]byte
	binary.BigEndian.PutUint32(frame[:], uint32(len(ev)))
	if _, err := w.Write(frame[:]); err != nil {
		return err
	}
	_, err = w.Write(ev)
	return err
}

// Protobuf framing. The API server's protobuf serializer writes an object
// as the magic prefix "k8s\x00" followed by a runtime.Unknown message
// (TypeMeta 1: apiVersion 1, kind 2; Raw 2: the object's own message). A
// watch stream is a sequence of frames, each a 4-byte big-endian length
// followed by a metav1.WatchEvent message (Type 1; Object 2: a
// RawExtension whose Raw 1 holds the encoded object). The helpers below
// write those envelopes around pods encoded once, so that serving a list
// or a stream copies bytes and encodes nothing.

var protoMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// appendFieldHead appends the tag of length-delimited field num and the
// length n.
func appendFieldHead(b []byte, num int, n int) []byte {
	b = binary.AppendUvarint(b, uint64(num)<<3|2)
	return binary.AppendUvarint(b, uint64(n))
}

// appendField appends length-delimited field num holding data.
func appendField(b []byte, num int, data []byte) []byte {
	return append(appendFieldHead(b, num, len(data)), data...)
}

// fieldHeadLen is the size of the tag and length of a length-delimited
// field (number below 16) of n bytes.
func fieldHeadLen(n int) int {
	return 1 + len(binary.AppendUvarint(nil, uint64(n)))
}

// fieldLen is the size of a length-delimited field (number below 16) of n
// bytes.
func fieldLen(n int) int { return fieldHeadLen(n) + n }

// typeMetaV1 returns the runtime.TypeMeta message of v1 kind.
func typeMetaV1(kind string) []byte {
	return appendField(appendField(nil, 1, []byte("v1")), 2, []byte(kind))
}

// protoEnvelopeHead appends the magic prefix and the runtime.Unknown
// message of a v1 kind whose Raw holds rawLen bytes, up to (not including)
// those bytes, which end the message.
func protoEnvelopeHead(b []byte, kind string, rawLen int) []byte {
	b = append(b, protoMagic...)
	b = appendField(b, 1, typeMetaV1(kind))
	return appendFieldHead(b, 2, rawLen)
}

// protoEnvelopeLen is the size of what protoEnvelopeHead appends plus the
// rawLen bytes.
func protoEnvelopeLen(kind string, rawLen int) int {
	return len(protoMagic) + fieldLen(len(typeMetaV1(kind))) + fieldHeadLen(rawLen) + rawLen
}

// podEventHead appends the frame of a watch event of type t carrying a v1
// Pod whose own message is podLen bytes, up to (not including) those
// bytes, which end the frame.
func podEventHead(b []byte, t watch.EventType, podLen int) []byte {
	embedded := protoEnvelopeLen("Pod", podLen)
	rawExt := fieldLen(embedded)
	event := fieldLen(len(t)) + fieldLen(rawExt)
	b = binary.BigEndian.AppendUint32(b, uint32(event))
	b = appendField(b, 1, []byte(t))
	b = appendFieldHead(b, 2, rawExt)
	b = appendFieldHead(b, 1, embedded)
	return protoEnvelopeHead(b, "Pod", podLen)
}
