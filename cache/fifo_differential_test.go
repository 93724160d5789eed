package cache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcache "k8s.io/client-go/tools/cache"
)

// Differential tests: the same operation sequences run against client-go's
// queues and ours; the traces (every popped Deltas or batch with its delta
// types, keys and objects, isInInitialList, each call's error, and HasSynced
// after every step) must be identical.
//
// Deliberate differences from client-go are kept out of these sequences and
// covered by the unit tests instead: failing Replace calls (ours queue
// nothing), FIFO.Replace order (client-go's is random), the timing of the
// Done channel within Pop, and option combinations client-go panics on.

// qDiffQueue is one implementation under test, seen through adapters that
// describe what was popped as a string.
type qDiffQueue struct {
	add, update, del func(obj interface{}) error
	replace          func(list []interface{}, rv string) error
	resync           func() error
	bookmark         func(rv string) error // nil: not supported
	pop              func(process func(obj interface{}, initial bool) error) error
	popBatch         func(batch func(desc string, initial bool) error, single func(obj interface{}, initial bool) error) error
	hasSynced        func() bool
	close            func()
}

// qDiffConfig describes one queue configuration, built on both sides.
type qDiffConfig struct {
	name         string
	kind         string // "delta", "real", "fifo"
	known        bool   // pass the consumer's store as KnownObjects
	emitReplaced bool
	transform    bool
	atomic       bool
	bookmarks    bool
	unlock       bool
}

// qDiffTransform marks objects as transformed; idempotence is not needed
// because each object passes through it once.
func qDiffTransform(obj interface{}) (interface{}, error) {
	o, ok := obj.(qObj)
	if !ok {
		return nil, fmt.Errorf("unexpected %T", obj)
	}
	o.xf++
	return o, nil
}

// qNorm describes objects of either package the same way.
func qNorm(obj interface{}) string {
	switch o := obj.(type) {
	case nil:
		return "nil"
	case qObj:
		return fmt.Sprintf("%s=%d/x%d", o.name, o.val, o.xf)
	case DeletedFinalStateUnknown:
		return "tomb(" + o.Key + "," + qNorm(o.Obj) + ")"
	case clientcache.DeletedFinalStateUnknown:
		return "tomb(" + o.Key + "," + qNorm(o.Obj) + ")"
	case ReplacedAllInfo:
		return "all(" + o.ResourceVersion + ":" + qNormList(o.Objects) + ")"
	case clientcache.ReplacedAllInfo:
		return "all(" + o.ResourceVersion + ":" + qNormList(o.Objects) + ")"
	case BookmarkInfo:
		return "bookmark(" + o.ResourceVersion + ")"
	case clientcache.BookmarkInfo:
		return "bookmark(" + o.ResourceVersion + ")"
	case SyncAllInfo, clientcache.SyncAllInfo:
		return "syncall"
	case Deltas:
		parts := make([]string, len(o))
		for i, d := range o {
			parts[i] = string(d.Type) + ":" + qNorm(d.Object)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case clientcache.Deltas:
		parts := make([]string, len(o))
		for i, d := range o {
			parts[i] = string(d.Type) + ":" + qNorm(d.Object)
		}
		return "[" + strings.Join(parts, " ") + "]"
	default:
		return fmt.Sprintf("%T(%v)", obj, obj)
	}
}

func qNormList(objs []interface{}) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = qNorm(o)
	}
	return strings.Join(parts, ",")
}

// qDiffApply plays the informer: applies one delta to the consumer's store.
func qDiffApply(store *qKnown, typ string, obj interface{}) {
	switch typ {
	case "Added", "Updated", "Replaced", "Sync":
		o := obj.(qObj)
		store.set(o.name, o)
	case "Deleted":
		switch o := obj.(type) {
		case qObj:
			store.del(o.name)
		case DeletedFinalStateUnknown:
			store.del(o.Key)
		case clientcache.DeletedFinalStateUnknown:
			store.del(o.Key)
		}
	case "ReplacedAll":
		var objs []interface{}
		switch o := obj.(type) {
		case ReplacedAllInfo:
			objs = o.Objects
		case clientcache.ReplacedAllInfo:
			objs = o.Objects
		}
		store.mu.Lock()
		store.objs = map[string]interface{}{}
		for _, x := range objs {
			store.objs[x.(qObj).name] = x
		}
		store.mu.Unlock()
	}
}

// qDiffApplyAny applies a popped accumulator (Deltas of either package, or a
// FIFO object) to the store.
func qDiffApplyAny(store *qKnown, obj interface{}) {
	switch d := obj.(type) {
	case Deltas:
		for _, x := range d {
			qDiffApply(store, string(x.Type), x.Object)
		}
	case clientcache.Deltas:
		for _, x := range d {
			qDiffApply(store, string(x.Type), x.Object)
		}
	case qObj:
		store.set(d.name, d)
	}
}

func qDiffOurs(cfg qDiffConfig, store *qKnown) (qDiffQueue, func() bool) {
	var tf TransformFunc
	if cfg.transform {
		tf = qDiffTransform
	}
	var known KeyListerGetter
	if cfg.known {
		known = store
	}
	switch cfg.kind {
	case "delta":
		f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KeyFunction: qKey, KnownObjects: known, EmitDeltaTypeReplaced: cfg.emitReplaced, Transformer: tf})
		nonEmpty := func() bool { return f.q.Len() > 0 }
		return qDiffQueue{
			add: f.Add, update: f.Update, del: f.Delete, replace: f.Replace, resync: f.Resync,
			pop: func(p func(interface{}, bool) error) error {
				_, err := f.Pop(PopProcessFunc(p))
				return err
			},
			hasSynced: f.HasSynced, close: f.Close,
		}, nonEmpty
	case "real":
		f := NewRealFIFOWithOptions(RealFIFOOptions{
			KeyFunction: qKey, KnownObjects: known, Transformer: tf,
			AtomicEvents: cfg.atomic, EmitDeltaTypeBookmark: cfg.bookmarks, UnlockWhileProcessing: cfg.unlock,
		})
		nonEmpty := func() bool { return f.q.Len() > 0 }
		return qDiffQueue{
			add: f.Add, update: f.Update, del: f.Delete, replace: f.Replace, resync: f.Resync, bookmark: f.Bookmark,
			pop: func(p func(interface{}, bool) error) error {
				_, err := f.Pop(PopProcessFunc(p))
				return err
			},
			popBatch: func(batch func(string, bool) error, single func(interface{}, bool) error) error {
				return f.PopBatch(func(deltas []Delta, initial bool) error {
					for _, d := range deltas {
						qDiffApply(store, string(d.Type), d.Object)
					}
					return batch(qNorm(Deltas(deltas)), initial)
				}, PopProcessFunc(single))
			},
			hasSynced: f.HasSynced, close: f.Close,
		}, nonEmpty
	default:
		f := NewFIFO(qKey)
		nonEmpty := func() bool { f.lock.Lock(); defer f.lock.Unlock(); return len(f.items) > 0 }
		return qDiffQueue{
			add: f.Add, update: f.Update, del: f.Delete, replace: f.Replace, resync: f.Resync,
			pop: func(p func(interface{}, bool) error) error {
				_, err := f.Pop(PopProcessFunc(p))
				return err
			},
			hasSynced: f.HasSynced, close: f.Close,
		}, nonEmpty
	}
}

func qDiffClientGo(cfg qDiffConfig, store *qKnown) qDiffQueue {
	var tf clientcache.TransformFunc
	if cfg.transform {
		tf = qDiffTransform
	}
	var known clientcache.KeyListerGetter
	if cfg.known {
		known = store
	}
	switch cfg.kind {
	case "delta":
		f := clientcache.NewDeltaFIFOWithOptions(clientcache.DeltaFIFOOptions{KeyFunction: qKey, KnownObjects: known, EmitDeltaTypeReplaced: cfg.emitReplaced, Transformer: tf})
		return qDiffQueue{
			add: f.Add, update: f.Update, del: f.Delete, replace: f.Replace, resync: f.Resync,
			pop: func(p func(interface{}, bool) error) error {
				_, err := f.Pop(clientcache.PopProcessFunc(p))
				return err
			},
			hasSynced: f.HasSynced, close: f.Close,
		}
	case "real":
		f := clientcache.NewRealFIFOWithOptions(clientcache.RealFIFOOptions{
			KeyFunction: qKey, KnownObjects: known, Transformer: tf,
			AtomicEvents: cfg.atomic, EmitDeltaTypeBookmark: cfg.bookmarks, UnlockWhileProcessing: cfg.unlock,
		})
		return qDiffQueue{
			add: f.Add, update: f.Update, del: f.Delete, replace: f.Replace, resync: f.Resync, bookmark: f.Bookmark,
			pop: func(p func(interface{}, bool) error) error {
				_, err := f.Pop(clientcache.PopProcessFunc(p))
				return err
			},
			popBatch: func(batch func(string, bool) error, single func(interface{}, bool) error) error {
				return f.PopBatch(func(deltas []clientcache.Delta, initial bool) error {
					for _, d := range deltas {
						qDiffApply(store, string(d.Type), d.Object)
					}
					return batch(qNorm(clientcache.Deltas(deltas)), initial)
				}, clientcache.PopProcessFunc(single))
			},
			hasSynced: f.HasSynced, close: f.Close,
		}
	default:
		f := clientcache.NewFIFO(qKey)
		return qDiffQueue{
			add: f.Add, update: f.Update, del: f.Delete, replace: f.Replace, resync: f.Resync,
			pop: func(p func(interface{}, bool) error) error {
				_, err := f.Pop(clientcache.PopProcessFunc(p))
				return err
			},
			hasSynced: f.HasSynced, close: f.Close,
		}
	}
}

// qDiffOp is one step of a scenario.
type qDiffOp struct {
	kind string // add update delete replace resync bookmark pop batch
	obj  qObj
	list []qObj
	rv   string
}

func (op qDiffOp) String() string {
	switch op.kind {
	case "replace":
		names := make([]string, len(op.list))
		for i, o := range op.list {
			names[i] = qNorm(o)
		}
		return fmt.Sprintf("replace(%s @%s)", strings.Join(names, ","), op.rv)
	case "add", "update", "delete":
		return op.kind + "(" + qNorm(op.obj) + ")"
	case "bookmark":
		return "bookmark(" + op.rv + ")"
	}
	return op.kind
}

func qDiffErr(err error) string {
	if err == nil {
		return "ok"
	}
	if errors.Is(err, ErrFIFOClosed) || errors.Is(err, clientcache.ErrFIFOClosed) {
		return "closed"
	}
	return "error"
}

// qDiffPopOnce pops once (a batch when allowed and supported), applies what
// it got to the consumer's store and describes it.
func qDiffPopOnce(q qDiffQueue, store *qKnown, batchAllowed bool) string {
	var desc string
	single := func(obj interface{}, initial bool) error {
		qDiffApplyAny(store, obj)
		desc = fmt.Sprintf("single %s initial=%v", qNorm(obj), initial)
		return nil
	}
	// A pop that blocks means the two queues disagree on emptiness; the
	// watchdog closes the queue so the trace shows it instead of hanging.
	watchdog := time.AfterFunc(5*time.Second, q.close)
	defer watchdog.Stop()
	var err error
	if batchAllowed && q.popBatch != nil {
		err = q.popBatch(func(d string, initial bool) error {
			desc = fmt.Sprintf("batch %s initial=%v", d, initial)
			return nil
		}, single)
	} else {
		err = q.pop(single)
	}
	return desc + " -> " + qDiffErr(err)
}

// qDiffStep runs one op; ok is false for ops that were skipped (pops the
// caller decided against, bookmarks on queues without them).
func qDiffStep(q qDiffQueue, store *qKnown, op qDiffOp, mayPop bool) (line string, ok bool) {
	var res string
	switch op.kind {
	case "add":
		res = qDiffErr(q.add(op.obj))
	case "update":
		res = qDiffErr(q.update(op.obj))
	case "delete":
		res = qDiffErr(q.del(op.obj))
	case "replace":
		list := make([]interface{}, len(op.list))
		for j, o := range op.list {
			list[j] = o
		}
		res = qDiffErr(q.replace(list, op.rv))
	case "resync":
		res = qDiffErr(q.resync())
	case "bookmark":
		if q.bookmark == nil {
			return "", false
		}
		res = qDiffErr(q.bookmark(op.rv))
	case "pop", "batch":
		if !mayPop {
			return "", false
		}
		res = qDiffPopOnce(q, store, op.kind == "batch")
	}
	return fmt.Sprintf("%s: %s synced=%v", op, res, q.hasSynced()), true
}

// qDiffDrain closes q and pops until it reports closed.
func qDiffDrain(q qDiffQueue, store *qKnown) []string {
	q.close()
	var trace []string
	for i := 0; i < 1000; i++ {
		res := qDiffPopOnce(q, store, true)
		trace = append(trace, "drain: "+res)
		if strings.HasSuffix(res, "closed") {
			break
		}
	}
	return trace
}

// qDiffCompare runs ops on both sides and compares the traces. Pops only
// run when our queue holds something (else they would block); the same
// decisions are replayed on client-go's side.
func qDiffCompare(t *testing.T, cfg qDiffConfig, ops []qDiffOp) {
	t.Helper()
	ourStore, theirStore := qNewKnown(), qNewKnown()
	ours, nonEmpty := qDiffOurs(cfg, ourStore)
	mayPop := make([]bool, len(ops))
	var oursTrace []string
	for i, op := range ops {
		if op.kind == "pop" || op.kind == "batch" {
			mayPop[i] = nonEmpty()
		}
		if line, ok := qDiffStep(ours, ourStore, op, mayPop[i]); ok {
			oursTrace = append(oursTrace, line)
		}
	}
	oursTrace = append(oursTrace, qDiffDrain(ours, ourStore)...)

	theirs := qDiffClientGo(cfg, theirStore)
	var theirsTrace []string
	for i, op := range ops {
		if line, ok := qDiffStep(theirs, theirStore, op, mayPop[i]); ok {
			theirsTrace = append(theirsTrace, line)
		}
	}
	theirsTrace = append(theirsTrace, qDiffDrain(theirs, theirStore)...)
	if !assert.Equal(t, theirsTrace, oursTrace, "trace of %s (expected: client-go, actual: ours)", cfg.name) {
		t.Logf("ops: %v", ops)
	}
	assert.Equal(t, theirStore.ListKeys(), ourStore.ListKeys(), "consumer store keys")
}

// qDiffRandomOps builds a random but valid scenario.
func qDiffRandomOps(r *rand.Rand, n int, cfg qDiffConfig) []qDiffOp {
	names := []string{"a", "b", "c", "d", "e", "f"}
	val := 0
	next := func(name string) qObj { val++; return qMk(name, val) }
	var ops []qDiffOp
	if cfg.kind != "fifo" && r.IntN(2) == 0 {
		// Start like an informer: the initial list comes first.
		var list []qObj
		for _, nm := range names[:2+r.IntN(len(names)-1)] {
			list = append(list, next(nm))
		}
		ops = append(ops, qDiffOp{kind: "replace", list: list, rv: fmt.Sprint(val)})
	}
	for len(ops) < n {
		x := r.IntN(100)
		name := names[r.IntN(len(names))]
		switch {
		case x < 18:
			ops = append(ops, qDiffOp{kind: "add", obj: next(name)})
		case x < 36:
			ops = append(ops, qDiffOp{kind: "update", obj: next(name)})
		case x < 50:
			ops = append(ops, qDiffOp{kind: "delete", obj: next(name)})
		case x < 58:
			if cfg.kind == "fifo" {
				continue // client-go's FIFO.Replace order is random
			}
			var list []qObj
			for _, nm := range names {
				if r.IntN(2) == 0 {
					list = append(list, next(nm))
				}
			}
			if len(list) > 0 && r.IntN(10) == 0 {
				list = append(list, next(list[0].name)) // a duplicate key
			}
			ops = append(ops, qDiffOp{kind: "replace", list: list, rv: fmt.Sprint(val)})
		case x < 64:
			ops = append(ops, qDiffOp{kind: "resync"})
		case x < 68:
			ops = append(ops, qDiffOp{kind: "bookmark", rv: fmt.Sprint(val)})
		case x < 84:
			ops = append(ops, qDiffOp{kind: "pop"})
		default:
			ops = append(ops, qDiffOp{kind: "batch"})
		}
	}
	return ops
}

var qDiffConfigs = []qDiffConfig{
	{name: "DeltaFIFO known objects, Replaced, transformer", kind: "delta", known: true, emitReplaced: true, transform: true},
	{name: "DeltaFIFO known objects, Sync", kind: "delta", known: true},
	{name: "DeltaFIFO without known objects", kind: "delta", transform: true},
	{name: "RealFIFO non-atomic, transformer", kind: "real", known: true, transform: true},
	{name: "RealFIFO atomic, bookmarks, transformer", kind: "real", atomic: true, bookmarks: true, transform: true},
	{name: "RealFIFO atomic", kind: "real", atomic: true},
	{name: "RealFIFO atomic, unlock while processing", kind: "real", atomic: true, bookmarks: true, unlock: true},
	{name: "FIFO", kind: "fifo"},
}

func TestQueueOnScriptedScenariosMatchesClientGo(t *testing.T) {
	a1, a2, b1, c1 := qMk("a", 1), qMk("a", 2), qMk("b", 1), qMk("c", 1)
	scenarios := []struct {
		name string
		ops  []qDiffOp
	}{
		{"initial list then watch", []qDiffOp{
			{kind: "replace", list: []qObj{a1, b1}, rv: "1"},
			{kind: "pop"}, {kind: "update", obj: a2}, {kind: "batch"}, {kind: "batch"}, {kind: "delete", obj: b1},
		}},
		{"relist drops objects", []qDiffOp{
			{kind: "replace", list: []qObj{a1, b1, c1}, rv: "1"},
			{kind: "batch"}, {kind: "batch"}, {kind: "batch"},
			{kind: "update", obj: a2}, {kind: "replace", list: []qObj{c1}, rv: "5"}, {kind: "resync"},
		}},
		{"watch events before the list", []qDiffOp{
			{kind: "add", obj: a1}, {kind: "bookmark", rv: "3"}, {kind: "replace", list: []qObj{b1}, rv: "4"},
			{kind: "delete", obj: a2}, {kind: "delete", obj: a2}, {kind: "pop"},
		}},
		{"resync and bookmark before the list", []qDiffOp{
			{kind: "resync"}, {kind: "bookmark", rv: "1"}, {kind: "replace", list: []qObj{a1, a2}, rv: "2"},
			{kind: "pop"}, {kind: "pop"}, {kind: "pop"}, {kind: "resync"},
		}},
	}
	for _, cfg := range qDiffConfigs {
		for _, sc := range scenarios {
			t.Run(cfg.name+"/"+sc.name, func(t *testing.T) {
				ops := sc.ops
				if cfg.kind == "fifo" {
					ops = nil
					for _, op := range sc.ops {
						if op.kind != "replace" {
							ops = append(ops, op)
						}
					}
				}
				qDiffCompare(t, cfg, ops)
			})
		}
	}
}

func TestQueueOnRandomOperationsMatchesClientGo(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 10
	}
	for _, cfg := range qDiffConfigs {
		t.Run(cfg.name, func(t *testing.T) {
			for seed := 0; seed < seeds; seed++ {
				r := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
				ops := qDiffRandomOps(r, 50, cfg)
				ok := t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { qDiffCompare(t, cfg, ops) })
				require.True(t, ok, "stopping at the first failing seed")
			}
		})
	}
}

// BenchmarkQueuesVsClientGo compares producing and batch-consuming pods on
// our RealFIFO and DeltaFIFO with client-go's, in bursts of 100 and one by
// one. Run it by hand; it is not part of the regular test run.
func BenchmarkQueuesVsClientGo(b *testing.B) {
	pods := make([]interface{}, 100)
	for i := range pods {
		pods[i] = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("pod-%d", i)}}
	}
	noopBatch := func([]Delta, bool) error { return nil }
	noopSingle := func(interface{}, bool) error { return nil }
	cgBatch := func([]clientcache.Delta, bool) error { return nil }
	for _, burst := range []int{1, 100} {
		b.Run(fmt.Sprintf("RealFIFO/burst%d/kinformer", burst), func(b *testing.B) {
			f := NewRealFIFOWithOptions(RealFIFOOptions{KeyFunction: MetaNamespaceKeyFunc, AtomicEvents: true})
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for _, p := range pods[:burst] {
					_ = f.Update(p)
				}
				for f.q.Len() > 0 {
					_ = f.PopBatch(noopBatch, noopSingle)
				}
			}
		})
		b.Run(fmt.Sprintf("RealFIFO/burst%d/client-go", burst), func(b *testing.B) {
			f := clientcache.NewRealFIFOWithOptions(clientcache.RealFIFOOptions{KeyFunction: clientcache.MetaNamespaceKeyFunc, AtomicEvents: true})
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for _, p := range pods[:burst] {
					_ = f.Update(p)
				}
				for popped := 0; popped < burst; {
					_ = f.PopBatch(func(d []clientcache.Delta, init bool) error {
						popped += len(d)
						return cgBatch(d, init)
					}, func(interface{}, bool) error { popped++; return nil })
				}
			}
		})
		b.Run(fmt.Sprintf("DeltaFIFO/burst%d/kinformer", burst), func(b *testing.B) {
			f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{EmitDeltaTypeReplaced: true})
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for _, p := range pods[:burst] {
					_ = f.Update(p)
				}
				for j := 0; j < burst; j++ {
					_, _ = f.Pop(noopSingle)
				}
			}
		})
		b.Run(fmt.Sprintf("DeltaFIFO/burst%d/client-go", burst), func(b *testing.B) {
			f := clientcache.NewDeltaFIFOWithOptions(clientcache.DeltaFIFOOptions{EmitDeltaTypeReplaced: true})
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for _, p := range pods[:burst] {
					_ = f.Update(p)
				}
				for j := 0; j < burst; j++ {
					_, _ = f.Pop(noopSingle)
				}
			}
		})
	}
}

// qKeepingQueue is a RealFIFO (client-go's or ours) whose PopBatch consumer
// keeps every slice it is handed; kept renders them all.
type qKeepingQueue struct {
	add      func(obj interface{}) error
	popBatch func() error
	kept     func() []string
}

func qKeepingOurs(opts RealFIFOOptions) qKeepingQueue {
	f := NewRealFIFOWithOptions(opts)
	var kept []interface{}
	return qKeepingQueue{
		add: f.Add,
		popBatch: func() error {
			return f.PopBatch(func(deltas []Delta, _ bool) error {
				kept = append(kept, Deltas(deltas))
				return nil
			}, func(obj interface{}, _ bool) error {
				kept = append(kept, obj)
				return nil
			})
		},
		kept: func() []string {
			out := make([]string, len(kept))
			for i, k := range kept {
				out[i] = qNorm(k)
			}
			return out
		},
	}
}

func qKeepingClientGo(opts clientcache.RealFIFOOptions) qKeepingQueue {
	f := clientcache.NewRealFIFOWithOptions(opts)
	var kept []interface{}
	return qKeepingQueue{
		add: f.Add,
		popBatch: func() error {
			return f.PopBatch(func(deltas []clientcache.Delta, _ bool) error {
				kept = append(kept, clientcache.Deltas(deltas))
				return nil
			}, func(obj interface{}, _ bool) error {
				kept = append(kept, obj)
				return nil
			})
		},
		kept: func() []string {
			out := make([]string, len(kept))
			for i, k := range kept {
				out[i] = qNorm(k)
			}
			return out
		},
	}
}

// TestRealFIFOPopBatchArgumentsOutliveTheCall keeps every batch and every
// single Deltas that PopBatch hands out, as client-go allows, and reads them
// after later pops: they still hold what was popped, on client-go's RealFIFO
// and on ours (atomic and unlocked while processing, or not).
func TestRealFIFOPopBatchArgumentsOutliveTheCall(t *testing.T) {
	script := func(t *testing.T, q qKeepingQueue) []string {
		t.Helper()
		for _, o := range []qObj{qMk("a", 1), qMk("b", 1), qMk("c", 1)} {
			require.NoError(t, q.add(o))
		}
		require.NoError(t, q.popBatch()) // a batch of three
		require.NoError(t, q.add(qMk("a", 2)))
		require.NoError(t, q.popBatch()) // a single
		for _, o := range []qObj{qMk("d", 1), qMk("e", 1)} {
			require.NoError(t, q.add(o))
		}
		require.NoError(t, q.popBatch()) // a batch of two
		require.NoError(t, q.add(qMk("f", 1)))
		require.NoError(t, q.popBatch()) // another single
		return q.kept()
	}
	want := []string{
		"[Added:a=1/x0 Added:b=1/x0 Added:c=1/x0]",
		"[Added:a=2/x0]",
		"[Added:d=1/x0 Added:e=1/x0]",
		"[Added:f=1/x0]",
	}
	for _, atomic := range []bool{false, true} {
		t.Run(fmt.Sprintf("atomic=%v", atomic), func(t *testing.T) {
			var cgKnown, known clientcache.KeyListerGetter
			if !atomic {
				cgKnown, known = qNewKnown(), qNewKnown()
			}
			theirs := script(t, qKeepingClientGo(clientcache.RealFIFOOptions{KeyFunction: qKey, KnownObjects: cgKnown, AtomicEvents: atomic, UnlockWhileProcessing: atomic}))
			require.Equal(t, want, theirs, "client-go")
			ours := script(t, qKeepingOurs(RealFIFOOptions{KeyFunction: qKey, KnownObjects: known, AtomicEvents: atomic, UnlockWhileProcessing: atomic}))
			assert.Equal(t, want, ours, "kinformer")
		})
	}
}
