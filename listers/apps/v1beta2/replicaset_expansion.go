package v1beta2

import (
	"fmt"

	appsv1beta2 "k8s.io/api/apps/v1beta2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/listers/internal/podselect"
)

// ReplicaSetListerExpansion holds the extra lookups of ReplicaSetLister.
type ReplicaSetListerExpansion interface {
	// GetPodReplicaSets returns the ReplicaSets of the pod's namespace whose
	// selector selects the pod. At most one of them (the one in the pod's
	// ControllerRef) really manages it. It returns an error when the pod is
	// nil, has no labels, or no ReplicaSet selects it.
	GetPodReplicaSets(pod *corev1.Pod) ([]*appsv1beta2.ReplicaSet, error)
}

// ReplicaSetNamespaceListerExpansion holds the extra lookups of
// ReplicaSetNamespaceLister; it has none.
type ReplicaSetNamespaceListerExpansion interface{}

// GetPodReplicaSets implements ReplicaSetListerExpansion. A ReplicaSet with an invalid, missing or empty
// selector selects no pod.
// A nil pod is an error. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (s *replicaSetLister) GetPodReplicaSets(pod *corev1.Pod) ([]*appsv1beta2.ReplicaSet, error) {
	if pod == nil {
		return nil, podselect.ErrNilObject
	}
	if len(pod.Labels) == 0 {
		return nil, fmt.Errorf("no ReplicaSets found for pod %v because it has no labels", pod.Name)
	}
	candidates, err := s.ReplicaSets(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	found := podselect.Matching(candidates, pod.Namespace, pod.Labels, func(obj *appsv1beta2.ReplicaSet) (labels.Selector, bool) {
		return podselect.NonEmpty(obj.Spec.Selector)
	})
	if len(found) == 0 {
		return nil, fmt.Errorf("could not find ReplicaSet for pod %s in namespace %s with labels: %v", pod.Name, pod.Namespace, pod.Labels)
	}
	return found, nil
}
