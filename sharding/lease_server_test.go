package sharding

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// leaseServer is an in-memory store of Leases behind a fake clientset's
// reactor, with what the fake's own tracker lacks: resourceVersions that
// change on every write and updates refused with a Conflict when their
// resourceVersion is not the stored one, as the API server does. Each
// member gets a clientset of its own (client), which down can cut off.
type leaseServer struct {
	mu     sync.Mutex
	rv     int
	leases map[string]*coordinationv1.Lease
	down   map[string]bool // identity → its requests fail
	writes int
	// race, when set, runs before every create and update, under the
	// server's lock, to write what a concurrent member would.
	race func(verb, name string)
}

var leaseResource = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

func newLeaseServer() *leaseServer {
	return &leaseServer{leases: map[string]*coordinationv1.Lease{}, down: map[string]bool{}}
}

// client returns a clientset for identity over the server.
func (s *leaseServer) client(identity string) *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("*", "leases", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj, err := s.serve(identity, a)
		return true, obj, err
	})
	return cs
}

// setDown cuts identity off the server (every request fails) or back on.
func (s *leaseServer) setDown(identity string, down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down[identity] = down
}

// get returns a copy of the named Lease, nil when missing.
func (s *leaseServer) get(name string) *coordinationv1.Lease {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.leases[name]; ok {
		return l.DeepCopy()
	}
	return nil
}

func (s *leaseServer) serve(identity string, a k8stesting.Action) (runtime.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down[identity] {
		return nil, apierrors.NewServiceUnavailable("the API server is down for " + identity)
	}
	switch a.GetVerb() {
	case "list":
		sel := a.(k8stesting.ListAction).GetListRestrictions().Labels
		list := &coordinationv1.LeaseList{}
		for _, l := range s.leases {
			if sel == nil || sel.Matches(labels.Set(l.Labels)) {
				list.Items = append(list.Items, *l.DeepCopy())
			}
		}
		return list, nil
	case "get":
		name := a.(k8stesting.GetAction).GetName()
		l, ok := s.leases[name]
		if !ok {
			return nil, apierrors.NewNotFound(leaseResource, name)
		}
		return l.DeepCopy(), nil
	case "create":
		l := a.(k8stesting.CreateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		if s.race != nil {
			s.race("create", l.Name)
		}
		if _, ok := s.leases[l.Name]; ok {
			return nil, apierrors.NewAlreadyExists(leaseResource, l.Name)
		}
		return s.store(l), nil
	case "update":
		l := a.(k8stesting.UpdateAction).GetObject().(*coordinationv1.Lease).DeepCopy()
		if s.race != nil {
			s.race("update", l.Name)
		}
		old, ok := s.leases[l.Name]
		if !ok {
			return nil, apierrors.NewNotFound(leaseResource, l.Name)
		}
		if l.ResourceVersion != old.ResourceVersion {
			return nil, apierrors.NewConflict(leaseResource, l.Name, errors.New("the object has been modified"))
		}
		return s.store(l), nil
	case "delete":
		name := a.(k8stesting.DeleteAction).GetName()
		if _, ok := s.leases[name]; !ok {
			return nil, apierrors.NewNotFound(leaseResource, name)
		}
		delete(s.leases, name)
		s.writes++
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected verb %s", a.GetVerb())
}

func (s *leaseServer) store(l *coordinationv1.Lease) *coordinationv1.Lease {
	s.rv++
	s.writes++
	l.ResourceVersion = strconv.Itoa(s.rv)
	s.leases[l.Name] = l
	return l.DeepCopy()
}
