package gvrfactory

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listadmission"
)

// Admission is the list admission of a GVR factory's informers (see
// listadmission.Admission): the one its WithListAdmission option chose (Set;
// nil turns admission off), or, by default, the factory's own, made when
// its first informer is built; and the priorities of its
// WithListAdmissionPriority option.
type Admission struct {
	Limiter    *listadmission.Admission
	Set        bool
	Priorities map[schema.GroupVersionResource]int
}

// Prioritize gives the informers of resources priority.
func (a *Admission) Prioritize(priority int, resources []schema.GroupVersionResource) {
	for _, gvr := range resources {
		if a.Priorities == nil {
			a.Priorities = map[schema.GroupVersionResource]int{}
		}
		a.Priorities[gvr] = priority
	}
}

// Apply returns options with the list admission and priority of gvr's
// informer. It makes the factory's own list admission on first use, so it
// must be called under the factory's lock (Factory's newInformer is).
func (a *Admission) Apply(options cache.SharedIndexInformerOptions, gvr schema.GroupVersionResource) cache.SharedIndexInformerOptions {
	if !a.Set {
		a.Limiter, a.Set = listadmission.New(listadmission.Options{}), true
	}
	options.ListAdmission = a.Limiter
	if a.Limiter != nil {
		options.ListAdmissionPriority = a.Priorities[gvr]
	}
	return options
}
