package reflector

import (
	"context"
	"reflect"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/kinformer/kinformer/cache/internal/shard"
)

// ListerWatcher is the source of a Reflector's lists and watches: client-go's
// ListerWatcherWithContext method set, so that such a value passes through
// as it is.
type ListerWatcher interface {
	// ListWithContext lists with options; the result is a list object.
	ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error)
	// WatchWithContext opens a watch with options.
	WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)
}

// Options is everything an Engine is built from. Zero values mean what each
// field says; New applies no other defaults.
type Options struct {
	// Name and TypeDescription name the Reflector and its type in logs and
	// errors.
	Name            string
	TypeDescription string
	// ExpectedType, when not nil, is the only Go type of object stored;
	// ExpectedGVK, when not nil, the only group/version/kind of an
	// unstructured object.
	ExpectedType reflect.Type
	ExpectedGVK  *schema.GroupVersionKind

	// Store takes the watch events and is resynced; Lists starts the
	// lists of the same store. Both must be set.
	Store Store
	Lists Lists
	// ListerWatcher lists and watches; it must be set.
	ListerWatcher ListerWatcher

	// Logger, when HasLogger, replaces the logger of the caller's context.
	Logger    klog.Logger
	HasLogger bool

	// Settings are the Reflector's fixed settings.
	Settings
	// Clock is the source of time; it must be set.
	Clock clock.Clock
	// BackoffReset is how long without a failure starts Settings.Backoff
	// over.
	BackoffReset time.Duration
	// DisableChunking: LIST requests are never paged.
	DisableChunking bool

	// Resume, when not nil, is called once before the first list; the
	// snapshot it returns (nil: none) replaces that list.
	Resume func(context.Context) (*Snapshot, error)
	// Admission, when not nil, admits the lists; Settings.AdmissionPriority
	// orders this Reflector among those waiting.
	Admission Admission

	// Stats receives the diagnostics and Arrivals the events' arrival
	// times; both must be set.
	Stats    Stats
	Arrivals Arrivals
	// Report, when not nil, hears of every failure the Reflector handles
	// by itself within a cycle (NoteReport).
	Report func(ctx context.Context, err error)
}

// Settings are the settings of a Reflector that stay fixed for its life, as
// effective values: the package that wraps the engine applies its defaults
// and maps its "off" values to zero before, in one step, and the engine
// takes them as they are.
type Settings struct {
	// ResyncPeriod is how often the store's Resync is considered (zero:
	// never).
	ResyncPeriod time.Duration
	// MinWatchTimeout is the shortest timeout a watch request asks for;
	// each asks for one in [MinWatchTimeout, 2*MinWatchTimeout).
	MinWatchTimeout time.Duration
	// Backoff is the delay between retries.
	Backoff wait.Backoff
	// MaxRetryAfter is the longest Retry-After honoured; zero: no maximum.
	MaxRetryAfter time.Duration
	// WatchIdleTimeout is the watch liveness deadline, armed on a watch by
	// its first periodic bookmark; zero: none.
	WatchIdleTimeout time.Duration
	// InitialEventsTimeout bounds the silence of a streaming list before
	// its end bookmark; zero: no bound.
	InitialEventsTimeout time.Duration
	// AdmissionPriority orders this Reflector's lists among those waiting
	// for the same admission (higher first).
	AdmissionPriority int
	// Shard, when not nil, is the shard of the hash space the Reflector
	// keeps: every LIST, streaming list and watch request carries its
	// selector (ListOptions.ShardSelector), and every listed object and
	// watch event outside it is dropped before the store, whatever the
	// server did. A server found ignoring the selector is reported once per
	// cycle (ShardIgnoredError).
	Shard *shard.Filter
}

// Snapshot is the state a Reflector's first cycle may start from instead of
// listing: objects as a list at ResourceVersion.
type Snapshot struct {
	// ResourceVersion is the version the objects were current at.
	ResourceVersion string
	// Objects are the cache's objects, transformed already; the store owns
	// them once handed over.
	Objects []interface{}
}

// CycleConfig is what a list-and-watch cycle takes from its caller at its
// start: the settings a caller may change between cycles (client-go's
// exported Reflector fields among them).
type CycleConfig struct {
	// Streaming: try a streaming list before a LIST.
	Streaming bool
	// PageSize is the limit of LIST requests (0: the core decides).
	PageSize int64
	// MaxInternalRetry is how long watches ending with internal errors
	// are reopened before a relist.
	MaxInternalRetry time.Duration
	// ShouldResync, when not nil, is asked every resync period whether to
	// call the store's Resync.
	ShouldResync func() bool
	// Metrics records the cycle's lists, watches and resourceVersions; nil
	// records nothing.
	Metrics *Metrics
}

// Engine runs a Reflector's list-and-watch cycles: its driver performs what
// the core decides. Its cycles run one at a time, on the caller's goroutine;
// LastSyncResourceVersion, BadDataCount and BadDataTotal are safe to call
// from any goroutine at any time.
type Engine struct {
	name            string
	typeDescription string
	expectedType    reflect.Type
	expectedGVK     *schema.GroupVersionKind

	store Store
	lists Lists
	lw    ListerWatcher

	logger    klog.Logger
	hasLogger bool

	// settings are Options.Settings; backoff is built from their
	// Backoff.
	settings        Settings
	clock           clock.Clock
	backoff         *backoff
	disableChunking bool

	// resume is called once, by the first cycle; only the cycle's
	// goroutine uses it.
	resume    func(context.Context) (*Snapshot, error)
	admission Admission

	stats Stats
	// arrivals records each event's arrival (Options.Arrivals).
	arrivals Arrivals
	report   func(ctx context.Context, err error)

	// state is the core's state; cycle and metrics are the running
	// cycle's. Only the goroutine of the running cycle uses them.
	state   State
	cycle   CycleConfig
	metrics *Metrics

	// badData counts bad data from the server.
	badData badDataCounter

	// mu guards lastSyncResourceVersion, the resource version the store
	// has reached (from the last list, watch event or bookmark).
	mu                      sync.Mutex
	lastSyncResourceVersion string
}

// New returns the Engine of opts.
func New(opts Options) *Engine {
	return &Engine{
		name:            opts.Name,
		typeDescription: opts.TypeDescription,
		expectedType:    opts.ExpectedType,
		expectedGVK:     opts.ExpectedGVK,
		store:           opts.Store,
		lists:           opts.Lists,
		lw:              opts.ListerWatcher,
		logger:          opts.Logger,
		hasLogger:       opts.HasLogger,
		settings:        opts.Settings,
		clock:           opts.Clock,
		backoff:         newBackoff(opts.Backoff, opts.BackoffReset, opts.Clock),
		disableChunking: opts.DisableChunking,
		resume:          opts.Resume,
		admission:       opts.Admission,
		stats:           opts.Stats,
		arrivals:        opts.Arrivals,
		report:          opts.Report,
		state:           NewState(opts.Resume != nil),
	}
}

// LastSyncResourceVersion returns the resource version the store was last
// brought to. It is safe for concurrent use.
func (e *Engine) LastSyncResourceVersion() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lastSyncResourceVersion
}

func (e *Engine) setLastSyncResourceVersion(rv string) {
	e.mu.Lock()
	e.lastSyncResourceVersion = rv
	e.mu.Unlock()
	e.metrics.ResourceVersion(rv)
}

// loggerFor returns the logger for a call made with ctx.
func (e *Engine) loggerFor(ctx context.Context) klog.Logger {
	if e.hasLogger {
		return e.logger
	}
	return klog.FromContext(ctx)
}

// RunCycle makes one list-and-watch cycle with cfg: it lists (from the
// snapshot, by streaming list or by LIST), hands the list to the store, then
// watches until ctx is done or the watch cannot go on without a relist. It
// returns nil when ctx is done or the watch needs a relist, and the error
// that ended the cycle otherwise. It does not return before the goroutines
// it started have ended. Cycles must not overlap.
func (e *Engine) RunCycle(ctx context.Context, cfg CycleConfig) error {
	e.cycle, e.metrics = cfg, cfg.Metrics
	e.state.SetConfig(Config{
		Name:             e.name,
		TypeDescription:  e.typeDescription,
		Streaming:        cfg.Streaming,
		DisableChunking:  e.disableChunking,
		PageSize:         cfg.PageSize,
		PageByPage:       e.lists.RelistsPageByPage(),
		IdleTimeout:      e.settings.WatchIdleTimeout,
		MaxInternalRetry: cfg.MaxInternalRetry,
	})
	d := &driver{e: e, ctx: ctx, actions: make([]Action, 0, 8)}
	defer d.cleanup()
	return d.run()
}

// Settings returns the settings the Engine was built with.
func (e *Engine) Settings() Settings { return e.settings }
