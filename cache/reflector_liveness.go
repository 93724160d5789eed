package cache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// DefaultWatchIdleTimeout is the watch liveness deadline of shared informers
// whose SharedIndexInformerOptions.WatchIdleTimeout is zero: a watch that
// receives no event and no bookmark for this long is reopened from the last
// resourceVersion. It is well under the 45 seconds (30 s read-idle plus 15 s
// ping timeout) after which client-go's HTTP/2 transport notices a dead
// peer, and it also catches what pings cannot: a watch stream that is stuck
// while its connection answers pings, and HTTP/1.1 watches, which have no
// pings at all.
const DefaultWatchIdleTimeout = 30 * time.Second

// WatchIdleTimeoutError is the error a watch ends with when it received no
// event and no bookmark for the Reflector's WatchIdleTimeout. The Reflector
// then reopens the watch from ResourceVersion without relisting; watch error
// handlers receive it so that they can count such restarts.
type WatchIdleTimeoutError struct {
	// Name is the Reflector's name.
	Name string
	// Timeout is the liveness deadline that passed.
	Timeout time.Duration
	// ResourceVersion is the version the watch is reopened from.
	ResourceVersion string
}

// Error implements error.
func (e *WatchIdleTimeoutError) Error() string {
	return fmt.Sprintf("reflector %s: watch received no event or bookmark for %v; reopening it from resourceVersion %q", e.Name, e.Timeout, e.ResourceVersion)
}

func isWatchIdleTimeout(err error) bool {
	var idle *WatchIdleTimeoutError
	return errors.As(err, &idle)
}

// livenessWatchTimeoutSeconds draws the timeoutSeconds of a watch request
// when the liveness deadline D is on: in [D/2, 5D/6), at least one second.
// kube-apiserver sends a watch's bookmarks about once a minute, and one
// about two seconds before the watch's timeout, then closes it; with a
// timeout below D a healthy idle watch therefore always delivers that
// bookmark (which also moves the resourceVersion forward, keeping it from
// expiring) and closes cleanly before the deadline, and is reopened as any
// closed watch is. Only a watch that really went silent hits the deadline.
func (r *Reflector) livenessWatchTimeoutSeconds() *int64 {
	lo := r.watchIdleTimeout.Seconds() / 2
	hi := r.watchIdleTimeout.Seconds() * 5 / 6
	seconds := int64(lo + rand.Float64()*(hi-lo))
	if seconds < 1 {
		seconds = 1
	}
	return &seconds
}

// effectiveWatchIdleTimeout maps an informer's option to the Reflector's
// deadline: zero is the default, negative is off.
func effectiveWatchIdleTimeout(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultWatchIdleTimeout
	case d < 0:
		return 0
	}
	return d
}

// SetWatchIdleTimeout sets the watch liveness deadline of informer (see
// SharedIndexInformerOptions.WatchIdleTimeout: zero means the default,
// negative turns it off). It is how factories apply their option to the
// informers they build. kinformer extension, not in client-go.
//
// It returns an error for a nil informer, one not built by this package, and
// one that has started already.
func SetWatchIdleTimeout(informer SharedInformer, d time.Duration) error {
	if informer == nil {
		return errors.New("cannot set the watch idle timeout of a nil informer")
	}
	s, ok := unwrapInformer(informer).(*sharedIndexInformer)
	if !ok {
		return fmt.Errorf("cannot set the watch idle timeout of an informer of type %T: it is not built by kinformer's cache package", informer)
	}
	s.startedLock.Lock()
	defer s.startedLock.Unlock()
	if s.started {
		return errors.New("cannot set the watch idle timeout: informer has already started")
	}
	s.watchIdleTimeout = d
	return nil
}
