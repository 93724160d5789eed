package cache

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcache "k8s.io/client-go/tools/cache"
)

// fuzzKeys is the small key alphabet the operation fuzzers work on.
var fuzzKeys = [4][2]string{{"a", "x"}, {"a", "y"}, {"b", "x"}, {"", "c"}}

// fuzzPod returns the pod for key index k at resourceVersion rv, labelled with
// app=<label>.
func fuzzPod(k int, rv int, label byte) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace:       fuzzKeys[k][0],
		Name:            fuzzKeys[k][1],
		ResourceVersion: strconv.Itoa(rv),
		Labels:          map[string]string{"app": "l" + strconv.Itoa(int(label))},
	}}
}

// fuzzQueueSide is one queue under test (ours or client-go's) with the indexer its
// pops are applied to, as the controller does.
type fuzzQueueSide struct {
	add, update, del func(obj interface{}) error
	replace          func(list []interface{}, rv string) error
	resync           func() error
	close            func()
	pop              func() (string, error)
	knownKeys        func() []string
	queuedKeys       func() []string
	indexerState     func() []string
}

// objSum describes an object popped from either package's queue.
func objSum(obj interface{}) string {
	switch o := obj.(type) {
	case nil:
		return "nil"
	case *v1.Pod:
		if o == nil {
			return "(*v1.Pod)(nil)"
		}
		return o.Namespace + "/" + o.Name + "@" + o.ResourceVersion
	case DeletedFinalStateUnknown:
		return "DFSU(" + o.Key + "," + objSum(o.Obj) + ")"
	case clientcache.DeletedFinalStateUnknown:
		return "DFSU(" + o.Key + "," + objSum(o.Obj) + ")"
	case ReplacedAllInfo:
		return "RA(" + o.ResourceVersion + listSum(o.Objects) + ")"
	case clientcache.ReplacedAllInfo:
		return "RA(" + o.ResourceVersion + listSum(o.Objects) + ")"
	case SyncAllInfo, clientcache.SyncAllInfo:
		return "SA"
	default:
		return fmt.Sprintf("%T", obj)
	}
}

func listSum(objs []interface{}) string {
	var b strings.Builder
	for _, o := range objs {
		b.WriteString(";" + objSum(o))
	}
	return b.String()
}

// storeState lists a store's contents as sorted key@rv strings.
func storeState(list []interface{}) []string {
	out := make([]string, 0, len(list))
	for _, o := range list {
		out = append(out, objSum(o))
	}
	sort.Strings(out)
	return out
}

// fuzzApply applies one popped delta to a store, as the controller does.
func fuzzApply(store interface {
	Add(interface{}) error
	Update(interface{}) error
	Delete(interface{}) error
	Get(interface{}) (interface{}, bool, error)
	Replace([]interface{}, string) error
}, typ string, obj interface{}) {
	switch typ {
	case string(Deleted):
		_ = store.Delete(obj)
	case string(ReplacedAll):
		switch info := obj.(type) {
		case ReplacedAllInfo:
			_ = store.Replace(info.Objects, info.ResourceVersion)
		case clientcache.ReplacedAllInfo:
			_ = store.Replace(info.Objects, info.ResourceVersion)
		}
	case string(SyncAll), string(Bookmark):
	default:
		if _, ok, _ := store.Get(obj); ok {
			_ = store.Update(obj)
		} else {
			_ = store.Add(obj)
		}
	}
}

func oursSide(kind int) *fuzzQueueSide {
	idx := NewIndexer(DeletionHandlingMetaNamespaceKeyFunc, Indexers{})
	process := func(obj interface{}, initial bool) (string, error) {
		ds, ok := obj.(Deltas)
		if !ok {
			return "", fmt.Errorf("popped %T, not Deltas", obj)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "init=%v", initial)
		for _, d := range ds {
			b.WriteString(" " + string(d.Type) + ":" + objSum(d.Object))
			fuzzApply(idx, string(d.Type), d.Object)
		}
		return b.String(), nil
	}
	s := &fuzzQueueSide{
		knownKeys:    idx.ListKeys,
		indexerState: func() []string { return storeState(idx.List()) },
	}
	popWith := func(popper func(PopProcessFunc) (interface{}, error)) func() (string, error) {
		return func() (string, error) {
			var sum string
			_, err := popper(func(obj interface{}, initial bool) error {
				var perr error
				sum, perr = process(obj, initial)
				return perr
			})
			return sum, err
		}
	}
	if kind == 0 {
		q := NewDeltaFIFOWithOptions(DeltaFIFOOptions{KnownObjects: idx, EmitDeltaTypeReplaced: true})
		s.add, s.update, s.del, s.replace, s.resync, s.close = q.Add, q.Update, q.Delete, q.Replace, q.Resync, q.Close
		s.pop = popWith(q.Pop)
		s.queuedKeys = q.q.QueuedKeys
		return s
	}
	opts := RealFIFOOptions{KeyFunction: MetaNamespaceKeyFunc, KnownObjects: idx}
	if kind == 2 {
		opts = RealFIFOOptions{KeyFunction: MetaNamespaceKeyFunc, AtomicEvents: true}
	}
	q := NewRealFIFOWithOptions(opts)
	s.add, s.update, s.del, s.replace, s.resync, s.close = q.Add, q.Update, q.Delete, q.Replace, q.Resync, q.Close
	s.pop = popWith(q.Pop)
	s.queuedKeys = q.q.QueuedKeys
	return s
}

func clientGoSide(kind int) *fuzzQueueSide {
	idx := clientcache.NewIndexer(clientcache.DeletionHandlingMetaNamespaceKeyFunc, clientcache.Indexers{})
	process := func(obj interface{}, initial bool) (string, error) {
		ds, ok := obj.(clientcache.Deltas)
		if !ok {
			return "", fmt.Errorf("popped %T, not Deltas", obj)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "init=%v", initial)
		for _, d := range ds {
			b.WriteString(" " + string(d.Type) + ":" + objSum(d.Object))
			fuzzApply(idx, string(d.Type), d.Object)
		}
		return b.String(), nil
	}
	s := &fuzzQueueSide{
		knownKeys:    idx.ListKeys,
		indexerState: func() []string { return storeState(idx.List()) },
	}
	var popper func(clientcache.PopProcessFunc) (interface{}, error)
	if kind == 0 {
		q := clientcache.NewDeltaFIFOWithOptions(clientcache.DeltaFIFOOptions{KnownObjects: idx, EmitDeltaTypeReplaced: true})
		s.add, s.update, s.del, s.replace, s.resync, s.close = q.Add, q.Update, q.Delete, q.Replace, q.Resync, q.Close
		popper = q.Pop
	} else {
		opts := clientcache.RealFIFOOptions{KeyFunction: clientcache.MetaNamespaceKeyFunc, KnownObjects: idx}
		if kind == 2 {
			opts = clientcache.RealFIFOOptions{KeyFunction: clientcache.MetaNamespaceKeyFunc, AtomicEvents: true}
		}
		q := clientcache.NewRealFIFOWithOptions(opts)
		s.add, s.update, s.del, s.replace, s.resync, s.close = q.Add, q.Update, q.Delete, q.Replace, q.Resync, q.Close
		popper = q.Pop
	}
	// client-go's Pop blocks on an empty queue; the pop is only asked for when
	// ours holds something, so a pop that blocks is a difference, reported
	// after closing the queue to release it.
	s.pop = func() (string, error) {
		type res struct {
			sum string
			err error
		}
		ch := make(chan res, 1)
		go func() {
			var sum string
			_, err := popper(func(obj interface{}, initial bool) error {
				var perr error
				sum, perr = process(obj, initial)
				return perr
			})
			ch <- res{sum, err}
		}()
		select {
		case r := <-ch:
			return r.sum, r.err
		case <-time.After(5 * time.Second):
			s.close()
			<-ch
			return "", errors.New("client-go's queue is empty")
		}
	}
	return s
}

// FuzzQueueOps decodes the input into add/update/delete/replace/resync/pop
// operations on four keys with increasing resourceVersions, runs them on our
// DeltaFIFO, RealFIFO and RealFIFO with AtomicEvents and on client-go's, and
// requires the same popped Deltas in the same order, the same initial-list
// flags and the same indexer contents, then after Close the same drained
// remainder. Where client-go's order is random (several deletions detected by
// one Replace, several keys queued by one Resync) the operation is narrowed
// so that at most one key is affected.
func FuzzQueueOps(f *testing.F) {
	f.Add([]byte{0, 8, 16, 24, 5, 5, 1, 2, 5, 5, 5})
	f.Add([]byte{0, 8, 3, 0x0f, 5, 5, 5, 5, 5, 4, 5})
	f.Add([]byte{0, 8, 16, 5, 5, 5, 3, 0x01, 4, 5, 5, 5, 2, 10, 5})
	f.Add([]byte{3, 0x0f, 2, 10, 3, 0x05, 5, 5, 5, 5, 5, 5, 4, 5})
	f.Add([]byte{0, 2, 2, 0, 3, 0x00, 5, 5, 5, 3, 0x0e, 4, 4, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 200 {
			return
		}
		for kind, name := range []string{"DeltaFIFO", "RealFIFO", "RealFIFO/AtomicEvents"} {
			ours, theirs := oursSide(kind), clientGoSide(kind)
			rv := 0
			var trace []string
			fail := func(format string, args ...interface{}) {
				t.Helper()
				ours.close()
				theirs.close()
				t.Fatalf("%s after %v: %s", name, trace, fmt.Sprintf(format, args...))
			}
			both := func(op string, fo, ft func() error) {
				eo, et := fo(), ft()
				if (eo == nil) != (et == nil) {
					fail("%s: error %v, client-go %v", op, eo, et)
				}
			}
			popBoth := func() {
				so, eo := ours.pop()
				st, et := theirs.pop()
				if so != st || (eo == nil) != (et == nil) {
					fail("pop: %q, %v; client-go %q, %v", so, eo, st, et)
				}
			}
			for i := 0; i < len(data); i++ {
				b := data[i]
				k := int(b>>3) % len(fuzzKeys)
				rv++
				switch b % 8 {
				case 0, 7:
					trace = append(trace, fmt.Sprintf("add %d@%d", k, rv))
					p := fuzzPod(k, rv, b>>5)
					both("add", func() error { return ours.add(p) }, func() error { return theirs.add(p) })
				case 1:
					trace = append(trace, fmt.Sprintf("update %d@%d", k, rv))
					p := fuzzPod(k, rv, b>>5)
					both("update", func() error { return ours.update(p) }, func() error { return theirs.update(p) })
				case 2:
					trace = append(trace, fmt.Sprintf("delete %d@%d", k, rv))
					p := fuzzPod(k, rv, b>>5)
					both("delete", func() error { return ours.del(p) }, func() error { return theirs.del(p) })
				case 3:
					var mask byte
					if i+1 < len(data) {
						i++
						mask = data[i]
					}
					// At most one key left out, so the deletion order is defined.
					var list []interface{}
					left := false
					for j := range fuzzKeys {
						if mask&(1<<j) == 0 && !left {
							left = true
							continue
						}
						list = append(list, fuzzPod(j, rv, mask>>4))
					}
					trace = append(trace, fmt.Sprintf("replace %d keys @%d", len(list), rv))
					srv := strconv.Itoa(rv)
					both("replace", func() error { return ours.replace(list, srv) }, func() error { return theirs.replace(list, srv) })
				case 4:
					queued := map[string]bool{}
					for _, key := range ours.queuedKeys() {
						queued[key] = true
					}
					n := 0
					for _, key := range ours.knownKeys() {
						if !queued[key] {
							n++
						}
					}
					if n > 1 && kind != 2 {
						continue
					}
					trace = append(trace, "resync")
					both("resync", ours.resync, theirs.resync)
				case 5, 6:
					if len(ours.queuedKeys()) == 0 {
						continue
					}
					trace = append(trace, "pop")
					popBoth()
				}
				if so, st := ours.indexerState(), theirs.indexerState(); fmt.Sprint(so) != fmt.Sprint(st) {
					fail("indexer %v; client-go %v", so, st)
				}
			}
			trace = append(trace, "close")
			ours.close()
			theirs.close()
			for n := 0; ; n++ {
				if n > 1000 {
					fail("queue does not drain after Close")
				}
				so, eo := ours.pop()
				st, et := theirs.pop()
				if so != st || (eo == nil) != (et == nil) {
					fail("pop after close: %q, %v; client-go %q, %v", so, eo, st, et)
				}
				if eo != nil {
					if !errors.Is(eo, ErrFIFOClosed) {
						fail("pop after close: %v, want ErrFIFOClosed", eo)
					}
					break
				}
			}
			if so, st := ours.indexerState(), theirs.indexerState(); fmt.Sprint(so) != fmt.Sprint(st) {
				fail("final indexer %v; client-go %v", so, st)
			}
		}
	})
}
