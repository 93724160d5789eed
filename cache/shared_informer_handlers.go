package cache

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/klog/v2"

	"github.com/kinformer/kinformer/cache/internal/fanout"
)

const (
	// minimumResyncPeriod is the shortest resync period a handler can get.
	minimumResyncPeriod = 1 * time.Second
)

func (s *sharedIndexInformer) AddEventHandler(handler ResourceEventHandler) (ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithOptions(handler, HandlerOptions{})
}

func (s *sharedIndexInformer) AddEventHandlerWithResyncPeriod(handler ResourceEventHandler, resyncPeriod time.Duration) (ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithOptions(handler, HandlerOptions{ResyncPeriod: &resyncPeriod})
}

// AddEventHandlerWithOptions implements SharedInformer. A nil handler is an
// error. A handler that panics does not crash the process: the panic is
// recovered, reported through utilruntime.PanicHandlers ("Observed a panic")
// and then logged with the handler's name, counted, the notification is
// skipped, and the informer and the other handlers go on. An initial-list
// add whose handler panicked still counts as processed, so the registration
// can sync. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (s *sharedIndexInformer) AddEventHandlerWithOptions(handler ResourceEventHandler, options HandlerOptions) (ResourceEventHandlerRegistration, error) {
	if handler == nil {
		return nil, errors.New("event handler must not be nil")
	}
	s.startedLock.Lock()
	defer s.startedLock.Unlock()

	if s.stopped {
		return nil, fmt.Errorf("handler %v was not added to shared informer because it has stopped already", handler)
	}

	logger := klog.Background()
	if options.Logger != nil {
		logger = *options.Logger
	}
	resyncPeriod := s.config.ResyncPeriod
	if options.ResyncPeriod != nil {
		resyncPeriod = *options.ResyncPeriod
	}
	if resyncPeriod > 0 {
		if resyncPeriod < minimumResyncPeriod {
			logger.Info("Warning: resync period is too small. Changing it to the minimum allowed value", "resyncPeriod", resyncPeriod, "minimumResyncPeriod", minimumResyncPeriod)
			resyncPeriod = minimumResyncPeriod
		}
		if resyncPeriod < s.resyncCheckPeriod {
			if s.started {
				logger.Info("Warning: resync period is smaller than resync check period and the informer has already started. Changing it to the resync check period", "resyncPeriod", resyncPeriod, "resyncCheckPeriod", s.resyncCheckPeriod)
				resyncPeriod = s.resyncCheckPeriod
			} else {
				s.resyncCheckPeriod = resyncPeriod
				s.processor.ResyncCheckPeriodChanged(func(requested time.Duration) time.Duration {
					return determineResyncPeriod(logger, requested, resyncPeriod)
				})
			}
		}
	}

	name := nameForHandler(handler)
	buffer, err := fanoutBuffer(options.BufferPolicy)
	if err != nil {
		return nil, fmt.Errorf("handler %s: %w", name, err)
	}
	l, err := s.processor.NewListener(fanout.ListenerConfig{
		Logger:                logger,
		Handler:               handler,
		Name:                  name,
		SyncName:              fmt.Sprintf("%s + event handler %s", s.HasSyncedChecker().Name(), name),
		RequestedResyncPeriod: resyncPeriod,
		ResyncPeriod:          determineResyncPeriod(logger, resyncPeriod, s.resyncCheckPeriod),
		Now:                   s.clock.Now(),
		Buffer:                buffer,
	})
	if err != nil {
		return nil, err
	}
	reg := &handlerRegistration{listener: l}

	if !s.started {
		s.processor.Add(l)
		return reg, nil
	}

	// Running: replay the cache as the handler's initial list, with no
	// change applied in between, then register it.
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	items := s.indexer.List()
	if len(items) > 0 {
		notes := make([]fanout.Notification, len(items))
		for i, item := range items {
			notes[i] = fanout.Notification{Kind: fanout.Add, Initial: true, NewObj: item}
		}
		l.Enqueue(notes, true)
	}
	s.processor.Add(l)
	return reg, nil
}

func (s *sharedIndexInformer) RemoveEventHandler(handle ResourceEventHandlerRegistration) error {
	l, err := listenerOf(handle)
	if err != nil {
		return err
	}
	s.processor.Remove(l)
	return nil
}

// determineResyncPeriod returns the effective resync period of a handler
// that asked for desired when the informer checks every check: 0 stays 0, an
// informer that never resyncs gives 0, and desired is raised to check.
func determineResyncPeriod(logger klog.Logger, desired, check time.Duration) time.Duration {
	switch {
	case desired == 0:
		return 0
	case check == 0:
		logger.Info("Warning: the specified resyncPeriod is invalid because this shared informer doesn't support resyncing", "desired", desired)
		return 0
	case desired < check:
		logger.Info("Warning: the specified resyncPeriod is being increased to the minimum resyncCheckPeriod", "desired", desired, "resyncCheckPeriod", check)
		return check
	}
	return desired
}

// ShutDownEventHandler removes a handler from informer like
// RemoveEventHandler and then waits until the handler has stopped: no
// notification is being delivered to it and none will be. It returns at once
// when the informer never ran. It must not be called from the handler's own
// methods (that would wait forever), and it fails for registrations not
// created by this package. A nil informer is an error. Differs from
// client-go v0.37.2; see COMPATIBILITY.md.
func ShutDownEventHandler(informer SharedInformer, handle ResourceEventHandlerRegistration) error {
	if informer == nil {
		return errors.New("cannot shut down an event handler of a nil informer")
	}
	if err := informer.RemoveEventHandler(handle); err != nil {
		return err
	}
	s, ok := handle.(interface{ ShutdownChan() <-chan struct{} })
	if !ok {
		return fmt.Errorf("event handler registration of type %T does not support ShutdownChan()", handle)
	}
	<-s.ShutdownChan()
	return nil
}
