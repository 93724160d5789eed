package sharding

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache"
)

// InformerOptions configures NewInformer.
type InformerOptions struct {
	// Member is the membership whose ranges the informer keeps. Required.
	// The informer does not run it: run Member.Run alongside.
	Member *Member
	// Key is the hashed field, cache.ShardByUID (the zero value's meaning)
	// or cache.ShardByNamespace; see cache.Shard for the trade.
	Key cache.ShardKey
	// Range are the options of the informer of each range, built with
	// cache.NewSharedIndexInformerWithOptions. Its Shard must be zero (the
	// informer sets it to the range) and its SnapshotFile empty: snapshots
	// are off for sharded informers, since a file of one range would be
	// tied to a range the replica may not own on its next start.
	Range cache.SharedIndexInformerOptions
}

// RangeSyncHandler is an optional interface of a handler registered with a
// sharded Informer: besides the changes of objects, it is told when the
// objects of a range it gained have all been delivered to it, and when the
// informer dropped a range it lost. Both calls are made in the handler's
// sequence (never at the same time as another call of the handler).
// OnRangeSynced comes once the range's initial list was delivered (changes
// of the range that arrived after the list may come before it); it is not
// called for a range lost before that. OnRangeLost comes once the range's
// informer stopped: no notification of the range's objects follows it
// until the range is gained again, and a range gained again lists only
// after its handlers were told of the loss.
type RangeSyncHandler interface {
	// OnRangeSynced: the initial list of range r was delivered to the
	// handler (as adds with isInInitialList true).
	OnRangeSynced(r Range)
	// OnRangeLost: the informer no longer holds range r: its objects left
	// the cache without delete notifications, and no notification of them
	// follows. Keys of r still in a work queue find nothing in the lister.
	OnRangeLost(r Range)
}

// RangeInformerStatus is one held range of a sharded Informer.
type RangeInformerStatus struct {
	Range Range
	// Synced reports whether the range's initial list is in the cache.
	Synced bool
	// Acting reports whether the member acts on the range now (see
	// Member.Acting).
	Acting bool
	// Status is the range informer's own status.
	Status cache.InformerStatus
}

// Informer is a cache.SharedIndexInformer over the ranges a Member holds:
// one range informer (its own Reflector, shard selector, queue and store)
// per held range, built when the member acquires the range, so that gaining
// a range lists only that range; and dropped when the member loses it,
// taking exactly that range's objects out of the cache.
//
// What differs from an informer over a whole resource:
//
//   - GetStore and GetIndexer read the union of the held ranges' stores:
//     exactly the objects of the held ranges (acting or suspended). A read
//     reads each range's store on its own, so a List is not one snapshot of
//     all ranges; an object never moves between ranges (the hashed uid or
//     namespace never changes), so no key appears twice. The store is read
//     only: its writing methods return an error.
//   - Handlers never see a lost range's objects deleted: a lost range's
//     objects leave the cache silently (a controller would otherwise run
//     its deletion logic on live objects), and a handler implementing
//     RangeSyncHandler is told OnRangeLost. A gained range's objects reach
//     handlers as adds with isInInitialList true, then OnRangeSynced.
//     Each handler is called sequentially, across all ranges.
//   - HasSynced becomes true once the member completed its first round and
//     every range it held then has synced (or was lost), and stays true:
//     ranges gained later report their own sync through RangeStatus and
//     RangeSyncHandler.
//   - LastSyncResourceVersion and the store's LastStoreSyncResourceVersion
//     are the lowest over the synced ranges, "" while none is: every change
//     at or below it is in the cache of every synced range.
//   - A suspended range (the member's renewals fail) keeps its cache and its
//     handlers go on hearing of its changes, if any arrive: a controller
//     checks Acting before it acts on an object.
//   - Snapshots are off (InformerOptions.Range.SnapshotFile must be empty).
//
// All methods are safe for concurrent use. kinformer extension.
type Informer struct {
	lw      cache.ListerWatcher
	example runtime.Object
	opts    InformerOptions
	shards  []cache.Shard // one per range of the group, in index order

	// mu guards everything below.
	mu                sync.RWMutex
	ranges            map[int]*rangeInformer
	losing            map[int]chan struct{} // closed once a lost range's OnRangeLost calls are made
	handlers          []*registration
	indexers          cache.Indexers
	transform         cache.TransformFunc
	watchErrorHandler cache.WatchErrorHandlerWithContext
	started, stopped  bool
	ctx               context.Context // Run's, once started
	wg                sync.WaitGroup  // goroutines of Run, ranges and waits

	synced      chan struct{} // closed once HasSynced
	initialDone chan struct{} // closed once the initial ranges are known
	initial     []*rangeInformer
}

// rangeInformer is the informer of one held range.
type rangeInformer struct {
	r        Range
	informer cache.SharedIndexInformer
	cancel   context.CancelFunc
	stopped  chan struct{} // closed once its Run returned
	regs     map[*registration]rangeRegistration
}

// rangeRegistration is a handler's registration with one range informer.
type rangeRegistration struct {
	handle cache.ResourceEventHandlerRegistration
	// reported is closed once OnRangeSynced was called or will never be.
	reported chan struct{}
}

// NewInformer returns the sharded informer of the objects lw lists and
// watches, of exampleObject's type, over the ranges options.Member holds.
// It returns an error for a missing Member, a Key other than the two
// supported, a Range.Shard set or a Range.SnapshotFile given.
func NewInformer(lw cache.ListerWatcher, exampleObject runtime.Object, options InformerOptions) (*Informer, error) {
	switch {
	case options.Member == nil:
		return nil, errors.New("sharded informer: no Member")
	case !options.Range.Shard.IsZero():
		return nil, errors.New("sharded informer: Range.Shard is set; the informer sets each range's")
	case options.Range.SnapshotFile != "":
		return nil, errors.New("sharded informer: snapshots are off for sharded informers, Range.SnapshotFile must be empty")
	}
	if options.Key == "" {
		options.Key = cache.ShardByUID
	}
	if options.Key != cache.ShardByUID && options.Key != cache.ShardByNamespace {
		return nil, fmt.Errorf("sharded informer: unsupported Key %q", options.Key)
	}
	indexers := cache.Indexers{}
	maps.Copy(indexers, options.Range.Indexers)
	ranges := options.Member.Ranges()
	shards := make([]cache.Shard, len(ranges))
	for i, r := range ranges {
		shards[i] = cache.Shard{Key: options.Key, Ranges: []cache.ShardRange{r.Bounds}}
	}
	return &Informer{
		lw: lw, example: exampleObject, opts: options, shards: shards,
		ranges:      map[int]*rangeInformer{},
		losing:      map[int]chan struct{}{},
		indexers:    indexers,
		synced:      make(chan struct{}),
		initialDone: make(chan struct{}),
	}, nil
}

// Run runs the informer until stopCh is closed; see RunWithContext.
func (s *Informer) Run(stopCh <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stopCh:
			cancel()
		case <-ctx.Done():
		}
	}()
	s.RunWithContext(ctx)
}

// RunWithContext follows the member's ranges until ctx ends: it builds and
// runs a range informer for every range the member acquires and stops and
// drops the one of every range it loses. When ctx ends it stops them all
// (without delete notifications) and returns once every goroutine it
// started, handlers' included, has stopped. An informer runs only once; a
// second call returns at once.
func (s *Informer) RunWithContext(ctx context.Context) {
	s.mu.Lock()
	if s.started || s.stopped {
		s.mu.Unlock()
		return
	}
	s.started, s.ctx = true, ctx
	for _, reg := range s.handlers {
		s.watchRegistrationSync(reg)
	}
	s.mu.Unlock()

	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.waitInitialSync(ctx)
	}()
	remove := s.opts.Member.AddRangeHandler(RangeHandlerFunc(s.onRangeEvent))
	<-ctx.Done()
	remove()

	s.mu.Lock()
	s.stopped = true
	held := slices.Collect(maps.Values(s.ranges))
	s.ranges = map[int]*rangeInformer{}
	s.mu.Unlock()
	for _, ri := range held {
		ri.cancel()
	}
	s.wg.Wait()
}

// onRangeEvent follows the member.
func (s *Informer) onRangeEvent(e RangeEvent) {
	switch e.Type {
	case RangeAcquired:
		s.gain(e.Range)
	case RangeLost:
		s.lose(e.Range)
	}
}

// gain builds, registers every handler with, and starts the informer of r.
func (s *Informer) gain(r Range) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.ranges[r.Index] != nil {
		return
	}
	opts := s.opts.Range
	opts.Shard = s.shards[r.Index]
	opts.Indexers = maps.Clone(s.indexers)
	inf := cache.NewSharedIndexInformerWithOptions(s.lw, s.example, opts)
	logger := klog.FromContext(s.ctx).WithValues("range", r.Index)
	if s.transform != nil {
		if err := inf.SetTransform(s.transform); err != nil {
			logger.Error(err, "Setting the transform of a range informer")
		}
	}
	if s.watchErrorHandler != nil {
		if err := inf.SetWatchErrorHandlerWithContext(s.watchErrorHandler); err != nil {
			logger.Error(err, "Setting the watch error handler of a range informer")
		}
	}
	ctx, cancel := context.WithCancel(s.ctx)
	ri := &rangeInformer{r: r, informer: inf, cancel: cancel, stopped: make(chan struct{}), regs: map[*registration]rangeRegistration{}}
	for _, reg := range s.handlers {
		s.addToRange(ri, reg)
	}
	s.ranges[r.Index] = ri
	previous := s.losing[r.Index]
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(ri.stopped)
		if previous != nil {
			// The range was held before: its handlers hear OnRangeLost of
			// that time before anything of this one.
			select {
			case <-previous:
			case <-ctx.Done():
				return
			}
		}
		inf.RunWithContext(klog.NewContext(ctx, logger))
	}()
}

// lose drops the informer of r from the cache at once and stops it; a
// handler implementing RangeSyncHandler hears OnRangeLost once the range
// informer stopped delivering. It does not wait for the stop, so that the
// member's renewals are not held up by a slow handler.
func (s *Informer) lose(r Range) {
	s.mu.Lock()
	ri := s.ranges[r.Index]
	delete(s.ranges, r.Index)
	var reported chan struct{}
	if ri != nil {
		// Under the lock, so that Run, which stops under it, waits for
		// this goroutine too.
		s.wg.Add(1)
		reported = make(chan struct{})
		s.losing[r.Index] = reported
	}
	s.mu.Unlock()
	if ri == nil {
		return
	}
	ri.cancel()
	go func() {
		defer s.wg.Done()
		defer close(reported)
		<-ri.stopped
		for reg, rr := range ri.regs {
			<-rr.reported
			reg.rangeLost(r)
		}
	}()
}

// waitInitialSync closes synced once the member's first round is done and
// every range held then has synced or been lost.
func (s *Informer) waitInitialSync(ctx context.Context) {
	select {
	case <-s.opts.Member.Ready():
	case <-ctx.Done():
		return
	}
	s.mu.Lock()
	s.initial = slices.Collect(maps.Values(s.ranges))
	close(s.initialDone)
	s.mu.Unlock()
	for _, ri := range s.initial {
		select {
		case <-ri.informer.HasSyncedChecker().Done():
		case <-ri.stopped:
		case <-ctx.Done():
			return
		}
	}
	close(s.synced)
}

// Acting reports whether the member acts now on the range that holds obj
// (by the informer's Key): what a controller checks before it acts on an
// object, since handlers go on hearing of a suspended range's objects. It
// returns an error for an object without metadata.
func (s *Informer) Acting(obj interface{}) (bool, error) {
	for i, sh := range s.shards {
		in, err := sh.Contains(obj)
		if err != nil {
			return false, fmt.Errorf("sharded informer: %w", err)
		}
		if in {
			return s.opts.Member.Acting(i), nil
		}
	}
	return false, nil
}

// HasSynced reports whether the member completed its first round and every
// range it held then has synced (or was lost since). Once true, it stays
// true.
func (s *Informer) HasSynced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

// HasSyncedChecker is HasSynced as a DoneChecker.
func (s *Informer) HasSyncedChecker() cache.DoneChecker {
	return doneChecker{name: "sharded informer of " + s.opts.Member.Identity(), done: s.synced}
}

// RangeStatus returns the ranges the informer holds now, in index order.
func (s *Informer) RangeStatus() []RangeInformerStatus {
	held := s.held()
	out := make([]RangeInformerStatus, len(held))
	for i, ri := range held {
		st, _ := cache.GetInformerStatus(ri.informer)
		out[i] = RangeInformerStatus{Range: ri.r, Synced: ri.informer.HasSynced(), Acting: s.opts.Member.Acting(ri.r.Index), Status: st}
	}
	return out
}

// held returns the held ranges' informers in index order.
func (s *Informer) held() []*rangeInformer {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := slices.Collect(maps.Values(s.ranges))
	slices.SortFunc(out, func(a, b *rangeInformer) int { return a.r.Index - b.r.Index })
	return out
}

// LastSyncResourceVersion returns the lowest LastSyncResourceVersion of
// the synced ranges, "" while none is synced.
func (s *Informer) LastSyncResourceVersion() string {
	return lowest(s.held(), func(ri *rangeInformer) string { return ri.informer.LastSyncResourceVersion() })
}

// GetStore returns the read-only union of the held ranges' stores.
func (s *Informer) GetStore() cache.Store { return unionIndexer{s} }

// GetIndexer returns the read-only union of the held ranges' indexers.
func (s *Informer) GetIndexer() cache.Indexer { return unionIndexer{s} }

// GetController returns a Controller whose Run methods do nothing and whose
// other methods report the informer's state.
func (s *Informer) GetController() cache.Controller { return controller{s} }

// IsStopped reports whether the informer has stopped.
func (s *Informer) IsStopped() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.stopped
}

// AddIndexers adds indices to the cache of every held range and of every
// range gained later. It fails once the informer stopped and for index
// names that exist already.
func (s *Informer) AddIndexers(indexers cache.Indexers) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errors.New("sharded informer: AddIndexers after the informer stopped")
	}
	for name := range indexers {
		if _, ok := s.indexers[name]; ok {
			return fmt.Errorf("sharded informer: indexer %q already exists", name)
		}
	}
	for _, ri := range s.ranges {
		if err := ri.informer.AddIndexers(indexers); err != nil {
			return fmt.Errorf("sharded informer: adding indexers to range %d: %w", ri.r.Index, err)
		}
	}
	maps.Copy(s.indexers, indexers)
	return nil
}

// SetTransform sets the transform of every range informer (see
// cache.SharedInformer.SetTransform). After Run it returns an error.
func (s *Informer) SetTransform(handler cache.TransformFunc) error {
	return s.beforeRun("SetTransform", func() { s.transform = handler })
}

// SetWatchErrorHandler sets the watch error handler of every range
// informer (see cache.SharedInformer.SetWatchErrorHandler). After Run it
// returns an error.
func (s *Informer) SetWatchErrorHandler(handler cache.WatchErrorHandler) error {
	return s.SetWatchErrorHandlerWithContext(func(_ context.Context, r *cache.Reflector, err error) { handler(r, err) })
}

// SetWatchErrorHandlerWithContext is SetWatchErrorHandler for a handler
// that also receives a context.
func (s *Informer) SetWatchErrorHandlerWithContext(handler cache.WatchErrorHandlerWithContext) error {
	return s.beforeRun("SetWatchErrorHandler", func() { s.watchErrorHandler = handler })
}

func (s *Informer) beforeRun(what string, set func()) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.stopped {
		return fmt.Errorf("sharded informer: %s after the informer started", what)
	}
	set()
	return nil
}

// lowest returns the lowest resourceVersion of the synced ones among
// held, compared as integers (as the API server's are); "" when none is
// synced or one does not parse.
func lowest(held []*rangeInformer, rv func(*rangeInformer) string) string {
	var best string
	var bestN uint64
	for _, ri := range held {
		if !ri.informer.HasSynced() {
			continue
		}
		v := rv(ri)
		var n uint64
		if _, err := fmt.Sscan(v, &n); err != nil {
			utilruntime.HandleError(fmt.Errorf("sharded informer: range %d: resourceVersion %q is not an integer", ri.r.Index, v))
			return ""
		}
		if best == "" || n < bestN {
			best, bestN = v, n
		}
	}
	return best
}

// doneChecker is a cache.DoneChecker over a channel.
type doneChecker struct {
	name string
	done <-chan struct{}
}

// Name names what is waited for.
func (d doneChecker) Name() string { return d.name }

// Done returns the channel closed once it is done.
func (d doneChecker) Done() <-chan struct{} { return d.done }

// controller is what GetController returns.
type controller struct{ s *Informer }

// RunWithContext does nothing: run the Informer.
func (c controller) RunWithContext(context.Context) {}

// Run does nothing: run the Informer.
func (c controller) Run(<-chan struct{}) {}

// HasSynced is Informer.HasSynced.
func (c controller) HasSynced() bool { return c.s.HasSynced() }

// HasSyncedChecker is Informer.HasSyncedChecker.
func (c controller) HasSyncedChecker() cache.DoneChecker { return c.s.HasSyncedChecker() }

// LastSyncResourceVersion is Informer.LastSyncResourceVersion.
func (c controller) LastSyncResourceVersion() string { return c.s.LastSyncResourceVersion() }

var (
	_ cache.SharedIndexInformer = (*Informer)(nil)
	_ cache.Controller          = controller{}
)

// InformerOf returns the sharded Informer informer is or wraps: informer
// itself, or the one behind a wrapper with an Unwrap() cache.SharedIndexInformer
// method (the typed informers of package cache and of the factories, which
// informers.WithMembership and the dynamic and metadata factories'
// WithMembership build over an Informer). It reports false for an informer
// that is not sharded.
func InformerOf(informer cache.SharedInformer) (*Informer, bool) {
	for informer != nil {
		switch i := informer.(type) {
		case *Informer:
			return i, i != nil
		case wrapper:
			informer = i.Unwrap()
		default:
			return nil, false
		}
	}
	return nil, false
}

// wrapper is an informer wrapping another (package cache's typed informer).
type wrapper interface {
	Unwrap() cache.SharedIndexInformer
}
