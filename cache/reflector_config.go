package cache

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache/internal/diag"
)

// reflectorConfig is everything a Reflector is built from. It is assembled
// once, from ReflectorOptions (NewReflectorWithOptions) or by the controller
// from its Config, and handed to newReflector; nothing writes into a Reflector
// after that except through its exported fields, which client-go's users set
// before Run.
type reflectorConfig struct {
	// name and typeDescription, when empty, are derived as
	// ReflectorOptions documents.
	name            string
	typeDescription string
	// logger, when not nil, replaces the logger of Run's context.
	logger *klog.Logger

	resyncPeriod time.Duration
	// shouldResync is Reflector.ShouldResync's initial value.
	shouldResync func() bool
	// minWatchTimeout below the floor of 5 minutes means the floor.
	minWatchTimeout time.Duration
	// clock nil means the real clock.
	clock clock.Clock
	// backoff nil means client-go's default backoff.
	backoff *wait.Backoff

	// watchListPageSize is Reflector.WatchListPageSize's initial value.
	watchListPageSize int64
	// maxInternalErrorRetryDuration is
	// Reflector.MaxInternalErrorRetryDuration's initial value.
	maxInternalErrorRetryDuration time.Duration
	// watchIdleTimeout is ReflectorOptions.WatchIdleTimeout.
	watchIdleTimeout time.Duration
	// initialEventsTimeout bounds the silence of a streaming list before its
	// end bookmark; zero means the default (reflectorInitialEventsTimeout),
	// negative means no bound (as client-go).
	initialEventsTimeout time.Duration

	// watchErrorHandler, when not nil, replaces DefaultWatchErrorHandler
	// and also hears of the failures the Reflector handles within a cycle.
	watchErrorHandler WatchErrorHandlerWithContext
	// resume, when not nil, gives the state the first cycle starts from
	// instead of listing (the informer's snapshot, snapshot.go).
	resume func(context.Context) (*reflectorResume, error)
	// admission, when not nil, limits the Reflector's lists and streaming
	// lists together with those of the other Reflectors sharing it;
	// admissionPriority orders it among them (list_admission.go).
	admission         listAdmitter
	admissionPriority int
	// maxRetryAfter is the longest Retry-After honoured; zero means
	// listadmission.DefaultMaxRetryAfter, negative no maximum.
	maxRetryAfter time.Duration
	// stats, when not nil, are the diagnostics counters to update (a shared
	// informer's); otherwise the Reflector has its own.
	stats *diag.Stats
}

// config returns the reflectorConfig of options.
func (options ReflectorOptions) config() reflectorConfig {
	return reflectorConfig{
		name:             options.Name,
		typeDescription:  options.TypeDescription,
		logger:           options.Logger,
		resyncPeriod:     options.ResyncPeriod,
		minWatchTimeout:  options.MinWatchTimeout,
		clock:            options.Clock,
		backoff:          options.Backoff,
		watchIdleTimeout: options.WatchIdleTimeout,

		admission:         options.ListAdmission,
		admissionPriority: options.ListAdmissionPriority,
		maxRetryAfter:     options.MaxRetryAfter,
	}
}
