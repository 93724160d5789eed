package faultproxy

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Kind names a fault the proxy can inject. Its value is what Counts reports.
type Kind string

const (
	// Delay waits Fault.Delay before forwarding the request.
	Delay Kind = "delay"
	// Gone answers 410 Expired: as an HTTP 410 with a Status body for a LIST or GET (what a
	// LIST with an expired continue token or resourceVersion gets), and as a 200 followed by
	// one ERROR watch event carrying the 410 Status for a WATCH (what a watch from a
	// compacted resourceVersion gets).
	Gone Kind = "410-gone"
	// TooManyRequests answers 429 with a Status and a Retry-After header of
	// Fault.RetryAfterSeconds (at least 1).
	TooManyRequests Kind = "429-too-many-requests"
	// InternalError answers 500 with a Status.
	InternalError Kind = "500-internal-error"
	// ServiceUnavailable answers 503 with a Status, and a Retry-After header when
	// Fault.RetryAfterSeconds is set.
	ServiceUnavailable Kind = "503-service-unavailable"
	// CloseConn closes the client's TCP connection: at once for a request that is not a
	// WATCH, and after forwarding Fault.AfterFrames events of a WATCH. Over HTTP/2 every
	// request multiplexed on that connection is cut with it, as when a load balancer drops
	// a connection.
	CloseConn Kind = "close-connection"
	// BlackHole accepts the request and then sends nothing (Fault.SendHeaders: a 200 with
	// the headers of a watch first) for Fault.Hold, never asking the server. When the hold
	// ends, a response that sent headers ends cleanly and one that did not is aborted. A
	// zero Hold lasts until the client gives up or the proxy closes. With
	// Fault.AfterBookmark a WATCH is forwarded up to its first periodic bookmark and goes
	// silent after it instead.
	BlackHole Kind = "black-hole"
	// CutFrame forwards Fault.AfterFrames events of a WATCH, then the first half of the next
	// one, then ends the response. On a LIST it forwards the first half of the body.
	CutFrame Kind = "cut-frame"
	// Garbage forwards Fault.AfterFrames events of a WATCH, then bytes that decode as no
	// frame of the stream's encoding (JSON or protobuf), then ends the response. On a LIST
	// the whole body is garbage.
	Garbage Kind = "garbage"
	// WrongType inserts, after Fault.AfterFrames events of a WATCH and before the next one,
	// a MODIFIED event whose object is of another kind (a ConfigMap, or a Secret when the
	// stream carries ConfigMaps). Only WATCH requests.
	WrongType Kind = "wrong-type"
	// NoObject inserts, like WrongType, an ADDED event without an object. Only WATCH
	// requests.
	NoObject Kind = "no-object"
	// BookmarkNoRV inserts, like WrongType, a BOOKMARK event whose object (of the stream's
	// kind) has no resourceVersion. Only WATCH requests.
	BookmarkNoRV Kind = "bookmark-without-rv"
	// NoWatchList answers a streaming list (a WATCH with sendInitialEvents=true) as a
	// kube-apiserver with the WatchList feature off does: 422 Invalid, sendInitialEvents
	// forbidden. Other requests pass through untouched, and are not counted.
	NoWatchList Kind = "no-watch-list"
)

// AllKinds lists every Kind, in a fixed order.
var AllKinds = []Kind{Delay, Gone, TooManyRequests, InternalError, ServiceUnavailable, CloseConn, BlackHole,
	CutFrame, Garbage, WrongType, NoObject, BookmarkNoRV, NoWatchList}

// Verb classifies a request.
type Verb int

const (
	// AnyVerb matches every request.
	AnyVerb Verb = iota
	// List is a GET of a collection without watch.
	List
	// Watch is a GET with watch=true (including streaming lists, sendInitialEvents=true).
	Watch
	// Get is a GET of one named object.
	Get
	// Write is any other method (POST, PUT, PATCH, DELETE).
	Write
)

// String returns the verb's name.
func (v Verb) String() string {
	switch v {
	case List:
		return "list"
	case Watch:
		return "watch"
	case Get:
		return "get"
	case Write:
		return "write"
	}
	return "any"
}

// RequestInfo is what the proxy understood of a request to the Kubernetes API.
type RequestInfo struct {
	Method    string
	Verb      Verb
	Group     string // "" for the core group
	Version   string
	Resource  string // plural, lower case; "" for non-resource paths (/version, /readyz, …)
	Namespace string
	Name      string
	Query     url.Values
}

// parseRequest classifies r by its path (/api/v1/…, /apis/group/version/…) and query.
func parseRequest(r *http.Request) RequestInfo {
	info := RequestInfo{Method: r.Method, Query: r.URL.Query()}
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		info.Version, segs = segs[1], segs[2:]
	case len(segs) >= 3 && segs[0] == "apis":
		info.Group, info.Version, segs = segs[1], segs[2], segs[3:]
	default:
		segs = nil
	}
	watchPath := false
	if len(segs) > 0 && segs[0] == "watch" {
		watchPath, segs = true, segs[1:]
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		info.Namespace, segs = segs[1], segs[2:]
	}
	if len(segs) > 0 {
		info.Resource = segs[0]
	}
	if len(segs) > 1 {
		info.Name = segs[1]
	}
	w := info.Query.Get("watch")
	switch {
	case r.Method != http.MethodGet:
		info.Verb = Write
	case watchPath || w == "true" || w == "1":
		info.Verb = Watch
	case info.Name != "":
		info.Verb = Get
	default:
		info.Verb = List
	}
	return info
}

// Match selects requests. Zero fields match everything.
type Match struct {
	// Verb, when not AnyVerb, is the only verb matched.
	Verb Verb
	// Resource, when set, is the only resource (plural) matched.
	Resource string
	// Namespace, when set, is the only namespace matched.
	Namespace string
	// Func, when not nil, must also return true.
	Func func(RequestInfo) bool
	// Probability, when in (0, 1), makes a request that matches the fields above match
	// only with this probability, drawn from the proxy's seeded source (Options.Seed).
	Probability float64
}

func (m *Match) matches(info RequestInfo) bool {
	if m.Verb != AnyVerb && m.Verb != info.Verb {
		return false
	}
	if m.Resource != "" && m.Resource != info.Resource {
		return false
	}
	if m.Namespace != "" && m.Namespace != info.Namespace {
		return false
	}
	return m.Func == nil || m.Func(info)
}

// Fault is what happens to a matched request.
type Fault struct {
	Kind Kind
	// Delay is the wait of a Delay fault.
	Delay time.Duration
	// RetryAfterSeconds is the Retry-After of 429 (at least 1) and 503 (none when 0).
	RetryAfterSeconds int
	// AfterFrames is how many complete watch events are forwarded before a mid-stream
	// fault (CloseConn on a watch, CutFrame, Garbage, WrongType, NoObject, BookmarkNoRV).
	AfterFrames int
	// Hold is how long a BlackHole lasts; zero means until the client gives up or the
	// proxy closes.
	Hold time.Duration
	// SendHeaders makes a BlackHole send a 200 with watch headers before going silent.
	SendHeaders bool
	// AfterBookmark makes a BlackHole on a WATCH forward the server's stream up to and
	// including its first periodic bookmark (a BOOKMARK event without the
	// k8s.io/initial-events-end annotation), then close the server's stream and send the
	// client nothing more for Hold, as a connection that stops delivering once it has
	// shown to be healthy; the response then ends cleanly. The fault is counted when the
	// silence begins; a stream that ends before such a bookmark is passed on whole and not
	// counted. Requests other than WATCH get the plain BlackHole.
	AfterBookmark bool
}

// Rule injects Fault into requests that Match selects.
type Rule struct {
	Match Match
	Fault Fault
	// Times is how many requests the rule applies to; zero means every matching request
	// until the rule is removed.
	Times int
}

// Injection is a rule installed in a proxy. Its methods are safe for concurrent use.
type Injection struct {
	rule  Rule
	proxy *Proxy
	// fired and removed are guarded by the proxy's mutex.
	fired   int
	removed bool
	done    chan struct{} // closed when Times requests were faulted or the rule removed
	once    sync.Once
}

// Fired returns how many requests the rule has faulted so far.
func (in *Injection) Fired() int {
	in.proxy.mu.Lock()
	defer in.proxy.mu.Unlock()
	return in.fired
}

// Done is closed once the rule has faulted Times requests, or was removed.
func (in *Injection) Done() <-chan struct{} { return in.done }

// Remove uninstalls the rule; requests already faulted keep their fault. Idempotent.
func (in *Injection) Remove() {
	in.proxy.mu.Lock()
	defer in.proxy.mu.Unlock()
	in.proxy.removeLocked(in)
}

func (in *Injection) finish() { in.once.Do(func() { close(in.done) }) }
