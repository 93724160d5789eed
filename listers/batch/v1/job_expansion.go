package v1

import (
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kinformer/kinformer/listers/internal/podselect"
)

// JobListerExpansion holds the extra lookups of JobLister.
type JobListerExpansion interface {
	// GetPodJobs returns copies of the Jobs of the pod's namespace whose
	// selector selects the pod. At most one of them (the one in the pod's
	// ControllerRef) really manages it. It returns an error when the pod is
	// nil, has no labels, or no Job selects it.
	GetPodJobs(pod *corev1.Pod) ([]batchv1.Job, error)
}

// JobNamespaceListerExpansion holds the extra lookups of
// JobNamespaceLister; it has none.
type JobNamespaceListerExpansion interface{}

// GetPodJobs implements JobListerExpansion. A Job with an invalid or missing selector selects
// no pod; an empty selector selects every pod.
// A nil pod is an error. Only objects in the pod's own namespace are
// considered, even when that namespace is empty. Differs from client-go
// v0.37.2; see COMPATIBILITY.md.
func (s *jobLister) GetPodJobs(pod *corev1.Pod) ([]batchv1.Job, error) {
	if pod == nil {
		return nil, podselect.ErrNilObject
	}
	if len(pod.Labels) == 0 {
		return nil, fmt.Errorf("no jobs found for pod %v because it has no labels", pod.Name)
	}
	candidates, err := s.Jobs(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil, err
	}
	found := podselect.Matching(candidates, pod.Namespace, pod.Labels, func(obj *batchv1.Job) (labels.Selector, bool) {
		return podselect.AllowEmpty(obj.Spec.Selector)
	})
	if len(found) == 0 {
		return nil, fmt.Errorf("could not find jobs for pod %s in namespace %s with labels: %v", pod.Name, pod.Namespace, pod.Labels)
	}
	out := make([]batchv1.Job, 0, len(found))
	for _, obj := range found {
		out = append(out, *obj)
	}
	return out, nil
}
