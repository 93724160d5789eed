// Package debugview describes the informers of kinformer factories for
// humans and tools: Snapshot returns, per informer, its type and resource,
// whether it synced, its last resourceVersion, store size, queue depth,
// lists by reason, handler backlogs and last error; Handler serves the same
// as JSON, e.g. under /debug/informers, on a listener of its own: without
// HandlerOptions.Detail it serves the reason of a failure, not its text.
package debugview

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/health"
)

// Informer describes one informer at one moment (see cache.InformerStatus,
// from which it is made). Times are omitted when zero.
type Informer struct {
	// Type is the Go type of the objects, e.g. "*v1.Pod".
	Type string `json:"type"`
	// Resource is the group/version/resource as kubectl writes it
	// ("pods.v1", "deployments.v1.apps"), or "" when unknown.
	Resource string `json:"resource,omitempty"`
	// Name is the informer's metrics name (cache.InformerName), or "".
	Name                    string            `json:"name,omitempty"`
	Started                 bool              `json:"started"`
	Stopped                 bool              `json:"stopped"`
	Synced                  bool              `json:"synced"`
	LastSyncResourceVersion string            `json:"lastSyncResourceVersion"`
	StoreSize               int               `json:"storeSize"`
	QueueDepth              int               `json:"queueDepth"`
	DeltasProcessed         uint64            `json:"deltasProcessed"`
	Lists                   map[string]uint64 `json:"lists"`
	WatchRestarts           uint64            `json:"watchRestarts"`
	BadData                 uint64            `json:"badData"`
	LastWatchEvent          *time.Time        `json:"lastWatchEvent,omitempty"`
	LastList                *time.Time        `json:"lastList,omitempty"`
	// Confirmed and ConfirmedResourceVersion tell when the cache last
	// reached a resourceVersion the server confirmed as current, and which
	// (see cache.InformerStatus.Confirmed and its Staleness).
	Confirmed                *time.Time `json:"confirmed,omitempty"`
	ConfirmedResourceVersion string     `json:"confirmedResourceVersion,omitempty"`
	// LastError is the text of the Reflector's last list or watch failure,
	// kept after recovery (compare LastErrorTime with LastList). Snapshot
	// fills it; a handler serves it only with HandlerOptions.Detail.
	// LastErrorReason is that failure's reason as package health names it
	// ("forbidden", "throttled", "error", ...), always served.
	LastError       string     `json:"lastError,omitempty"`
	LastErrorReason string     `json:"lastErrorReason,omitempty"`
	LastErrorTime   *time.Time `json:"lastErrorTime,omitempty"`
	HandlerPanics   int64      `json:"handlerPanics"`
	Handlers        []Handler  `json:"handlers"`
}

// Handler describes one registered event handler.
type Handler struct {
	Name    string `json:"name"`
	Pending int    `json:"pending"`
	Panics  int64  `json:"panics"`
	Synced  bool   `json:"synced"`
}

// Snapshot describes every informer of sources, in order: each source is a
// factory of this module (informers, dynamicinformer, metadatainformer; all
// implement cache.InformerSource), whose informers come in the factory's
// order, or a single informer built by the cache package. It fails for
// sources of other types. Safe to call concurrently with everything.
func Snapshot(sources ...any) ([]Informer, error) {
	var out []Informer
	for _, src := range sources {
		informers, err := informersOf(src)
		if err != nil {
			return nil, err
		}
		for _, informer := range informers {
			st, ok := cache.GetInformerStatus(informer)
			if !ok {
				return nil, fmt.Errorf("debugview: informer of type %T was not built by kinformer's cache package", informer)
			}
			out = append(out, fromStatus(st))
		}
	}
	return out, nil
}

// HandlerOptions configures NewHandlerWithOptions. The zero value is
// NewHandler's.
type HandlerOptions struct {
	// Detail, when true, makes the handler serve each informer's
	// LastError text. The text tells whoever reads it the API server's
	// address, namespaces, field selectors (the names of the Secrets
	// watched), the service account and the permissions it lacks: serve
	// the debug view on its own listener (a localhost or admin port, not
	// the probe or metrics port), and set Detail only there. false (the
	// default): LastErrorReason alone says why the last list or watch
	// failed.
	Detail bool
}

// NewHandler returns an http.Handler that answers every request with the
// JSON array of Snapshot(sources...), without the error texts (see
// NewHandlerWithOptions). The sources are checked now: it fails for sources
// of other types. Serve it on its own listener, not the port probes and
// metrics scrapes reach.
func NewHandler(sources ...any) (http.Handler, error) {
	return NewHandlerWithOptions(HandlerOptions{}, sources...)
}

// NewHandlerWithOptions returns an http.Handler that answers every request
// with the JSON array of Snapshot(sources...) (Content-Type
// application/json; a plain 500 when Snapshot fails, which only a source
// changing type can cause). Without opts.Detail each informer's LastError
// is left out (LastErrorReason stays). The sources are checked now: it
// fails for sources of other types. The handler is safe for concurrent
// use.
func NewHandlerWithOptions(opts HandlerOptions, sources ...any) (http.Handler, error) {
	if _, err := Snapshot(sources...); err != nil {
		return nil, err
	}
	srcs := append([]any(nil), sources...)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		snap, err := Snapshot(srcs...)
		if err != nil {
			http.Error(w, "debugview: cannot describe the informers", http.StatusInternalServerError)
			return
		}
		if snap == nil {
			snap = []Informer{}
		}
		if !opts.Detail {
			for i := range snap {
				snap[i].LastError = ""
			}
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(snap) // a failed write means the client went away
	}), nil
}

func informersOf(src any) ([]cache.SharedIndexInformer, error) {
	switch s := src.(type) {
	case cache.InformerSource:
		return s.ListInformers(), nil
	case cache.SharedIndexInformer:
		return []cache.SharedIndexInformer{s}, nil
	}
	return nil, fmt.Errorf("debugview: cannot describe a %T: want a kinformer informer factory or a cache.SharedIndexInformer", src)
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func fromStatus(st cache.InformerStatus) Informer {
	in := Informer{
		Type:                     st.Type,
		Name:                     st.Name,
		Started:                  st.Started,
		Stopped:                  st.Stopped,
		Synced:                   st.Synced,
		LastSyncResourceVersion:  st.LastSyncResourceVersion,
		StoreSize:                st.StoreSize,
		QueueDepth:               st.QueueDepth,
		DeltasProcessed:          st.DeltasProcessed,
		Lists:                    make(map[string]uint64, len(st.Lists)),
		WatchRestarts:            st.WatchRestarts,
		BadData:                  st.BadData,
		LastWatchEvent:           timePtr(st.LastWatchEvent),
		LastList:                 timePtr(st.LastList),
		Confirmed:                timePtr(st.Confirmed),
		ConfirmedResourceVersion: st.ConfirmedResourceVersion,
		LastErrorTime:            timePtr(st.LastErrorTime),
		HandlerPanics:            st.HandlerPanics,
		Handlers:                 make([]Handler, len(st.Handlers)),
	}
	if gvr := st.Resource; gvr.Resource != "" {
		in.Resource = gvr.Resource + "." + gvr.Version
		if gvr.Group != "" {
			in.Resource += "." + gvr.Group
		}
	}
	for reason, n := range st.Lists {
		in.Lists[string(reason)] = n
	}
	if st.LastError != nil {
		in.LastError = st.LastError.Error()
		in.LastErrorReason = string(health.ReasonFor(st.LastError))
	}
	for i, h := range st.Handlers {
		in.Handlers[i] = Handler{Name: h.Name, Pending: h.Pending, Panics: h.Panics, Synced: h.Synced}
	}
	return in
}
