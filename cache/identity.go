package cache

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
)

// informerNames is the process-wide registry of reserved informer names,
// which client-go's API makes global (names must be unique in a process).
// Lock order: informerNames.mu may be taken while holding an
// InformerName's mu, never the other way round.
var informerNames = struct {
	mu    sync.Mutex
	names map[string]*InformerName
}{names: map[string]*InformerName{}}

// InformerName is a process-wide unique name under which informers publish
// metrics. Create it once (for example per controller manager) with
// NewInformerName, derive one InformerNameAndResource per resource with
// WithResource, and Release it at shutdown so the name can be reused. A nil
// *InformerName is valid: it yields identities that publish nothing. All
// methods are safe for concurrent use.
type InformerName struct {
	name string

	mu sync.Mutex
	// released is set by Release; guarded by mu.
	released bool
	// resources maps each resource registered under this name to the flag
	// shared with the identities WithResource handed out; guarded by mu.
	resources map[schema.GroupVersionResource]*atomic.Bool
}

// NewInformerName reserves name for this process. It fails when name is
// empty or is already reserved and not yet released.
func NewInformerName(name string) (*InformerName, error) {
	if name == "" {
		return nil, errors.New("informer name must not be empty")
	}
	informerNames.mu.Lock()
	defer informerNames.mu.Unlock()
	if _, taken := informerNames.names[name]; taken {
		return nil, fmt.Errorf("informer name %q is already registered", name)
	}
	n := &InformerName{name: name, resources: map[schema.GroupVersionResource]*atomic.Bool{}}
	informerNames.names[name] = n
	return n, nil
}

// WithResource returns the identity of the informer for gvr under this name.
// The first request for a resource gets an identity whose Reserved() is true
// (it publishes metrics); later requests for the same resource, requests on
// a released name and requests on a nil *InformerName get one whose
// Reserved() is false, so no metric is published twice.
func (n *InformerName) WithResource(gvr schema.GroupVersionResource) InformerNameAndResource {
	if n == nil {
		return InformerNameAndResource{gvr: gvr}
	}
	id := InformerNameAndResource{name: n.name, gvr: gvr, reserved: &atomic.Bool{}}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.released {
		return id
	}
	if _, dup := n.resources[gvr]; dup {
		klog.Background().Error(nil, "Informer registered twice for the same resource; its metrics are published only once",
			"informerName", n.name, "group", gvr.Group, "version", gvr.Version, "resource", gvr.Resource)
		return id
	}
	id.reserved.Store(true)
	n.resources[gvr] = id.reserved
	return id
}

// Release gives the name back: every identity derived from it stops being
// Reserved() and NewInformerName may reserve the name again. Releasing twice,
// or a nil *InformerName, does nothing.
func (n *InformerName) Release() {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.released {
		return
	}
	n.released = true
	for _, flag := range n.resources {
		flag.Store(false)
	}
	n.resources = map[schema.GroupVersionResource]*atomic.Bool{}
	informerNames.mu.Lock()
	if informerNames.names[n.name] == n {
		delete(informerNames.names, n.name)
	}
	informerNames.mu.Unlock()
}

// Name returns the name, or "" for a nil *InformerName.
func (n *InformerName) Name() string {
	if n == nil {
		return ""
	}
	return n.name
}

// InformerNameAndResource identifies one informer for metrics: an
// InformerName and the resource it informs on. The zero value is valid and
// publishes nothing. It is a small value, safe to copy and to use
// concurrently.
type InformerNameAndResource struct {
	name     string
	gvr      schema.GroupVersionResource
	reserved *atomic.Bool
}

// Reserved reports whether metrics should be published for this identity:
// it was the first registration of its resource under its name, and the
// name has not been released. It is a single atomic load, cheap enough for
// hot paths.
func (n InformerNameAndResource) Reserved() bool {
	return n.reserved != nil && n.reserved.Load()
}

// Name returns the informer name ("" for the zero value).
func (n InformerNameAndResource) Name() string {
	return n.name
}

// GroupVersionResource returns the resource of this identity.
func (n InformerNameAndResource) GroupVersionResource() schema.GroupVersionResource {
	return n.gvr
}

// ResetInformerNamesForTesting releases every reserved informer name. It is
// meant for tests that reserve names repeatedly in one process.
func ResetInformerNamesForTesting() {
	informerNames.mu.Lock()
	all := make([]*InformerName, 0, len(informerNames.names))
	for _, n := range informerNames.names {
		all = append(all, n)
	}
	informerNames.mu.Unlock()
	for _, n := range all {
		n.Release()
	}
}
