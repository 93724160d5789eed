package sharding

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache"
)

// registration is one handler of a sharded Informer, registered with
// every range informer.
type registration struct {
	s       *Informer
	handler cache.ResourceEventHandler
	options cache.HandlerOptions
	// mu makes the handler's calls sequential across ranges.
	mu     sync.Mutex
	synced chan struct{}
}

// HasSynced reports whether the informer has synced and the handler was
// given the initial list of every range held at that time (or the range
// was lost). Once true, it stays true.
func (r *registration) HasSynced() bool {
	select {
	case <-r.synced:
		return true
	default:
		return false
	}
}

// HasSyncedChecker is HasSynced as a DoneChecker.
func (r *registration) HasSyncedChecker() cache.DoneChecker {
	return doneChecker{name: "handler of the sharded informer of " + r.s.opts.Member.Identity(), done: r.synced}
}

// OnAdd passes the call on, after any other call of the handler.
func (r *registration) OnAdd(obj interface{}, isInInitialList bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handler.OnAdd(obj, isInInitialList)
}

// OnUpdate passes the call on, after any other call of the handler.
func (r *registration) OnUpdate(oldObj, newObj interface{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handler.OnUpdate(oldObj, newObj)
}

// OnDelete passes the call on, after any other call of the handler.
func (r *registration) OnDelete(obj interface{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handler.OnDelete(obj)
}

func (r *registration) rangeSynced(rg Range) {
	if h, ok := r.handler.(RangeSyncHandler); ok {
		r.mu.Lock()
		defer r.mu.Unlock()
		h.OnRangeSynced(rg)
	}
}

func (r *registration) rangeLost(rg Range) {
	if h, ok := r.handler.(RangeSyncHandler); ok {
		r.mu.Lock()
		defer r.mu.Unlock()
		h.OnRangeLost(rg)
	}
}

// AddEventHandler registers handler with the default resync period; see
// AddEventHandlerWithOptions.
func (s *Informer) AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithOptions(handler, cache.HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod registers handler with its own resync
// period; see AddEventHandlerWithOptions.
func (s *Informer) AddEventHandlerWithResyncPeriod(handler cache.ResourceEventHandler, resyncPeriod time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithOptions(handler, cache.HandlerOptions{ResyncPeriod: &resyncPeriod})
}

// AddEventHandlerWithOptions registers handler with every held range's
// informer, and with every range gained later, with options (see
// cache.SharedInformer.AddEventHandlerWithOptions). The handler is called
// sequentially across ranges; it may implement RangeSyncHandler. It
// returns an error for a nil handler, once the informer stopped, and when
// a range informer refuses it.
func (s *Informer) AddEventHandlerWithOptions(handler cache.ResourceEventHandler, options cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	if handler == nil {
		return nil, errors.New("sharded informer: nil handler")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil, errors.New("sharded informer: handler added after the informer stopped")
	}
	reg := &registration{s: s, handler: handler, options: options, synced: make(chan struct{})}
	for _, ri := range s.ranges {
		if err := s.addToRange(ri, reg); err != nil {
			for _, other := range s.ranges {
				if rr, ok := other.regs[reg]; ok {
					_ = other.informer.RemoveEventHandler(rr.handle)
					delete(other.regs, reg)
				}
			}
			return nil, err
		}
	}
	s.handlers = append(s.handlers, reg)
	if s.started {
		s.watchRegistrationSync(reg)
	}
	return reg, nil
}

// RemoveEventHandler unregisters a handler from every range informer.
// Removing an unknown or removed handler is a no-op; a registration of
// another informer type is an error.
func (s *Informer) RemoveEventHandler(handle cache.ResourceEventHandlerRegistration) error {
	reg, ok := handle.(*registration)
	if !ok || reg.s != s {
		return fmt.Errorf("sharded informer: registration %T is not one of this informer", handle)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.Index(s.handlers, reg)
	if i < 0 {
		return nil
	}
	s.handlers = slices.Delete(s.handlers, i, i+1)
	var errs []error
	for _, ri := range s.ranges {
		if rr, ok := ri.regs[reg]; ok {
			errs = append(errs, ri.informer.RemoveEventHandler(rr.handle))
			delete(ri.regs, reg)
		}
	}
	return errors.Join(errs...)
}

// addToRange registers reg with ri's informer and, for a RangeSyncHandler,
// starts the wait that tells it OnRangeSynced. s.mu is held.
func (s *Informer) addToRange(ri *rangeInformer, reg *registration) error {
	handle, err := ri.informer.AddEventHandlerWithOptions(reg, reg.options)
	if err != nil {
		if s.ctx != nil {
			klog.FromContext(s.ctx).Error(err, "Registering a handler with a range informer", "range", ri.r.Index)
		}
		return fmt.Errorf("sharded informer: registering a handler with range %d: %w", ri.r.Index, err)
	}
	rr := rangeRegistration{handle: handle, reported: make(chan struct{})}
	ri.regs[reg] = rr
	if _, ok := reg.handler.(RangeSyncHandler); !ok {
		close(rr.reported)
		return nil
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(rr.reported)
		select {
		case <-handle.HasSyncedChecker().Done():
			reg.rangeSynced(ri.r)
		case <-ri.stopped:
		}
	}()
	return nil
}

// watchRegistrationSync starts the wait that closes reg.synced: once the
// initial ranges are known, for each of them, until reg's registration
// with it has synced or the range stopped. s.mu is held and Run started.
func (s *Informer) watchRegistrationSync(reg *registration) {
	ctx := s.ctx
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-s.initialDone:
		case <-ctx.Done():
			return
		}
		for _, ri := range s.initial {
			s.mu.RLock()
			rr, ok := ri.regs[reg]
			s.mu.RUnlock()
			if !ok {
				continue // removed, or the range was lost before reg came
			}
			select {
			case <-rr.handle.HasSyncedChecker().Done():
			case <-ri.stopped:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-s.synced:
		case <-ctx.Done():
			return
		}
		close(reg.synced)
	}()
}
