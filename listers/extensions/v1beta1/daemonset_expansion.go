package v1beta1

import (
	"fmt"

	appsv1beta1 "k8s.io/api/apps/v1beta1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/listers/internal/podselect"
)

// DaemonSetListerExpansion holds the extra lookups of DaemonSetLister.
type DaemonSetListerExpansion interface {
	// GetPodDaemonSets returns the DaemonSets of the pod's namespace whose
	// selector selects the pod. At most one of them (the one in the pod's
	// ControllerRef) really manages it. It returns an error when the pod is
	// nil, has no labels, or no DaemonSet selects it.
	GetPodDaemonSets(pod *corev1.Pod) ([]*extensionsv1beta1.DaemonSet, error)
	// GetHistoryDaemonSets returns the DaemonSets of the
	// ControllerRevision's namespace whose selector selects it. It returns
	// an error when history is nil, has no labels, or no DaemonSet selects
	// it.
	GetHistoryDaemonSets(history *appsv1beta1.ControllerRevision) ([]*extensionsv1beta1.DaemonSet, error)
}

// DaemonSetNamespaceListerExpansion holds the extra lookups of
// DaemonSetNamespaceLister; it has none.
type DaemonSetNamespaceListerExpansion interface{}

// GetPodDaemonSets implements DaemonSetListerExpansion. A DaemonSet with an
// invalid, missing or empty selector selects no pod.
// A nil pod is an error. Differs from client-go v0.37.2; see COMPATIBILITY.md.
func (s *daemonSetLister) GetPodDaemonSets(pod *corev1.Pod) ([]*extensionsv1beta1.DaemonSet, error) {
	if pod == nil {
		return nil, podselect.ErrNilObject
	}
	if len(pod.Labels) == 0 {
		return nil, fmt.Errorf("no daemon sets found for pod %v because it has no labels", pod.Name)
	}
	candidates, err := s.DaemonSets(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	found := podselect.Matching(candidates, pod.Namespace, pod.Labels, func(ds *extensionsv1beta1.DaemonSet) (labels.Selector, bool) {
		return podselect.NonEmpty(ds.Spec.Selector)
	})
	if len(found) == 0 {
		return nil, fmt.Errorf("could not find daemon set for pod %s in namespace %s with labels: %v", pod.Name, pod.Namespace, pod.Labels)
	}
	return found, nil
}

// GetHistoryDaemonSets implements DaemonSetListerExpansion. A DaemonSet with
// an invalid, missing or empty selector selects nothing.
// A nil ControllerRevision is an error. Only objects in the revision's own
// namespace are considered, even when that namespace is empty. Differs from
// client-go v0.37.2; see COMPATIBILITY.md.
func (s *daemonSetLister) GetHistoryDaemonSets(history *appsv1beta1.ControllerRevision) ([]*extensionsv1beta1.DaemonSet, error) {
	if history == nil {
		return nil, podselect.ErrNilObject
	}
	if len(history.Labels) == 0 {
		return nil, fmt.Errorf("no DaemonSet found for ControllerRevision %s because it has no labels", history.Name)
	}
	candidates, err := s.DaemonSets(history.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	found := podselect.Matching(candidates, history.Namespace, history.Labels, func(ds *extensionsv1beta1.DaemonSet) (labels.Selector, bool) {
		return podselect.NonEmpty(ds.Spec.Selector)
	})
	if len(found) == 0 {
		return nil, fmt.Errorf("could not find DaemonSets for ControllerRevision %s in namespace %s with labels: %v", history.Name, history.Namespace, history.Labels)
	}
	return found, nil
}
