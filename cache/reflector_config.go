package cache

import (
	"context"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache/internal/diag"
	"github.com/kinformer/kinformer/cache/internal/reflector"
	"github.com/kinformer/kinformer/listadmission"
)

// reflectorConfig is everything a Reflector is built from, as effective
// values: each public way to build one resolves its own options into it in
// one step (ReflectorOptions.config, Config.reflectorConfig,
// informerConfig.resolve), applying the defaults and mapping "off" to zero,
// and newReflector takes it as it is. Nothing writes into a Reflector after
// that except through its exported fields, which client-go's users set
// before Run.
type reflectorConfig struct {
	// name and typeDescription, when empty, are derived as
	// ReflectorOptions documents.
	name            string
	typeDescription string
	// logger, when not nil, replaces the logger of Run's context.
	logger *klog.Logger

	// engine are the settings the Reflector's engine keeps for its life
	// (watch timeouts, backoff, Retry-After bound, liveness deadline,
	// streaming-list bound, resync period, admission priority).
	engine reflector.Settings
	// shouldResync is Reflector.ShouldResync's initial value.
	shouldResync func() bool
	// clock nil means the real clock.
	clock clock.Clock

	// watchListPageSize is Reflector.WatchListPageSize's initial value.
	watchListPageSize int64
	// maxInternalErrorRetryDuration is
	// Reflector.MaxInternalErrorRetryDuration's initial value.
	maxInternalErrorRetryDuration time.Duration

	// watchErrorHandler, when not nil, replaces DefaultWatchErrorHandler
	// and also hears of the failures the Reflector handles within a cycle.
	watchErrorHandler WatchErrorHandlerWithContext
	// resume, when not nil, gives the state the first cycle starts from
	// instead of listing (the informer's snapshot, snapshot.go).
	resume func(context.Context) (*reflectorResume, error)
	// admission, when not nil, limits the Reflector's lists and streaming
	// lists together with those of the other Reflectors sharing it;
	// engine.AdmissionPriority orders it among them (listAdmitter,
	// reflector_engine.go).
	admission listAdmitter
	// stats, when not nil, are the diagnostics counters to update (a shared
	// informer's); otherwise the Reflector has its own.
	stats *diag.Stats
	// shardErr, when not nil, says why the shard option is invalid: every
	// cycle fails with it before any request (engine.Shard is nil then).
	shardErr error
}

// config is ReflectorOptions' defaulting step: it returns the
// reflectorConfig the options mean.
func (options ReflectorOptions) config() reflectorConfig {
	backoff := defaultReflectorBackoff()
	if options.Backoff != nil {
		backoff = *options.Backoff
	}
	return reflectorConfig{
		name:            options.Name,
		typeDescription: options.TypeDescription,
		logger:          options.Logger,
		clock:           options.Clock,
		engine: reflector.Settings{
			ResyncPeriod:         options.ResyncPeriod,
			MinWatchTimeout:      atLeastMinWatchTimeout(options.MinWatchTimeout),
			Backoff:              backoff,
			MaxRetryAfter:        defaultedOrOff(options.MaxRetryAfter, listadmission.DefaultMaxRetryAfter),
			WatchIdleTimeout:     max(options.WatchIdleTimeout, 0),
			InitialEventsTimeout: reflectorInitialEventsTimeout,
			AdmissionPriority:    options.ListAdmissionPriority,
		},
		admission: listAdmitterOf(options.ListAdmission),
	}
}

// reflectorConfig is Config's defaulting step: it returns the
// reflectorConfig of the Reflector of a controller built by New, logging
// through logger.
func (c *Config) reflectorConfig(logger *klog.Logger) reflectorConfig {
	handler := c.WatchErrorHandlerWithContext
	if h := c.WatchErrorHandler; h != nil {
		handler = func(_ context.Context, r *Reflector, err error) { h(r, err) }
	}
	return reflectorConfig{
		logger:            logger,
		typeDescription:   c.ObjectDescription,
		shouldResync:      c.ShouldResync,
		watchListPageSize: c.WatchListPageSize,
		watchErrorHandler: handler,
		engine: reflector.Settings{
			ResyncPeriod:         c.FullResyncPeriod,
			MinWatchTimeout:      atLeastMinWatchTimeout(c.MinWatchTimeout),
			Backoff:              defaultReflectorBackoff(),
			MaxRetryAfter:        listadmission.DefaultMaxRetryAfter,
			WatchIdleTimeout:     max(c.WatchIdleTimeout, 0),
			InitialEventsTimeout: reflectorInitialEventsTimeout,
		},
	}
}

// atLeastMinWatchTimeout raises d to the floor of watch timeouts.
func atLeastMinWatchTimeout(d time.Duration) time.Duration {
	return max(d, reflectorMinWatchTimeout)
}

// defaultReflectorBackoff returns client-go's backoff between a Reflector's
// retries.
func defaultReflectorBackoff() wait.Backoff {
	return wait.Backoff{
		Duration: reflectorBackoffInitial,
		Cap:      reflectorBackoffCap,
		Steps:    int(math.Ceil(float64(reflectorBackoffCap) / float64(reflectorBackoffInitial))),
		Factor:   reflectorBackoffFactor,
		Jitter:   reflectorBackoffJitter,
	}
}

// listAdmitterOf returns a as a listAdmitter; nil for a nil a (no
// admission).
func listAdmitterOf(a *listadmission.Admission) listAdmitter {
	if a == nil {
		return nil
	}
	return a
}
