package clientgo

import (
	"time"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/internal/lean"
	"github.com/kinformer/kinformer/listadmission"
)

// Option configures an informer built by NewSharedIndexInformer. Each one
// sets one field of the kinformer options the informer is built with (or
// the wrapper's buffer policy), with the meaning that field documents on
// cache.SharedIndexInformerOptions; the last Option to set a field wins.
// Only the settings this package can honour for any ListerWatcher have an
// Option: the package documentation lists those that need kinformer's own
// wire path or knowledge of the cluster, which have none.
type Option func(*settings)

// settings is what the Options of one NewSharedIndexInformer call set.
type settings struct {
	// informer holds the kinformer options; ResyncPeriod and Indexers are
	// NewSharedIndexInformer's arguments and no Option sets them.
	informer cache.SharedIndexInformerOptions
	// bufferPolicy is the buffer policy of every handler added through
	// the wrapper.
	bufferPolicy cache.HandlerBufferPolicy
	// lean, when not nil, is the intern table of the memory-lean mode
	// (WithMemoryLean).
	lean *lean.Table
}

// WithObjectDescription sets the description of the informer's objects in
// its Reflector's log messages and in the client-go Reflector handed to
// watch error handlers (SharedIndexInformerOptions.ObjectDescription; empty:
// derived from the example object, as in client-go).
func WithObjectDescription(description string) Option {
	return func(s *settings) { s.informer.ObjectDescription = description }
}

// WithIdentifier names the informer for metrics and logs
// (SharedIndexInformerOptions.Identifier; build one with
// cache.NewInformerName and its WithResource). Metrics are published only
// for an identifier that is set and reserved.
func WithIdentifier(id cache.InformerNameAndResource) Option {
	return func(s *settings) { s.informer.Identifier = id }
}

// WithInformerMetricsProvider sets the provider of the informer's queue and
// store metrics (SharedIndexInformerOptions.InformerMetricsProvider; nil:
// the global provider).
func WithInformerMetricsProvider(provider cache.InformerMetricsProvider) Option {
	return func(s *settings) { s.informer.InformerMetricsProvider = provider }
}

// WithHandlerMetricsProvider times every notification the informer's
// handlers handle (SharedIndexInformerOptions.HandlerMetricsProvider; nil
// times nothing). kinformer extension.
func WithHandlerMetricsProvider(provider cache.HandlerMetricsProvider) Option {
	return func(s *settings) { s.informer.HandlerMetricsProvider = provider }
}

// WithWatchIdleTimeout sets the watch liveness deadline
// (SharedIndexInformerOptions.WatchIdleTimeout): a watch that has had a
// periodic bookmark and then stays silent this long is reopened from the
// last resourceVersion. Zero means cache.DefaultWatchIdleTimeout; negative
// turns it off (client-go's behaviour). kinformer extension.
func WithWatchIdleTimeout(timeout time.Duration) Option {
	return func(s *settings) { s.informer.WatchIdleTimeout = timeout }
}

// WithStalenessProbeInterval sets how long the synced informer goes without
// the server confirming a resourceVersion before it asks with a LIST of one
// object through the ListerWatcher
// (SharedIndexInformerOptions.StalenessProbeInterval; zero: the default,
// negative: off). kinformer extension.
func WithStalenessProbeInterval(interval time.Duration) Option {
	return func(s *settings) { s.informer.StalenessProbeInterval = interval }
}

// WithMaxRetryAfter sets the longest Retry-After the informer's Reflector
// honours before it retries a failed list or watch
// (SharedIndexInformerOptions.MaxRetryAfter; zero: the default, negative:
// no maximum). kinformer extension.
func WithMaxRetryAfter(maximum time.Duration) Option {
	return func(s *settings) { s.informer.MaxRetryAfter = maximum }
}

// WithRelistPageByPage applies relists page by page instead of atomically
// (SharedIndexInformerOptions.RelistPageByPage), trading what listers and
// handlers see during a relist for memory. Off by default, as in client-go.
// kinformer extension.
func WithRelistPageByPage(on bool) Option {
	return func(s *settings) { s.informer.RelistPageByPage = on }
}

// WithDeltaFIFO selects kinformer's DeltaFIFO as the informer's queue
// instead of the default RealFIFO (SharedIndexInformerOptions.UseDeltaFIFO),
// for code that depends on its per-key coalescing. kinformer extension.
func WithDeltaFIFO(on bool) Option {
	return func(s *settings) { s.informer.UseDeltaFIFO = on }
}

// WithHandlerBufferPolicy sets the buffer policy of every handler added
// through the returned informer (client-go's HandlerOptions has no field
// for it): cache.HandlerBufferUnbounded, the default, keeps every
// notification in order as client-go does; cache.HandlerBufferCoalesceByKey
// keeps the latest state per object. A policy kinformer does not know makes
// every AddEventHandler call fail. kinformer extension.
func WithHandlerBufferPolicy(policy cache.HandlerBufferPolicy) Option {
	return func(s *settings) { s.bufferPolicy = policy }
}

// WithMemoryLean makes the informer keep lean objects, as the factories'
// informers.WithMemoryLean does: every object drops its managedFields and
// the strings most objects repeat (label and annotation keys and values,
// namespaces, owner references) share one copy through a bounded intern
// table. The step runs after the informer's transform (SetTransform, which
// controller-runtime's DefaultTransform sets), on what it returns.
//
// The table is made when WithMemoryLean is called, and every informer built
// with the returned Option shares it: pass one Option to every informer of
// a program (controllerruntime.WithInformerOptions does) for one table, or
// call WithMemoryLean per informer for a table each. kinformer extension.
func WithMemoryLean() Option {
	t := &lean.Table{}
	return func(s *settings) { s.lean = t }
}

// WithListAdmission makes the informer admit its initial list and relists
// through admission (SharedIndexInformerOptions.ListAdmission; see package
// listadmission): at most admission's limit of the informers sharing it
// list at once, and a 429 one of them gets slows the others down. Pass one
// admission to every informer of a program (controllerruntime's
// WithInformerOptions does) to limit the lists of its whole cache; nil, the
// default, lists at once, as client-go does. Wrapping the transport of the
// rest.Config the ListerWatcher's client is built from
// (config.Wrap(admission.WrapTransport)) lets the whole group pause at the
// first 429 of any of them. Only when lists are requested changes, not what
// handlers and the store observe. kinformer extension.
func WithListAdmission(admission *listadmission.Admission) Option {
	return func(s *settings) { s.informer.ListAdmission = admission }
}

// WithListAdmissionPriority orders the informer among those waiting for a
// slot of its list admission (SharedIndexInformerOptions.ListAdmissionPriority):
// the highest first; default 0. kinformer extension.
func WithListAdmissionPriority(priority int) Option {
	return func(s *settings) { s.informer.ListAdmissionPriority = priority }
}
