package soak

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	fp "github.com/kinformer/kinformer/internal/faultproxy"
)

// faultKind is one kind of fault the scheduler injects. inject installs it (or performs it,
// for the server-side ones) and returns a faultEffect telling whether it has taken effect.
type faultKind struct {
	name   string
	inject func(run *soakRun, ctx context.Context, rnd *rand.Rand) (faultEffect, error)
}

// outage reports whether the fault takes a server down: from the start of inject until it
// returns, which it does when the server is ready again.
func (f faultKind) outage() bool {
	return f.name == "restart-kube-apiserver" || f.name == "restart-etcd"
}

// faultEffect tells whether an injected fault took effect, and which resource's informer to
// kick again while it has not (its rules wait for a request of that resource).
type faultEffect struct {
	fired    func() bool
	resource string
}

var alreadyFired = faultEffect{fired: func() bool { return true }}

func asksInitialEvents(i fp.RequestInfo) bool { return i.Query.Get("sendInitialEvents") == "true" }

// pick draws one of the resources that was targeted least so far (each fault costs its
// informer a backoff, and backoffs grow until two minutes pass without a failure, so
// faults are spread evenly); typedOnly leaves out the dynamic informer, which stores
// objects of any kind; listOnly keeps the resources served by LIST.
func (run *soakRun) pick(rnd *rand.Rand, typedOnly, listOnly bool) string {
	var names []string
	least := -1
	for _, r := range run.res {
		if (typedOnly && !r.typed) || (listOnly && !r.listMode) {
			continue
		}
		switch n := run.targeted[r.name]; {
		case least < 0 || n < least:
			least, names = n, []string{r.name}
		case n == least:
			names = append(names, r.name)
		}
	}
	name := names[rnd.IntN(len(names))]
	run.targeted[name]++
	return name
}

// forceListMode makes the resources served by LIST (pods and configmaps) list with LIST:
// the proxy answers their streaming lists as a server without the WatchList feature does,
// so their Reflectors fall back to LIST on every list, as client-go's do. The other
// resources keep the streaming list. Rules are cleared between the soak's phases: call it
// again after each Clear.
func (run *soakRun) forceListMode() {
	for _, r := range run.res {
		if r.listMode {
			run.proxy.Inject(fp.Rule{Match: fp.Match{Verb: fp.Watch, Resource: r.name, Func: asksInitialEvents}, Fault: fp.Fault{Kind: fp.NoWatchList}})
		}
	}
}

// kick cuts the open watches of resource, so that its informer opens a new one, which
// meets the rules installed before.
func (run *soakRun) kick(resource string) {
	run.proxy.CutActive(fp.Match{Verb: fp.Watch, Resource: resource})
}

// onWatch installs f for the next watch of a resource and kicks its informer.
func onWatch(typedOnly bool, f fp.Fault) func(run *soakRun, ctx context.Context, rnd *rand.Rand) (faultEffect, error) {
	return func(run *soakRun, _ context.Context, rnd *rand.Rand) (faultEffect, error) {
		res := run.pick(rnd, typedOnly, false)
		f := f
		if f.AfterFrames < 0 {
			f.AfterFrames = rnd.IntN(4)
		}
		in := run.proxy.Inject(fp.Rule{Match: fp.Match{Verb: fp.Watch, Resource: res}, Fault: f, Times: 1})
		run.kick(res)
		return faultEffect{fired: func() bool { return in.Fired() > 0 }, resource: res}, nil
	}
}

// onRelist installs the list rules for a resource served by LIST, then makes its informer
// relist (a 410 on its next watch, which it is kicked into opening). fired reports the
// last rule. resource "" draws one of the resources served by LIST.
func onRelist(resource string, rules ...fp.Rule) func(run *soakRun, ctx context.Context, rnd *rand.Rand) (faultEffect, error) {
	return func(run *soakRun, _ context.Context, rnd *rand.Rand) (faultEffect, error) {
		res := resource
		if res == "" {
			res = run.pick(rnd, true, true)
		} else {
			run.targeted[res]++
		}
		var last *fp.Injection
		for _, rule := range rules {
			rule.Match.Verb, rule.Match.Resource, rule.Times = fp.List, res, 1
			last = run.proxy.Inject(rule)
		}
		provoke := run.proxy.Inject(fp.Rule{Match: fp.Match{Verb: fp.Watch, Resource: res}, Fault: fp.Fault{Kind: fp.Gone}, Times: 1})
		run.kick(res)
		return faultEffect{fired: func() bool {
			if last.Fired() > 0 {
				return true
			}
			if provoke.Fired() > 0 {
				// The relist came and went without meeting the rule (it was served
				// otherwise): provoke another one.
				provoke = run.proxy.Inject(fp.Rule{Match: fp.Match{Verb: fp.Watch, Resource: res}, Fault: fp.Fault{Kind: fp.Gone}, Times: 1})
			}
			return false
		}, resource: res}, nil
	}
}

// faultKinds is every fault the soak injects.
var faultKinds = []faultKind{
	{"watch-410-gone", onWatch(false, fp.Fault{Kind: fp.Gone})},
	{"watch-429-retry-after", onWatch(false, fp.Fault{Kind: fp.TooManyRequests, RetryAfterSeconds: 1})},
	{"watch-500", onWatch(false, fp.Fault{Kind: fp.InternalError})},
	{"watch-503", onWatch(false, fp.Fault{Kind: fp.ServiceUnavailable})},
	{"watch-delay-2s", onWatch(false, fp.Fault{Kind: fp.Delay, Delay: 2 * time.Second})},
	{"watch-connection-closed-mid-stream", onWatch(false, fp.Fault{Kind: fp.CloseConn, AfterFrames: -1})},
	{"watch-black-hole-after-headers", onWatch(false, fp.Fault{Kind: fp.BlackHole, SendHeaders: true, Hold: 3 * time.Second})},
	{"watch-black-hole-silent", onWatch(false, fp.Fault{Kind: fp.BlackHole, Hold: 3 * time.Second})},
	{"watch-frame-cut-in-half", onWatch(false, fp.Fault{Kind: fp.CutFrame, AfterFrames: -1})},
	{"watch-garbage-bytes", onWatch(false, fp.Fault{Kind: fp.Garbage, AfterFrames: -1})},
	{"watch-object-of-wrong-type", onWatch(true, fp.Fault{Kind: fp.WrongType, AfterFrames: -1})},
	{"watch-event-without-object", onWatch(false, fp.Fault{Kind: fp.NoObject, AfterFrames: -1})},
	{"watch-bookmark-without-rv", onWatch(false, fp.Fault{Kind: fp.BookmarkNoRV, AfterFrames: -1})},
	{"list-410-gone", onRelist("", fp.Rule{Fault: fp.Fault{Kind: fp.Gone}})},
	// Only pods have more objects than a LIST page (their informer asks for pages of
	// 500): the relist's second page gets the 410 of an expired continue token.
	{"list-410-gone-on-continue", onRelist("pods",
		fp.Rule{Match: fp.Match{Func: func(i fp.RequestInfo) bool { return i.Query.Get("continue") != "" }}, Fault: fp.Fault{Kind: fp.Gone}},
	)},
	{"list-500", onRelist("", fp.Rule{Fault: fp.Fault{Kind: fp.InternalError}})},
	{"list-frame-cut-in-half", onRelist("", fp.Rule{Fault: fp.Fault{Kind: fp.CutFrame}})},
	{"network-blip-all-connections", func(run *soakRun, _ context.Context, _ *rand.Rand) (faultEffect, error) {
		run.proxy.CloseAll()
		return alreadyFired, nil
	}},
	{"restart-kube-apiserver", func(run *soakRun, _ context.Context, _ *rand.Rand) (faultEffect, error) {
		return alreadyFired, run.env.APIServer(0).Restart()
	}},
	{"restart-etcd", func(run *soakRun, _ context.Context, _ *rand.Rand) (faultEffect, error) {
		return alreadyFired, run.env.RestartEtcd()
	}},
	{"compact-etcd", func(run *soakRun, ctx context.Context, _ *rand.Rand) (faultEffect, error) {
		_, err := run.env.CompactEtcd(ctx)
		return alreadyFired, err
	}},
}

// faultStats counts, per fault name, how often it was injected and how often it took
// effect.
type faultStats struct {
	mu       sync.Mutex
	injected map[string]int
	pending  map[string][]faultEffect
	errs     []string
	// outages are the server restarts: when each began and when its server was ready.
	outages []serverOutage
}

// serverOutage is one server restart of the fault phase.
type serverOutage struct {
	name         string
	began, ready time.Time
}

func newFaultStats() *faultStats {
	return &faultStats{injected: map[string]int{}, pending: map[string][]faultEffect{}}
}

func (s *faultStats) add(name string, fired faultEffect, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.injected[name]++
	if err != nil {
		s.errs = append(s.errs, name+": "+err.Error())
		return
	}
	s.pending[name] = append(s.pending[name], fired)
}

// fired returns, per fault name, how many injections took effect.
func (s *faultStats) fired() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for name, fs := range s.pending {
		for _, f := range fs {
			if f.fired() {
				out[name]++
			}
		}
	}
	return out
}

// waiting returns the resources whose informers have injections that did not take effect
// yet.
func (s *faultStats) waiting() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for _, fs := range s.pending {
		for _, f := range fs {
			if !f.fired() {
				out[f.resource] = true
			}
		}
	}
	return out
}

// schedule returns the fault sequence: every kind once in a seeded order, then extra
// faults drawn at random.
func scheduleFaults(rnd *rand.Rand, extra int) []faultKind {
	seq := make([]faultKind, 0, len(faultKinds)+extra)
	for _, i := range rnd.Perm(len(faultKinds)) {
		seq = append(seq, faultKinds[i])
	}
	for i := 0; i < extra; i++ {
		seq = append(seq, faultKinds[rnd.IntN(len(faultKinds))])
	}
	return seq
}
