package v1beta1

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/listers/internal/podselect"
)

// PodDisruptionBudgetListerExpansion holds the extra lookups of PodDisruptionBudgetLister.
type PodDisruptionBudgetListerExpansion interface {
	// GetPodPodDisruptionBudgets returns the PodDisruptionBudgets of the
	// pod's namespace whose selector selects the pod. It returns an error when
	// the pod is nil or no PodDisruptionBudget selects it.
	GetPodPodDisruptionBudgets(pod *corev1.Pod) ([]*policyv1beta1.PodDisruptionBudget, error)
}

// PodDisruptionBudgetNamespaceListerExpansion holds the extra lookups of
// PodDisruptionBudgetNamespaceLister; it has none.
type PodDisruptionBudgetNamespaceListerExpansion interface{}

// GetPodPodDisruptionBudgets implements PodDisruptionBudgetListerExpansion. A PodDisruptionBudget with an invalid, missing or
// empty selector selects no pod.
// A nil pod is an error. Only objects in the pod's own namespace are
// considered, even when that namespace is empty. Differs from client-go
// v0.37.2; see COMPATIBILITY.md.
func (s *podDisruptionBudgetLister) GetPodPodDisruptionBudgets(pod *corev1.Pod) ([]*policyv1beta1.PodDisruptionBudget, error) {
	if pod == nil {
		return nil, podselect.ErrNilObject
	}
	candidates, err := s.PodDisruptionBudgets(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	found := podselect.Matching(candidates, pod.Namespace, pod.Labels, func(obj *policyv1beta1.PodDisruptionBudget) (labels.Selector, bool) {
		return podselect.NonEmpty(obj.Spec.Selector)
	})
	if len(found) == 0 {
		return nil, fmt.Errorf("could not find PodDisruptionBudget for pod %s in namespace %s with labels: %v", pod.Name, pod.Namespace, pod.Labels)
	}
	return found, nil
}
