package health

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/kinformer/kinformer/cache"
)

// Policy decides which informers, in which states, fail a probe served by
// NewHandler. The zero value fails the probe when any informer is Failing
// (not started, stopped, not synced: what a readiness probe wants).
type Policy struct {
	// FailOn is the least severe State that fails the probe: Failing (the
	// default, when zero) or Degraded (then a synced informer whose list
	// or watch fails, or that is stale, fails it too). Ready fails on
	// nothing.
	FailOn State
	// Informers, when not empty, restricts the informers that can fail the
	// probe to those one of the selectors names (see Informer.Matches:
	// metrics name, Go type such as "*v1.Pod", resource such as "pods" or
	// "deployments.v1.apps"); the others are still reported in the body.
	// Empty means every informer.
	Informers []string
	// Reasons, when not empty, restricts the reasons that fail the probe
	// (for example only ReasonStale for a liveness probe that restarts a
	// process whose cache stopped moving). Empty means every reason.
	Reasons []Reason
	// Options are the options of the checks (the stale threshold).
	Options Options
	// Detail, when true, makes NewHandler's bodies carry the text of the
	// list or watch errors in each informer's message, as Evaluate returns
	// it. The text tells whoever reads the body the API server's address,
	// namespaces, field selectors (the names of the Secrets watched), the
	// service account and the permissions it lacks; set Detail only on a
	// listener that untrusted callers cannot reach. false (the default):
	// a message names the reason, never the error text.
	Detail bool
}

func (p Policy) failOn() State {
	if p.FailOn == 0 {
		return Failing
	}
	return p.FailOn
}

// Fails reports whether h fails a probe under p.
func (p Policy) Fails(h Informer) bool {
	if p.failOn() == Ready || h.State < p.failOn() {
		return false
	}
	if len(p.Reasons) > 0 && !slices.Contains(p.Reasons, h.Reason) {
		return false
	}
	if len(p.Informers) == 0 {
		return true
	}
	for _, sel := range p.Informers {
		if h.Matches(sel) {
			return true
		}
	}
	return false
}

// ProbeResult is the body NewHandler's handler writes, as JSON.
type ProbeResult struct {
	// OK is whether the probe passes: no informer fails it.
	OK bool `json:"ok"`
	// State is the worst state over every informer (failing the probe or
	// not).
	State State `json:"state"`
	// Failed are the informers that fail the probe: which, and why
	// (reason and message).
	Failed []Informer `json:"failed"`
	// Informers are all the informers checked.
	Informers []Informer `json:"informers"`
}

// Evaluate applies p to r.
func (p Policy) Evaluate(r Report) ProbeResult {
	res := ProbeResult{OK: true, State: r.State, Failed: []Informer{}, Informers: r.Informers}
	if res.Informers == nil {
		res.Informers = []Informer{}
	}
	for _, h := range r.Informers {
		if p.Fails(h) {
			res.OK = false
			res.Failed = append(res.Failed, h)
		}
	}
	return res
}

// NewHandler returns an http.Handler for a readiness or liveness probe over
// the informers of sources (factories of this module and informers built by
// its cache package, as for Check; a factory's informers are listed afresh
// at every request, so informers it builds later are included). Every
// request (any method, any path) checks them all and answers 200 when none
// fails policy, 503 Service Unavailable when one does, with a JSON
// ProbeResult body (Content-Type application/json):
//
//	{"ok":false,"state":"failing",
//	 "failed":[{"informer":"configmaps.v1","type":"*v1.ConfigMap","state":"failing","reason":"forbidden",
//	            "message":"not synced: failed to list *v1.ConfigMap: configmaps is forbidden: User \"bob\" cannot list ...","synced":false,"stalenessSeconds":3.2}],
//	 "informers":[...every informer, the same fields...]}
//
// Unless policy.Detail is set, a message gives the reason of a failure and
// not its error text ("not synced: the last list or watch failed
// (forbidden)"): a probe port is often reachable by anyone who reaches the
// pod. A HEAD request gets the status code alone. Use one handler per policy:
//
//	ready, err := health.NewHandler(health.Policy{}, factory) // 503 while any informer is failing
//	live, err := health.NewHandler(health.Policy{FailOn: health.Degraded,
//		Reasons: []health.Reason{health.ReasonStale}, Informers: []string{"pods"}}, factory) // 503 when the pod cache is stuck
//	mux.Handle("/readyz", ready)
//	mux.Handle("/livez", live)
//
// It fails when sources is empty or holds a value of another type. The
// handler is safe for concurrent use; it only reads the informers' status.
func NewHandler(policy Policy, sources ...any) (http.Handler, error) {
	if len(sources) == 0 {
		return nil, errNoSources
	}
	list, err := informerLister(sources)
	if err != nil {
		return nil, err
	}
	return &handler{policy: policy, list: list}, nil
}

type handler struct {
	policy Policy
	list   func() []cache.SharedIndexInformer
}

// ServeHTTP implements http.Handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	res := h.policy.Evaluate(check(h.policy.Options, h.list()))
	if !h.policy.Detail {
		res = res.withoutErrorText()
	}
	status := http.StatusOK
	if !res.OK {
		status = http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if req.Method == http.MethodHead {
		return
	}
	enc := json.NewEncoder(w)
	_ = enc.Encode(res) // the client went away: nothing to do
}

// withoutErrorText returns r with the message of every informer whose reason
// comes from a list or watch error replaced by one that names the reason
// only (see Policy.Detail). r's slices are not changed.
func (r ProbeResult) withoutErrorText() ProbeResult {
	r.Failed = informersWithoutErrorText(r.Failed)
	r.Informers = informersWithoutErrorText(r.Informers)
	return r
}

func informersWithoutErrorText(in []Informer) []Informer {
	out := make([]Informer, len(in))
	for i, h := range in {
		if h.fromError {
			if h.State == Failing {
				h.Message = fmt.Sprintf("not synced: the last list or watch failed (%s)", h.Reason)
			} else {
				h.Message = fmt.Sprintf("the list or watch fails since its last success (%s)", h.Reason)
			}
		}
		out[i] = h
	}
	return out
}
