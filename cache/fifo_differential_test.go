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

// fifoDiffQueue is one implementation under test, seen through adapters that
// describe what was popped as a string.
type fifoDiffQueue struct {
	add, update, del func(obj interface{}) error
	replace          func(list []interface{}, rv string) error
	resync           func() error
	bookmark         func(rv string) error // nil: not supported
	pop              func(process func(obj interface{}, initial bool) error) error
	popBatch         func(batch func(desc string, initial bool) error, single func(obj interface{}, initial bool) error) error
	hasSynced        func() bool
	close            func()
}

// fifoDiffConfig describes one queue configuration, built on both sides.
type fifoDiffConfig struct {
	name         string
	kind         string // "delta", "real", "fifo"
	known        bool   // pass the consumer's store as KnownObjects
	emitReplaced bool
	transform    bool
	atomic       bool
	bookmarks    bool
	unlock       bool
}

// fifoDiffTransform marks objects as transformed; idempotence is not needed
// because each object passes through it once.
func fifoDiffTransform(obj interface{}) (interface{}, error) {
	o, ok := obj.(fakeObj)
	if !ok {
		return nil, fmt.Errorf("unexpected %T", obj)
	}
	o.xf++
	return o, nil
}

// renderObj describes objects of either package the same way.
func renderObj(obj interface{}) string {
	switch o := obj.(type) {
	case nil:
		return "nil"
	case fakeObj:
		return fmt.Sprintf("%s=%d/x%d", o.name, o.val, o.xf)
	case DeletedFinalStateUnknown:
		return "tomb(" + o.Key + "," + renderObj(o.Obj) + ")"
	case clientcache.DeletedFinalStateUnknown:
		return "tomb(" + o.Key + "," + renderObj(o.Obj) + ")"
	case ReplacedAllInfo:
		return "all(" + o.ResourceVersion + ":" + renderObjs(o.Objects) + ")"
	case clientcache.ReplacedAllInfo:
		return "all(" + o.ResourceVersion + ":" + renderObjs(o.Objects) + ")"
	case BookmarkInfo:
		return "bookmark(" + o.ResourceVersion + ")"
	case clientcache.BookmarkInfo:
		return "bookmark(" + o.ResourceVersion + ")"
	case SyncAllInfo, clientcache.SyncAllInfo:
		return "syncall"
	case Deltas:
		parts := make([]string, len(o))
		for i, d := range o {
			parts[i] = string(d.Type) + ":" + renderObj(d.Object)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case clientcache.Deltas:
		parts := make([]string, len(o))
		for i, d := range o {
			parts[i] = string(d.Type) + ":" + renderObj(d.Object)
		}
		return "[" + strings.Join(parts, " ") + "]"
	default:
		return fmt.Sprintf("%T(%v)", obj, obj)
	}
}

func renderObjs(objs []interface{}) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = renderObj(o)
	}
	return strings.Join(parts, ",")
}

// fifoDiffApply plays the informer: applies one delta to the consumer's store.
func fifoDiffApply(store *knownStore, typ string, obj interface{}) {
	switch typ {
	case "Added", "Updated", "Replaced", "Sync":
		o := obj.(fakeObj)
		store.set(o.name, o)
	case "Deleted":
		switch o := obj.(type) {
		case fakeObj:
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
			store.objs[x.(fakeObj).name] = x
		}
		store.mu.Unlock()
	}
}

// fifoDiffApplyAny applies a popped accumulator (Deltas of either package, or a
// FIFO object) to the store.
func fifoDiffApplyAny(store *knownStore, obj interface{}) {
	switch d := obj.(type) {
	case Deltas:
		for _, x := range d {
			fifoDiffApply(store, string(x.Type), x.Object)
		}
	case clientcache.Deltas:
		for _, x := range d {
			fifoDiffApply(store, string(x.Type), x.Object)
		}
	case fakeObj:
		store.set(d.name, d)
	}
}

func fifoDiffOurs(cfg fifoDiffConfig, store *knownStore) (fifoDiffQueue, func() bool) {
	var tf TransformFunc
	if cfg.transform {
		tf = fifoDiffTransform
	}
	var known KeyListerGetter
	if cfg.known {
		known = store
	}
	switch cfg.kind {
	case "delta":
		f := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KeyFunction: fakeObjKey, KnownObjects: known, EmitDeltaTypeReplaced: cfg.emitReplaced, Transformer: tf})
		nonEmpty := func() bool { return f.q.Len() > 0 }
		return fifoDiffQueue{
			add: f.Add, update: f.Update, del: f.Delete, replace: f.Replace, resync: f.Resync,
			pop: func(p func(interface{}, bool) error) error {
				_, err := f.Pop(PopProcessFunc(p))
				return err
			},
			hasSynced: f.HasSynced, close: f.Close,
		}, nonEmpty
	case "real":
		f := NewRealFIFOWithOptions(RealFIFOOptions{
			KeyFunction: fakeObjKey, KnownObjects: known, Transformer: tf,
			AtomicEvents: cfg.atomic, EmitDeltaTypeBookmark: cfg.bookmarks, UnlockWhileProcessing: cfg.unlock,
		})
		nonEmpty := func() bool { return f.q.Len() > 0 }
		return fifoDiffQueue{
			add: f.Add, update: f.Update, del: f.Delete, replace: f.Replace, resync: f.Resync, bookmark: f.Bookmark,
			pop: func(p func(interface{}, bool) error) error {
				_, err := f.Pop(PopProcessFunc(p))
				return err
			},
			popBatch: func(batch func(string, bool) error, single func(interface{}, bool) error) error {
				return f.PopBatch(func(deltas []Delta, initial bool) error {
					for _, d := range deltas {
						fifoDiffApply(store, string(d.Type), d.Object)
					}
					return batch(renderObj(Deltas(deltas)), initial)
				}, PopProcessFunc(single))
			},
			hasSynced: f.HasSynced, close: f.Close,
		}, nonEmpty
	default:
		f := NewFIFO(fakeObjKey)
		nonEmpty := func() bool { f.lock.Lock(); defer f.lock.Unlock(); return len(f.items) > 0 }
		return fifoDiffQueue{
			add: f.Add, update: f.Update, del: f.Delete, replace: f.Replace, resync: f.Resync,
			pop: func(p func(interface{}, bool) error) error {
				_, err := f.Pop(PopProcessFunc(p))
				return err
			},
			hasSynced: f.HasSynced, close: f.Close,
		}, nonEmpty
	}
}

func fifoDiffClientGo(cfg fifoDiffConfig, store *knownStore) fifoDiffQueue {
	var tf clientcache.TransformFunc
	if cfg.transform {
		tf = fifoDiffTransform
	}
	var known clientcache.KeyListerGetter
	if cfg.known {
		known = store
	}
	switch cfg.kind {
	case "delta":
		f := clientcache.NewDeltaFIFOWithOptions(clientcache.DeltaFIFOOptions{KeyFunction: fakeObjKey, KnownObjects: known, EmitDeltaTypeReplaced: cfg.emitReplaced, Transformer: tf})
		return fifoDiffQueue{
			add: f.Add, update: f.Update, del: f.Delete, replace: f.Replace, resync: f.Resync,
			pop: func(p func(interface{}, bool) error) error {
				_, err := f.Pop(clientcache.PopProcessFunc(p))
				return err
			},
			hasSynced: f.HasSynced, close: f.Close,
		}
	case "real":
		f := clientcache.NewRealFIFOWithOptions(clientcache.RealFIFOOptions{
			KeyFunction: fakeObjKey, KnownObjects: known, Transformer: tf,
			AtomicEvents: cfg.atomic, EmitDeltaTypeBookmark: cfg.bookmarks, UnlockWhileProcessing: cfg.unlock,
		})
		return fifoDiffQueue{
			add: f.Add, update: f.Update, del: f.Delete, replace: f.Replace, resync: f.Resync, bookmark: f.Bookmark,
			pop: func(p func(interface{}, bool) error) error {
				_, err := f.Pop(clientcache.PopProcessFunc(p))
				return err
			},
			popBatch: func(batch func(string, bool) error, single func(interface{}, bool) error) error {
				return f.PopBatch(func(deltas []clientcache.Delta, initial bool) error {
					for _, d := range deltas {
						fifoDiffApply(store, string(d.Type), d.Object)
					}
					return batch(renderObj(clientcache.Deltas(deltas)), initial)
				}, clientcache.PopProcessFunc(single))
			},
			hasSynced: f.HasSynced, close: f.Close,
		}
	default:
		f := clientcache.NewFIFO(fakeObjKey)
		return fifoDiffQueue{
			add: f.Add, update: f.Update, del: f.Delete, replace: f.Replace, resync: f.Resync,
			pop: func(p func(interface{}, bool) error) error {
				_, err := f.Pop(clientcache.PopProcessFunc(p))
				return err
			},
			hasSynced: f.HasSynced, close: f.Close,
		}
	}
}

// fifoDiffOp is one step of a scenario.
type fifoDiffOp struct {
	kind string // add update delete replace resync bookmark pop batch
	obj  fakeObj
	list []fakeObj
	rv   string
}

func (op fifoDiffOp) String() string {
	switch op.kind {
	case "replace":
		names := make([]string, len(op.list))
		for i, o := range op.list {
			names[i] = renderObj(o)
		}
		return fmt.Sprintf("replace(%s @%s)", strings.Join(names, ","), op.rv)
	case "add", "update", "delete":
		return op.kind + "(" + renderObj(op.obj) + ")"
	case "bookmark":
		return "bookmark(" + op.rv + ")"
	}
	return op.kind
}

func fifoDiffErr(err error) string {
	if err == nil {
		return "ok"
	}
	if errors.Is(err, ErrFIFOClosed) || errors.Is(err, clientcache.ErrFIFOClosed) {
		return "closed"
	}
	return "error"
}

// fifoDiffPopOnce pops once (a batch when allowed and supported), applies what
// it got to the consumer's store and describes it.
func fifoDiffPopOnce(q fifoDiffQueue, store *knownStore, batchAllowed bool) string {
	var desc string
	single := func(obj interface{}, initial bool) error {
		fifoDiffApplyAny(store, obj)
		desc = fmt.Sprintf("single %s initial=%v", renderObj(obj), initial)
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
	return desc + " -> " + fifoDiffErr(err)
}

// fifoDiffStep runs one op; ok is false for ops that were skipped (pops the
// caller decided against, bookmarks on queues without them).
func fifoDiffStep(q fifoDiffQueue, store *knownStore, op fifoDiffOp, mayPop bool) (line string, ok bool) {
	var res string
	switch op.kind {
	case "add":
		res = fifoDiffErr(q.add(op.obj))
	case "update":
		res = fifoDiffErr(q.update(op.obj))
	case "delete":
		res = fifoDiffErr(q.del(op.obj))
	case "replace":
		list := make([]interface{}, len(op.list))
		for j, o := range op.list {
			list[j] = o
		}
		res = fifoDiffErr(q.replace(list, op.rv))
	case "resync":
		res = fifoDiffErr(q.resync())
	case "bookmark":
		if q.bookmark == nil {
			return "", false
		}
		res = fifoDiffErr(q.bookmark(op.rv))
	case "pop", "batch":
		if !mayPop {
			return "", false
		}
		res = fifoDiffPopOnce(q, store, op.kind == "batch")
	}
	return fmt.Sprintf("%s: %s synced=%v", op, res, q.hasSynced()), true
}

// fifoDiffDrain closes q and pops until it reports closed.
func fifoDiffDrain(q fifoDiffQueue, store *knownStore) []string {
	q.close()
	var trace []string
	for i := 0; i < 1000; i++ {
		res := fifoDiffPopOnce(q, store, true)
		trace = append(trace, "drain: "+res)
		if strings.HasSuffix(res, "closed") {
			break
		}
	}
	return trace
}

// fifoDiffCompare runs ops on both sides and compares the traces. Pops only
// run when our queue holds something (else they would block); the same
// decisions are replayed on client-go's side.
func fifoDiffCompare(t *testing.T, cfg fifoDiffConfig, ops []fifoDiffOp) {
	t.Helper()
	ourStore, theirStore := newKnownStore(), newKnownStore()
	ours, nonEmpty := fifoDiffOurs(cfg, ourStore)
	mayPop := make([]bool, len(ops))
	var oursTrace []string
	for i, op := range ops {
		if op.kind == "pop" || op.kind == "batch" {
			mayPop[i] = nonEmpty()
		}
		if line, ok := fifoDiffStep(ours, ourStore, op, mayPop[i]); ok {
			oursTrace = append(oursTrace, line)
		}
	}
	oursTrace = append(oursTrace, fifoDiffDrain(ours, ourStore)...)

	theirs := fifoDiffClientGo(cfg, theirStore)
	var theirsTrace []string
	for i, op := range ops {
		if line, ok := fifoDiffStep(theirs, theirStore, op, mayPop[i]); ok {
			theirsTrace = append(theirsTrace, line)
		}
	}
	theirsTrace = append(theirsTrace, fifoDiffDrain(theirs, theirStore)...)
	if !assert.Equal(t, theirsTrace, oursTrace, "trace of %s (expected: client-go, actual: ours)", cfg.name) {
		t.Logf("ops: %v", ops)
	}
	assert.Equal(t, theirStore.ListKeys(), ourStore.ListKeys(), "consumer store keys")
}

// fifoDiffRandomOps builds a random but valid scenario.
func fifoDiffRandomOps(r *rand.Rand, n int, cfg fifoDiffConfig) []fifoDiffOp {
	names := []string{"a", "b", "c", "d", "e", "f"}
	val := 0
	next := func(name string) fakeObj { val++; return newFakeObj(name, val) }
	var ops []fifoDiffOp
	if cfg.kind != "fifo" && r.IntN(2) == 0 {
		// Start like an informer: the initial list comes first.
		var list []fakeObj
		for _, nm := range names[:2+r.IntN(len(names)-1)] {
			list = append(list, next(nm))
		}
		ops = append(ops, fifoDiffOp{kind: "replace", list: list, rv: fmt.Sprint(val)})
	}
	for len(ops) < n {
		x := r.IntN(100)
		name := names[r.IntN(len(names))]
		switch {
		case x < 18:
			ops = append(ops, fifoDiffOp{kind: "add", obj: next(name)})
		case x < 36:
			ops = append(ops, fifoDiffOp{kind: "update", obj: next(name)})
		case x < 50:
			ops = append(ops, fifoDiffOp{kind: "delete", obj: next(name)})
		case x < 58:
			if cfg.kind == "fifo" {
				continue // client-go's FIFO.Replace order is random
			}
			var list []fakeObj
			for _, nm := range names {
				if r.IntN(2) == 0 {
					list = append(list, next(nm))
				}
			}
			if len(list) > 0 && r.IntN(10) == 0 {
				list = append(list, next(list[0].name)) // a duplicate key
			}
			ops = append(ops, fifoDiffOp{kind: "replace", list: list, rv: fmt.Sprint(val)})
		case x < 64:
			ops = append(ops, fifoDiffOp{kind: "resync"})
		case x < 68:
			ops = append(ops, fifoDiffOp{kind: "bookmark", rv: fmt.Sprint(val)})
		case x < 84:
			ops = append(ops, fifoDiffOp{kind: "pop"})
		default:
			ops = append(ops, fifoDiffOp{kind: "batch"})
		}
	}
	return ops
}

var fifoDiffConfigs = []fifoDiffConfig{
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
	a1, a2, b1, c1 := newFakeObj("a", 1), newFakeObj("a", 2), newFakeObj("b", 1), newFakeObj("c", 1)
	scenarios := []struct {
		name string
		ops  []fifoDiffOp
	}{
		{"initial list then watch", []fifoDiffOp{
			{kind: "replace", list: []fakeObj{a1, b1}, rv: "1"},
			{kind: "pop"}, {kind: "update", obj: a2}, {kind: "batch"}, {kind: "batch"}, {kind: "delete", obj: b1},
		}},
		{"relist drops objects", []fifoDiffOp{
			{kind: "replace", list: []fakeObj{a1, b1, c1}, rv: "1"},
			{kind: "batch"}, {kind: "batch"}, {kind: "batch"},
			{kind: "update", obj: a2}, {kind: "replace", list: []fakeObj{c1}, rv: "5"}, {kind: "resync"},
		}},
		{"watch events before the list", []fifoDiffOp{
			{kind: "add", obj: a1}, {kind: "bookmark", rv: "3"}, {kind: "replace", list: []fakeObj{b1}, rv: "4"},
			{kind: "delete", obj: a2}, {kind: "delete", obj: a2}, {kind: "pop"},
		}},
		{"resync and bookmark before the list", []fifoDiffOp{
			{kind: "resync"}, {kind: "bookmark", rv: "1"}, {kind: "replace", list: []fakeObj{a1, a2}, rv: "2"},
			{kind: "pop"}, {kind: "pop"}, {kind: "pop"}, {kind: "resync"},
		}},
	}
	for _, cfg := range fifoDiffConfigs {
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
				fifoDiffCompare(t, cfg, ops)
			})
		}
	}
}

func TestQueueOnRandomOperationsMatchesClientGo(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 10
	}
	for _, cfg := range fifoDiffConfigs {
		t.Run(cfg.name, func(t *testing.T) {
			for seed := 0; seed < seeds; seed++ {
				r := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
				ops := fifoDiffRandomOps(r, 50, cfg)
				ok := t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { fifoDiffCompare(t, cfg, ops) })
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
			popped := 0
			countBatch := func(d []Delta, init bool) error { popped += len(d); return noopBatch(d, init) }
			countSingle := func(obj interface{}, init bool) error { popped++; return noopSingle(obj, init) }
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for _, p := range pods[:burst] {
					_ = f.Update(p)
				}
				for popped = 0; popped < burst; {
					_ = f.PopBatch(countBatch, countSingle)
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

// keepingQueue is a RealFIFO (client-go's or ours) whose PopBatch consumer
// keeps every slice it is handed; kept renders them all.
type keepingQueue struct {
	add      func(obj interface{}) error
	popBatch func() error
	kept     func() []string
}

func keepingQueueOurs(opts RealFIFOOptions) keepingQueue {
	f := NewRealFIFOWithOptions(opts)
	var kept []interface{}
	return keepingQueue{
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
				out[i] = renderObj(k)
			}
			return out
		},
	}
}

func keepingQueueClientGo(opts clientcache.RealFIFOOptions) keepingQueue {
	f := clientcache.NewRealFIFOWithOptions(opts)
	var kept []interface{}
	return keepingQueue{
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
				out[i] = renderObj(k)
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
	script := func(t *testing.T, q keepingQueue) []string {
		t.Helper()
		for _, o := range []fakeObj{newFakeObj("a", 1), newFakeObj("b", 1), newFakeObj("c", 1)} {
			require.NoError(t, q.add(o))
		}
		require.NoError(t, q.popBatch()) // a batch of three
		require.NoError(t, q.add(newFakeObj("a", 2)))
		require.NoError(t, q.popBatch()) // a single
		for _, o := range []fakeObj{newFakeObj("d", 1), newFakeObj("e", 1)} {
			require.NoError(t, q.add(o))
		}
		require.NoError(t, q.popBatch()) // a batch of two
		require.NoError(t, q.add(newFakeObj("f", 1)))
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
				cgKnown, known = newKnownStore(), newKnownStore()
			}
			theirs := script(t, keepingQueueClientGo(clientcache.RealFIFOOptions{KeyFunction: fakeObjKey, KnownObjects: cgKnown, AtomicEvents: atomic, UnlockWhileProcessing: atomic}))
			require.Equal(t, want, theirs, "client-go")
			ours := script(t, keepingQueueOurs(RealFIFOOptions{KeyFunction: fakeObjKey, KnownObjects: known, AtomicEvents: atomic, UnlockWhileProcessing: atomic}))
			assert.Equal(t, want, ours, "kinformer")
		})
	}
}
