package main

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// podRow is one line of the table: the columns `kubectl get pods -o wide` would show for a pod
// (NAME, READY, STATUS, RESTARTS, AGE, NODE), computed by the same rules kubectl's printer uses.
type podRow struct {
	Name, Ready, Status, Restarts, Age, Node string
}

// rowFor computes the row for pod at time now.
func rowFor(pod *corev1.Pod, now time.Time) podRow {
	s := podStatusSummary(pod)
	restarts := fmt.Sprint(s.restarts)
	if !s.lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", s.restarts, duration.HumanDuration(now.Sub(s.lastRestart)))
	}
	age := "<unknown>"
	if t := pod.CreationTimestamp; !t.IsZero() {
		age = duration.HumanDuration(now.Sub(t.Time))
	}
	node := pod.Spec.NodeName
	if node == "" {
		node = "<none>"
	}
	return podRow{
		Name:     pod.Name,
		Ready:    fmt.Sprintf("%d/%d", s.ready, s.total),
		Status:   s.reason,
		Restarts: restarts,
		Age:      age,
		Node:     node,
	}
}

// statusSummary is what the READY, STATUS and RESTARTS columns are made of.
type statusSummary struct {
	ready, total int
	reason       string
	restarts     int32
	lastRestart  time.Time
}

// podStatusSummary applies kubectl's rules, in order:
//   - the reason starts as the pod's phase, or its status reason when one is set (Evicted, …);
//   - sidecar init containers (restartPolicy Always) count as containers of the pod, and
//     their restarts count always, those of other init containers only while initialising;
//   - the first init container that has not finished successfully (and is not a started
//     sidecar) turns the reason into Init:<reason>, Init:ExitCode:<n>, Init:Signal:<n> or
//     Init:<done>/<total>;
//   - once initialised, the last container with a waiting or terminated reason wins, and
//     running ready containers count as ready; a pod whose reason is Completed but that still
//     has a running container shows Running (or NotReady without a Ready condition);
//   - a deletion timestamp shows Terminating, or Unknown when the node was lost.
func podStatusSummary(pod *corev1.Pod) statusSummary {
	s := statusSummary{total: len(pod.Spec.Containers), reason: string(pod.Status.Phase)}
	if pod.Status.Reason != "" {
		s.reason = pod.Status.Reason
	}
	noteRestart := func(cs *corev1.ContainerStatus, restarts *int32, last *time.Time) {
		*restarts += cs.RestartCount
		if t := cs.LastTerminationState.Terminated; t != nil && t.FinishedAt.After(*last) {
			*last = t.FinishedAt.Time
		}
	}
	// Restarts of sidecars still count once the pod is initialised; those of ordinary init
	// containers only while it is initialising.
	var sidecarRestarts int32
	var sidecarLastRestart time.Time

	sidecars := make(map[string]bool)
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
			s.total++
		}
	}

	initializing := false
	for i := range pod.Status.InitContainerStatuses {
		cs := &pod.Status.InitContainerStatuses[i]
		noteRestart(cs, &s.restarts, &s.lastRestart)
		sidecar := sidecars[cs.Name]
		if sidecar {
			noteRestart(cs, &sidecarRestarts, &sidecarLastRestart)
		}
		if sidecar && cs.Started != nil && *cs.Started && cs.Ready {
			s.ready++
		}
		switch t, w := cs.State.Terminated, cs.State.Waiting; {
		case t != nil && t.ExitCode == 0:
			continue
		case sidecar && cs.Started != nil && *cs.Started:
			continue
		case t != nil:
			switch {
			case t.Reason != "":
				s.reason = "Init:" + t.Reason
			case t.Signal != 0:
				s.reason = fmt.Sprintf("Init:Signal:%d", t.Signal)
			default:
				s.reason = fmt.Sprintf("Init:ExitCode:%d", t.ExitCode)
			}
		case w != nil && w.Reason != "" && w.Reason != "PodInitializing":
			s.reason = "Init:" + w.Reason
		default:
			s.reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		initializing = true
		break
	}

	if !initializing || podConditionTrue(pod, corev1.PodInitialized) {
		s.restarts, s.lastRestart = sidecarRestarts, sidecarLastRestart
		hasRunning := false
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			cs := &pod.Status.ContainerStatuses[i]
			noteRestart(cs, &s.restarts, &s.lastRestart)
			switch t, w := cs.State.Terminated, cs.State.Waiting; {
			case w != nil && w.Reason != "":
				s.reason = w.Reason
			case t != nil && t.Reason != "":
				s.reason = t.Reason
			case t != nil && t.Signal != 0:
				s.reason = fmt.Sprintf("Signal:%d", t.Signal)
			case t != nil:
				s.reason = fmt.Sprintf("ExitCode:%d", t.ExitCode)
			case cs.Ready && cs.State.Running != nil:
				hasRunning = true
				s.ready++
			}
		}
		if s.reason == "Completed" && hasRunning {
			if podConditionTrue(pod, corev1.PodReady) {
				s.reason = "Running"
			} else {
				s.reason = "NotReady"
			}
		}
	}

	switch {
	case pod.DeletionTimestamp != nil && pod.Status.Reason == "NodeLost":
		s.reason = "Unknown"
	case pod.DeletionTimestamp != nil:
		s.reason = "Terminating"
	}
	return s
}

// podConditionTrue reports whether pod has condition t with status True.
func podConditionTrue(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
