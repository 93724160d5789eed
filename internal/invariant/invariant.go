// Package invariant checks that informers kept their promise: after faults stop, each
// informer's store equals a fresh consistent LIST of the server (same keys, same
// resourceVersions), the last event each handler received for every object matches the
// object's final state (deleted objects: a delete, possibly DeletedFinalStateUnknown), and
// per object the resourceVersions a handler saw never went back.
//
// A Recorder is the handler that records what an informer delivered; a WriteLog records
// what a writer did through the real API; Check and WaitConsistent compare both with the
// server and report every Divergence precisely (informer, key, what, expected, seen).
package invariant

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/kinformer/kinformer/cache"
)

// Event kinds a Recorder keeps.
const (
	KindAdd    = "add"
	KindUpdate = "update"
	KindDelete = "delete"
)

// Divergence is one way an informer differs from what it must be.
type Divergence struct {
	Informer string
	Key      string
	// What names the invariant: "missing from the store", "extra in the store",
	// "stale in the store", "last event", "resourceVersion went back", "writer".
	What     string
	Expected string
	Seen     string
}

// String describes the divergence on one line.
func (d Divergence) String() string {
	return fmt.Sprintf("%s %s: %s: expected %s, seen %s", d.Informer, d.Key, d.What, d.Expected, d.Seen)
}

// keyState is what a Recorder knows of one object.
type keyState struct {
	kind    string
	rv      string
	unknown bool // the last delete was a DeletedFinalStateUnknown
	maxRV   uint64
	events  int
}

// Recorder is a ResourceEventHandler that keeps, per object key, the last event and the
// highest resourceVersion seen, and records a Divergence whenever an object's
// resourceVersion goes back. Safe for concurrent use.
type Recorder struct {
	name string

	mu          sync.Mutex
	keys        map[string]*keyState
	regressions []Divergence
	events      int
}

// NewRecorder returns a Recorder for the informer called name (used in divergences).
func NewRecorder(name string) *Recorder {
	return &Recorder{name: name, keys: map[string]*keyState{}}
}

// Name is the informer's name given to NewRecorder.
func (r *Recorder) Name() string { return r.name }

// Handler returns the event handler to register on the informer.
func (r *Recorder) Handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.record(KindAdd, obj) },
		UpdateFunc: func(_, obj any) { r.record(KindUpdate, obj) },
		DeleteFunc: func(obj any) { r.record(KindDelete, obj) },
	}
}

// Events returns how many events the Recorder received.
func (r *Recorder) Events() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events
}

func (r *Recorder) record(kind string, obj any) {
	unknown := false
	var key, rv string
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		unknown, key = true, d.Key
		if m, err := meta.Accessor(d.Obj); err == nil {
			rv = m.GetResourceVersion()
		}
	} else {
		k, err := cache.MetaNamespaceKeyFunc(obj)
		m, merr := meta.Accessor(obj)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events++
		if err != nil || merr != nil {
			r.regressions = append(r.regressions, Divergence{Informer: r.name, Key: "?", What: "unusable object delivered",
				Expected: "an object with metadata", Seen: fmt.Sprintf("%T", obj)})
			return
		}
		key, rv = k, m.GetResourceVersion()
		r.apply(kind, key, rv, false)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events++
	r.apply(kind, key, rv, unknown)
}

// apply records one event; r.mu is held.
func (r *Recorder) apply(kind, key, rv string, unknown bool) {
	st := r.keys[key]
	if st == nil {
		st = &keyState{}
		r.keys[key] = st
	}
	st.events++
	st.kind, st.rv, st.unknown = kind, rv, unknown
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		if rv != "" {
			r.regressions = append(r.regressions, Divergence{Informer: r.name, Key: key, What: "unparsable resourceVersion",
				Expected: "a decimal number", Seen: strconv.Quote(rv)})
		}
		return
	}
	if n < st.maxRV {
		r.regressions = append(r.regressions, Divergence{Informer: r.name, Key: key, What: "resourceVersion went back",
			Expected: fmt.Sprintf(">= %d (%s event)", st.maxRV, kind), Seen: rv})
		return
	}
	st.maxRV = n
}

// last returns a copy of the per-key state and the regressions so far.
func (r *Recorder) last() (map[string]keyState, []Divergence) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]keyState, len(r.keys))
	for k, v := range r.keys {
		out[k] = *v
	}
	return out, append([]Divergence(nil), r.regressions...)
}

// WriteLog records what a writer did through the API: per key, the last confirmed write
// (its resourceVersion, or that it deleted the object) and whether a later write's outcome
// is unknown (the request failed in a way that leaves it open whether the server applied
// it). Safe for concurrent use.
type WriteLog struct {
	mu     sync.Mutex
	keys   map[string]*written
	counts map[string]int
}

type written struct {
	deleted   bool
	rv        uint64
	uncertain bool
}

// NewWriteLog returns an empty log.
func NewWriteLog() *WriteLog {
	return &WriteLog{keys: map[string]*written{}, counts: map[string]int{}}
}

// Wrote records a successful create or update of key that the server answered with rv.
func (l *WriteLog) Wrote(op, key, rv string) {
	n, _ := strconv.ParseUint(rv, 10, 64)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[op]++
	w := l.entry(key)
	w.deleted, w.rv, w.uncertain = false, n, false
}

// Deleted records a successful delete of key.
func (l *WriteLog) Deleted(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[KindDelete]++
	w := l.entry(key)
	w.deleted, w.uncertain = true, false
}

// Uncertain records a write of key (op) that failed without telling whether the server
// applied it.
func (l *WriteLog) Uncertain(op, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts["uncertain "+op]++
	l.entry(key).uncertain = true
}

// Failed records a write the server refused (nothing changed).
func (l *WriteLog) Failed(op string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts["failed "+op]++
}

func (l *WriteLog) entry(key string) *written {
	w := l.keys[key]
	if w == nil {
		w = &written{}
		l.keys[key] = w
	}
	return w
}

// Counts returns the number of writes per outcome: "add", "update", "delete" for
// confirmed ones, "uncertain <op>" and "failed <op>" for the others.
func (l *WriteLog) Counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.counts))
	for k, v := range l.counts {
		out[k] = v
	}
	return out
}

// Confirmed returns the number of writes the server confirmed.
func (l *WriteLog) Confirmed() int {
	c := l.Counts()
	return c[KindAdd] + c[KindUpdate] + c[KindDelete]
}

// Target is one informer under test.
type Target struct {
	// Name names the informer in divergences (usually the resource).
	Name string
	// Store is the informer's store (informer.GetStore()).
	Store cache.Store
	// Recorder is the handler registered on the informer.
	Recorder *Recorder
	// List makes a fresh consistent LIST of what the informer watches and returns key →
	// resourceVersion.
	List func(ctx context.Context) (map[string]string, error)
	// Writes, when not nil, is what the writer did to these objects; Check then also
	// verifies the writer's confirmed writes against the LIST, which guards the test
	// itself.
	Writes *WriteLog
}

// Check compares target with a fresh LIST once and returns every divergence, sorted.
// An error means the LIST failed.
func Check(ctx context.Context, target Target) ([]Divergence, error) {
	fresh, err := target.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("invariant: listing %s: %w", target.Name, err)
	}
	var out []Divergence
	add := func(key, what, expected, seen string) {
		out = append(out, Divergence{Informer: target.Name, Key: key, What: what, Expected: expected, Seen: seen})
	}

	stored := map[string]string{}
	for _, obj := range target.Store.List() {
		key, kerr := cache.MetaNamespaceKeyFunc(obj)
		m, merr := meta.Accessor(obj)
		if kerr != nil || merr != nil {
			add("?", "unusable object in the store", "an object with metadata", fmt.Sprintf("%T", obj))
			continue
		}
		stored[key] = m.GetResourceVersion()
	}
	for key, rv := range fresh {
		got, ok := stored[key]
		switch {
		case !ok:
			add(key, "missing from the store", "resourceVersion "+rv, "absent")
		case got != rv:
			add(key, "stale in the store", "resourceVersion "+rv, "resourceVersion "+got)
		}
	}
	for key, rv := range stored {
		if _, ok := fresh[key]; !ok {
			add(key, "extra in the store", "absent", "resourceVersion "+rv)
		}
	}

	if target.Recorder != nil {
		last, regressions := target.Recorder.last()
		out = append(out, regressions...)
		for key, rv := range fresh {
			st, ok := last[key]
			switch {
			case !ok:
				add(key, "last event", "add/update at "+rv, "no event")
			case st.kind == KindDelete || st.rv != rv:
				add(key, "last event", "add/update at "+rv, describe(st))
			}
		}
		for key, st := range last {
			if _, ok := fresh[key]; !ok && st.kind != KindDelete {
				add(key, "last event", "delete", describe(st))
			}
		}
	}

	if target.Writes != nil {
		target.Writes.mu.Lock()
		for key, w := range target.Writes.keys {
			if w.uncertain {
				continue
			}
			rv, ok := fresh[key]
			switch {
			case w.deleted && ok:
				add(key, "writer", "deleted (confirmed by the server)", "present at "+rv)
			case !w.deleted && !ok:
				add(key, "writer", fmt.Sprintf("present at >= %d (confirmed by the server)", w.rv), "absent")
			case !w.deleted:
				if n, err := strconv.ParseUint(rv, 10, 64); err == nil && n < w.rv {
					add(key, "writer", fmt.Sprintf("resourceVersion >= %d", w.rv), rv)
				}
			}
		}
		target.Writes.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Informer != out[j].Informer {
			return out[i].Informer < out[j].Informer
		}
		if out[i].Key != out[j].Key {
			return out[i].Key < out[j].Key
		}
		return out[i].What < out[j].What
	})
	return out, nil
}

func describe(st keyState) string {
	s := st.kind
	if st.unknown {
		s += " (DeletedFinalStateUnknown)"
	}
	return s + " at " + st.rv
}

// WaitConsistent checks every target again and again until none diverges or timeout
// passes (informers converge after the faults stop), and returns the divergences of the
// last round (nil when consistent) and the time it took. A resourceVersion that went back
// never heals, so it ends the wait at once.
func WaitConsistent(ctx context.Context, targets []Target, timeout time.Duration) ([]Divergence, time.Duration) {
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		var all []Divergence
		final := false
		for _, tg := range targets {
			ds, err := Check(ctx, tg)
			if err != nil {
				all = append(all, Divergence{Informer: tg.Name, Key: "-", What: "list", Expected: "a fresh LIST", Seen: err.Error()})
				continue
			}
			for _, d := range ds {
				if d.What == "resourceVersion went back" || d.What == "writer" || strings.HasPrefix(d.What, "unusable") {
					final = true
				}
			}
			all = append(all, ds...)
		}
		if len(all) == 0 || final || time.Now().After(deadline) || ctx.Err() != nil {
			return all, time.Since(start)
		}
		t := time.NewTimer(500 * time.Millisecond) // pause between rounds of fresh LISTs
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// Summary describes divergences for a failure message: the count per informer and
// invariant, and the first few in full.
func Summary(ds []Divergence, max int) string {
	if len(ds) == 0 {
		return "no divergence"
	}
	counts := map[string]int{}
	for _, d := range ds {
		counts[d.Informer+": "+d.What]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%d divergence(s):", len(ds))
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %s: %d", k, counts[k])
	}
	for i, d := range ds {
		if i == max {
			fmt.Fprintf(&b, "\n  … %d more", len(ds)-max)
			break
		}
		b.WriteString("\n  " + d.String())
	}
	return b.String()
}
