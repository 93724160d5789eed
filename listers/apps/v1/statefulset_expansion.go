package v1

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/listers/internal/podselect"
)

// StatefulSetListerExpansion holds the extra lookups of StatefulSetLister.
type StatefulSetListerExpansion interface {
	// GetPodStatefulSets returns the StatefulSets of the pod's namespace whose
	// selector selects the pod. At most one of them (the one in the pod's
	// ControllerRef) really manages it. It returns an error when the pod is
	// nil, has no labels, or no StatefulSet selects it.
	GetPodStatefulSets(pod *corev1.Pod) ([]*appsv1.StatefulSet, error)
}

// StatefulSetNamespaceListerExpansion holds the extra lookups of
// StatefulSetNamespaceLister; it has none.
type StatefulSetNamespaceListerExpansion interface{}

// GetPodStatefulSets implements StatefulSetListerExpansion. A StatefulSet with an invalid, missing or empty
// selector selects no pod.
// A nil pod is an error. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (s *statefulSetLister) GetPodStatefulSets(pod *corev1.Pod) ([]*appsv1.StatefulSet, error) {
	if pod == nil {
		return nil, podselect.ErrNilObject
	}
	if len(pod.Labels) == 0 {
		return nil, fmt.Errorf("no StatefulSets found for pod %v because it has no labels", pod.Name)
	}
	candidates, err := s.StatefulSets(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	found := podselect.Matching(candidates, pod.Namespace, pod.Labels, func(obj *appsv1.StatefulSet) (labels.Selector, bool) {
		return podselect.NonEmpty(obj.Spec.Selector)
	})
	if len(found) == 0 {
		return nil, fmt.Errorf("could not find StatefulSet for pod %s in namespace %s with labels: %v", pod.Name, pod.Namespace, pod.Labels)
	}
	return found, nil
}
