package queue

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/klog/v2"
)

// base is what Real and Keyed share: the lock and the condition consumers
// wait on, the initial-batch gate, the closed flag, the configuration of
// keys and transform, and how lists are taken. Its zero value is made
// usable by initLocked.
type base[D any, O Ops[D]] struct {
	// logger is the queue's logger with its name attached.
	logger klog.Logger
	name   string

	lock   sync.Mutex
	cond   sync.Cond
	inited bool

	gate   SyncGate
	closed atomic.Bool

	keyFunc     func(any) (string, error)
	known       KeyLister
	transformer func(any) (any, error)

	// lists says how the queue takes lists, when an informer built it for
	// itself; drain lets a relist applied page by page wait for the
	// consumer.
	lists Lists
	drain drainWait
}

// config sets what both queues are configured with; called before use.
func (b *base[D, O]) config(logger klog.Logger, name, fallback string, keyFunc func(any) (string, error), known KeyLister, transformer func(any) (any, error)) {
	if name == "" {
		name = fallback
	}
	b.name = name
	b.logger = klog.LoggerWithName(logger, name)
	b.keyFunc = keyFunc
	b.known = known
	b.transformer = transformer
}

// initLocked makes a zero-value queue usable; fallback is its default name.
// Called with b.lock held.
func (b *base[D, O]) initLocked(fallback string) {
	if b.inited {
		return
	}
	b.inited = true
	b.cond.L = &b.lock
	b.drain.cond.L = &b.lock
	if b.name == "" {
		b.name = fallback
		b.logger = klog.LoggerWithName(klog.Background(), b.name)
	}
	b.gate.Init()
}

func (b *base[D, O]) nameOr(fallback string) string {
	if b.name == "" {
		return fallback
	}
	return b.name
}

func (b *base[D, O]) close(fallback string) {
	b.lock.Lock()
	defer b.lock.Unlock()
	b.initLocked(fallback)
	b.closed.Store(true)
	b.cond.Broadcast()
	b.drain.signalLocked()
}

func (b *base[D, O]) done(fallback string) <-chan struct{} {
	b.lock.Lock()
	defer b.lock.Unlock()
	b.initLocked(fallback)
	return b.gate.Done()
}

// IsClosed reports whether Close has been called.
func (b *base[D, O]) IsClosed() bool {
	return b.closed.Load()
}

// Synced reports whether the initial batch was popped and processed (see
// SyncGate). It never blocks.
func (b *base[D, O]) Synced() bool {
	return b.gate.IsDone()
}

// Transformer returns the transform applied to incoming objects (nil when
// none).
func (b *base[D, O]) Transformer() func(any) (any, error) {
	return b.transformer
}

// KeyOf returns obj's key: for a list of deltas the key of its newest object,
// for a tombstone its key, otherwise the key function's result; failures are
// Ops.KeyError.
func (b *base[D, O]) KeyOf(obj any) (string, error) {
	return keyOf[D, O](b.keyFunc, obj, false)
}

// transform applies the transformer, if any, to obj (listed under key).
// Tombstones pass untouched; a failure is wrapped with the queue's name and
// the key.
func (b *base[D, O]) transform(obj any, key string) (any, error) {
	if b.transformer == nil {
		return obj, nil
	}
	var o O
	if _, _, tomb := o.AsTombstone(obj); tomb {
		return obj, nil
	}
	out, err := b.transformer(obj)
	if err != nil {
		return nil, fmt.Errorf("%s: transforming object %q: %w", b.name, key, err)
	}
	return out, nil
}

// RelistsPageByPage reports whether relists are applied page by page.
func (b *base[D, O]) RelistsPageByPage() bool {
	return b.lists.PageByPage
}

// lister is the part of taking a list that differs between the queues.
type lister interface {
	// whole returns the sink of a list taken whole.
	whole(source Source) Sink
	// listedObject returns what the queue keeps of obj, listed under key.
	listedObject(key string, obj any, source Source) (any, error)
	// queuePage queues a page of a relist applied page by page and waits
	// until the consumer is ready for the next one.
	queuePage(ctx context.Context, page []listedObject) error
	// finishPages ends a relist applied page by page.
	finishPages(ctx context.Context, listed map[string]struct{}, resourceVersion string) error
}

// beginList starts a list: a relist of a queue configured with
// Lists.PageByPage is applied page by page, any other list is taken whole.
func (b *base[D, O]) beginList(l lister, source Source) Sink {
	if !b.lists.PageByPage || !source.Relist {
		return l.whole(source)
	}
	var o O
	return &Pages{
		logger:   b.logger,
		keyOf:    b.KeyOf,
		streamed: source.Streamed,
		prepare: func(key string, obj any) (any, error) {
			return l.listedObject(key, obj, source)
		},
		refused: o.Refused,
		hand:    l.queuePage,
		finish:  l.finishPages,
	}
}
