// Package health says, per informer and per factory, whether kinformer's
// informers serve a usable cache: Ready, Degraded or Failing, with the
// reason (forbidden, not found, throttled, stale beyond a threshold, never
// synced, ...). It reads cache.GetInformerStatus and keeps no state of its
// own, so a check costs what a status read costs and can run at every
// probe. NewHandler serves a check as an http.Handler for Kubernetes
// readiness and liveness probes, with a policy that decides which informers
// and states fail the probe. kinformerprom exports the same states as
// Prometheus metrics. kinformer extension: client-go has only HasSynced.
package health

import (
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache"
)

// State is how usable an informer's cache is. The zero value is no state
// (what Policy.FailOn leaves to its default); the states order by
// severity: Ready < Degraded < Failing.
type State int

const (
	// Ready: the informer has synced, its last list or watch succeeded
	// and its cache is not stale beyond the threshold.
	Ready State = iota + 1
	// Degraded: the informer has synced and its cache serves, but it is
	// not keeping up: its list or watch fails since its last success
	// (forbidden, throttled, ...), or no resourceVersion the server
	// confirmed as current was reached for longer than the stale
	// threshold.
	Degraded
	// Failing: the informer has no usable cache: not started, stopped, or
	// not synced yet (still listing, or its list is refused).
	Failing
)

// String returns "ready", "degraded", "failing", or "unknown" for another
// value. These are the values of the JSON bodies and of metric labels.
func (s State) String() string {
	switch s {
	case Ready:
		return "ready"
	case Degraded:
		return "degraded"
	case Failing:
		return "failing"
	}
	return "unknown"
}

// MarshalText encodes the state as its String.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes what MarshalText encodes.
func (s *State) UnmarshalText(text []byte) error {
	for _, state := range States() {
		if string(text) == state.String() {
			*s = state
			return nil
		}
	}
	return fmt.Errorf("health: unknown state %q", text)
}

// States returns every State, from Ready to Failing. The slice is new on
// every call.
func States() []State { return []State{Ready, Degraded, Failing} }

// Reason says why an informer is not Ready. The values are stable: they are
// used in JSON bodies and as metric label values.
type Reason string

// The reasons.
const (
	// ReasonNone is the reason of a Ready informer.
	ReasonNone Reason = ""
	// ReasonNotStarted: the informer was built but not started (Failing).
	ReasonNotStarted Reason = "not_started"
	// ReasonStopped: the informer was stopped (Failing).
	ReasonStopped Reason = "stopped"
	// ReasonNeverSynced: the informer has not synced and its lists have
	// not failed (yet): it is still listing (Failing).
	ReasonNeverSynced Reason = "never_synced"
	// ReasonForbidden: the last list or watch was refused with 403, RBAC
	// does not allow it.
	ReasonForbidden Reason = "forbidden"
	// ReasonUnauthorized: the last list or watch was refused with 401, the
	// credentials are not accepted.
	ReasonUnauthorized Reason = "unauthorized"
	// ReasonNotFound: the last list or watch got 404 (or 405), the
	// resource is not served (a CustomResourceDefinition not installed or
	// deleted).
	ReasonNotFound Reason = "not_found"
	// ReasonThrottled: the last list or watch got 429 (API Priority and
	// Fairness, or --max-requests-inflight).
	ReasonThrottled Reason = "throttled"
	// ReasonError: the last list or watch failed for another reason
	// (server errors, timeouts, refused connections, ...).
	ReasonError Reason = "error"
	// ReasonStale: the cache has not reached a resourceVersion the server
	// confirmed as current for longer than the stale threshold
	// (Degraded; see cache.InformerStatus.Staleness).
	ReasonStale Reason = "stale"
)

// Reasons returns every Reason but ReasonNone, in a fixed order. The slice
// is new on every call.
func Reasons() []Reason {
	return []Reason{ReasonNotStarted, ReasonStopped, ReasonNeverSynced, ReasonForbidden, ReasonUnauthorized, ReasonNotFound, ReasonThrottled, ReasonError, ReasonStale}
}

// DefaultStaleAfter is the stale threshold of Options whose StaleAfter is
// zero: long enough for a watch cache's bookmarks (about one a minute) and
// for the staleness probe (cache.DefaultStalenessProbeInterval, 2 minutes)
// to confirm a healthy cache twice over.
const DefaultStaleAfter = 5 * time.Minute

// Options configures how statuses turn into health. The zero value is
// ready to use.
type Options struct {
	// StaleAfter is the staleness (cache.InformerStatus.Staleness) beyond
	// which a synced informer is Degraded with ReasonStale. Zero means
	// DefaultStaleAfter; negative never marks an informer stale.
	StaleAfter time.Duration
	// Now returns the current time; nil means time.Now. The staleness is
	// measured with the informer's clock, so both must agree (tests use
	// the same fake clock for both).
	Now func() time.Time
}

func (o Options) staleAfter() time.Duration {
	if o.StaleAfter == 0 {
		return DefaultStaleAfter
	}
	return o.StaleAfter
}

func (o Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Informer is the health of one informer.
type Informer struct {
	// ID names the informer in bodies and logs: its metrics name when it
	// has one, else its resource ("pods.v1", "deployments.v1.apps"), else
	// its Go type.
	ID string `json:"informer"`
	// Name is the informer's metrics name (cache.InformerName), or "".
	Name string `json:"name,omitempty"`
	// Type is the Go type of the informer's objects, e.g. "*v1.Pod".
	Type string `json:"type"`
	// Resource is the informer's group/version/resource when known.
	Resource schema.GroupVersionResource `json:"-"`
	// State and Reason say how usable the cache is and why.
	State  State  `json:"state"`
	Reason Reason `json:"reason,omitempty"`
	// Message explains Reason for a person: the list or watch error, or the
	// staleness; "" when Ready. The error's text tells the cluster's
	// address, namespaces, selectors and service account: NewHandler's
	// bodies replace it with the reason unless Policy.Detail is set.
	Message string `json:"message,omitempty"`
	// Synced is HasSynced.
	Synced bool `json:"synced"`
	// Staleness is cache.InformerStatus.Staleness at the time of the
	// check, StalenessSeconds the same in seconds (for the JSON body).
	Staleness        time.Duration `json:"-"`
	StalenessSeconds float64       `json:"stalenessSeconds"`

	// fromError is set when Message holds a list or watch error's text.
	fromError bool
}

// Evaluate returns the health of the informer whose status is st at now,
// under opts (opts.Now is not used). The rules, first match wins:
//
//   - not started: Failing, ReasonNotStarted; stopped: Failing,
//     ReasonStopped;
//   - not synced: Failing, with the reason of the last list or watch error
//     when there is one (a refused initial LIST makes the informer Failing
//     with ReasonForbidden as soon as it is refused, before any retry),
//     else ReasonNeverSynced;
//   - synced, and the last list or watch error is more recent than the
//     last successful list and than the last watch event or bookmark:
//     Degraded with the error's reason;
//   - synced, and staler than the threshold: Degraded, ReasonStale;
//   - otherwise Ready.
//
// An error is current until a list succeeds or a watch event or bookmark
// arrives after it: an informer whose watch was reopened after a 429 stays
// Degraded until its next event or bookmark (about a minute on an idle
// resource behind a watch cache).
//
// Errors map to reasons with k8s.io/apimachinery/pkg/api/errors (wrapped
// errors included): 403 forbidden, 401 unauthorized, 404 and 405 not found,
// 429 throttled, anything else error.
func Evaluate(st cache.InformerStatus, now time.Time, opts Options) Informer {
	h := Informer{
		ID:        informerID(st),
		Name:      st.Name,
		Type:      st.Type,
		Resource:  st.Resource,
		State:     Ready,
		Synced:    st.Synced,
		Staleness: st.Staleness(now),
	}
	h.StalenessSeconds = h.Staleness.Seconds()
	currentErr := st.LastError
	if currentErr != nil && (!st.LastErrorTime.After(st.LastList) || !st.LastErrorTime.After(st.LastWatchEvent)) {
		currentErr = nil
	}
	switch {
	case !st.Started:
		h.State, h.Reason, h.Message = Failing, ReasonNotStarted, "the informer has not been started"
	case st.Stopped:
		h.State, h.Reason, h.Message = Failing, ReasonStopped, "the informer has stopped"
	case !st.Synced && st.LastError != nil && st.LastErrorTime.After(st.LastList):
		h.State, h.Reason, h.Message = Failing, reasonFor(st.LastError), "not synced: "+st.LastError.Error()
		h.fromError = true
	case !st.Synced:
		h.State, h.Reason = Failing, ReasonNeverSynced
		h.Message = fmt.Sprintf("not synced yet, %s after start", h.Staleness.Round(time.Millisecond))
	case currentErr != nil:
		h.State, h.Reason, h.Message = Degraded, reasonFor(currentErr), currentErr.Error()
		h.fromError = true
	case opts.staleAfter() > 0 && h.Staleness > opts.staleAfter():
		h.State, h.Reason = Degraded, ReasonStale
		if st.Confirmed.IsZero() {
			h.Message = fmt.Sprintf("no resourceVersion confirmed as current since the start, %s ago (threshold %s)", h.Staleness.Round(time.Second), opts.staleAfter())
		} else {
			h.Message = fmt.Sprintf("the cache last reached a resourceVersion confirmed as current (%s) %s ago (threshold %s)",
				st.ConfirmedResourceVersion, h.Staleness.Round(time.Second), opts.staleAfter())
		}
	}
	return h
}

// informerID names an informer: its metrics name, else its resource, else
// its type.
func informerID(st cache.InformerStatus) string {
	switch {
	case st.Name != "":
		return st.Name
	case st.Resource.Resource != "":
		id := st.Resource.Resource + "." + st.Resource.Version
		if st.Resource.Group != "" {
			id += "." + st.Resource.Group
		}
		return id
	}
	return st.Type
}

// ReasonFor maps a list or watch error to its Reason, as Evaluate does (403
// forbidden, 401 unauthorized, 404 and 405 not found, 429 throttled,
// anything else error; wrapped errors included); nil maps to ReasonNone.
func ReasonFor(err error) Reason {
	if err == nil {
		return ReasonNone
	}
	return reasonFor(err)
}

// reasonFor maps a list or watch error to its Reason.
func reasonFor(err error) Reason {
	switch {
	case apierrors.IsForbidden(err):
		return ReasonForbidden
	case apierrors.IsUnauthorized(err):
		return ReasonUnauthorized
	case apierrors.IsNotFound(err), apierrors.IsMethodNotSupported(err):
		return ReasonNotFound
	case apierrors.IsTooManyRequests(err):
		return ReasonThrottled
	}
	return ReasonError
}

// Report is the health of a set of informers: of one factory, or of every
// source of a Check.
type Report struct {
	// State is the worst State of Informers; Ready when there are none.
	State State `json:"state"`
	// Informers are the informers checked, in the order of their sources
	// (a factory's in its ListInformers order).
	Informers []Informer `json:"informers"`
}

// Unhealthy returns the informers of r that are not Ready.
func (r Report) Unhealthy() []Informer {
	var out []Informer
	for _, h := range r.Informers {
		if h.State != Ready {
			out = append(out, h)
		}
	}
	return out
}

// Check evaluates every informer of sources at opts' now: factories of this
// module (anything implementing cache.InformerSource: the typed, dynamic and
// metadata factories), whose informers built so far are listed now, and
// informers built by kinformer's cache package. An informer given twice is
// reported once. It fails, without a report, for a source of another type.
// Safe for concurrent use; it only reads.
func Check(opts Options, sources ...any) (Report, error) {
	list, err := informerLister(sources)
	if err != nil {
		return Report{}, err
	}
	return check(opts, list()), nil
}

func check(opts Options, informers []cache.SharedIndexInformer) Report {
	now := opts.now()
	r := Report{State: Ready, Informers: make([]Informer, 0, len(informers))}
	for _, informer := range informers {
		st, ok := cache.GetInformerStatus(informer)
		if !ok {
			continue
		}
		h := Evaluate(st, now, opts)
		r.Informers = append(r.Informers, h)
		r.State = max(r.State, h.State)
	}
	return r
}

// informerLister checks sources and returns a function that lists their
// informers, each once.
func informerLister(sources []any) (func() []cache.SharedIndexInformer, error) {
	var lists []func() []cache.SharedIndexInformer
	for _, source := range sources {
		switch s := source.(type) {
		case cache.InformerSource:
			lists = append(lists, s.ListInformers)
		case cache.SharedIndexInformer:
			if _, ok := cache.GetInformerStatus(s); !ok {
				return nil, fmt.Errorf("health: informer of type %T was not built by kinformer's cache package", source)
			}
			lists = append(lists, func() []cache.SharedIndexInformer { return []cache.SharedIndexInformer{s} })
		default:
			return nil, fmt.Errorf("health: cannot check a %T: want a kinformer informer factory or a cache.SharedIndexInformer", source)
		}
	}
	return func() []cache.SharedIndexInformer {
		var out []cache.SharedIndexInformer
		seen := map[cache.SharedIndexInformer]bool{}
		for _, list := range lists {
			for _, informer := range list() {
				if informer == nil || seen[informer] {
					continue
				}
				seen[informer] = true
				out = append(out, informer)
			}
		}
		return out
	}, nil
}

// Matches reports whether selector names the informer h: its ID, its
// metrics name, its Go type ("*v1.Pod"), its resource ("pods"), or its
// resource with version and group as in ID ("pods.v1",
// "deployments.v1.apps"); case-sensitive.
func (h Informer) Matches(selector string) bool {
	if selector == "" {
		return false
	}
	if selector == h.ID || selector == h.Name || selector == h.Type {
		return true
	}
	res := h.Resource
	if res.Resource == "" {
		return false
	}
	if selector == res.Resource {
		return true
	}
	full := res.Resource + "." + res.Version
	if res.Group != "" {
		full += "." + res.Group
	}
	return selector == full
}

// errNoSources is NewHandler's error without sources.
var errNoSources = errors.New("health: no informers or factories to check")
