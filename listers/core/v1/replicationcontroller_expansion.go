package v1

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/listers/internal/podselect"
)

// ReplicationControllerListerExpansion holds the extra lookups of ReplicationControllerLister.
type ReplicationControllerListerExpansion interface {
	// GetPodControllers returns the ReplicationControllers of the pod's
	// namespace whose selector selects the pod. At most one of them (the one
	// in the pod's ControllerRef) really manages it. It returns an error when
	// the pod is nil, has no labels, or no ReplicationController selects it.
	GetPodControllers(pod *corev1.Pod) ([]*corev1.ReplicationController, error)
}

// ReplicationControllerNamespaceListerExpansion holds the extra lookups of
// ReplicationControllerNamespaceLister; it has none.
type ReplicationControllerNamespaceListerExpansion interface{}

// GetPodControllers implements ReplicationControllerListerExpansion. A ReplicationController with a missing or empty
// selector selects no pod.
// A nil pod is an error. Only objects in the pod's own namespace are
// considered, even when that namespace is empty. Differs from client-go
// v0.37.2; see COMPATIBILITY.md.
func (s *replicationControllerLister) GetPodControllers(pod *corev1.Pod) ([]*corev1.ReplicationController, error) {
	if pod == nil {
		return nil, podselect.ErrNilObject
	}
	if len(pod.Labels) == 0 {
		return nil, fmt.Errorf("no controllers found for pod %v because it has no labels", pod.Name)
	}
	candidates, err := s.ReplicationControllers(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	found := podselect.Matching(candidates, pod.Namespace, pod.Labels, func(obj *corev1.ReplicationController) (labels.Selector, bool) {
		return podselect.NonEmptyMap(obj.Spec.Selector)
	})
	if len(found) == 0 {
		return nil, fmt.Errorf("could not find controller for pod %s in namespace %s with labels: %v", pod.Name, pod.Namespace, pod.Labels)
	}
	return found, nil
}
