package synctrack

import (
	"errors"
	"sync"
	"sync/atomic"
)

// errNoEvaluate is returned by Lazy.Get when Evaluate is nil.
var errNoEvaluate = errors.New("synctrack: Lazy.Evaluate is nil")

// Lazy caches the result of Evaluate until Notify says that the result may
// have changed. The zero value is ready to use once Evaluate is set; Evaluate
// must not be changed after the first call to Get or Notify.
//
// Get and Notify are safe for concurrent use. Evaluate may be called from
// several goroutines at the same time when Notify races with Get, so it must
// be safe for concurrent use itself.
type Lazy[T any] struct {
	// Evaluate computes the current value. An error result is not cached.
	Evaluate func() (T, error)

	current atomic.Pointer[lazyGeneration[T]]
}

// lazyGeneration holds the value computed after one Notify.
type lazyGeneration[T any] struct {
	eval func() (T, error)

	// result is set once evaluation succeeded; readers that find it set
	// need no lock.
	result atomic.Pointer[T]
	// mu serialises evaluations of this generation.
	mu sync.Mutex
}

func (g *lazyGeneration[T]) get() (T, error) {
	if r := g.result.Load(); r != nil {
		return *r, nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if r := g.result.Load(); r != nil {
		return *r, nil
	}
	if g.eval == nil {
		var zero T
		return zero, errNoEvaluate
	}
	v, err := g.eval()
	if err != nil {
		return v, err
	}
	g.result.Store(&v)
	return v, nil
}

// Notify marks the cached value as stale: the next Get calls Evaluate again.
func (z *Lazy[T]) Notify() {
	z.current.Store(&lazyGeneration[T]{eval: z.Evaluate})
}

// Get returns the cached value, calling Evaluate first if there is none or if
// Notify was called since it was computed. Callers that ask concurrently for
// the same stale value wait for a single Evaluate call and share its result.
// Errors are returned but not cached, so the next Get evaluates again. A nil
// Evaluate makes Get return an error. Differs from client-go v0.37.2; see
// COMPATIBILITY.md.
func (z *Lazy[T]) Get() (T, error) {
	g := z.current.Load()
	if g == nil {
		z.current.CompareAndSwap(nil, &lazyGeneration[T]{eval: z.Evaluate})
		g = z.current.Load()
	}
	return g.get()
}
