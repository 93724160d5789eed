package main

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRowFor(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-90 * time.Minute))
	always := corev1.ContainerRestartPolicyAlways
	yes := true
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	waiting := func(r string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: r}}
	}
	terminated := func(code int32, r string) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: r}}
	}
	pod := func(containers, inits int, mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", CreationTimestamp: created},
			Spec: corev1.PodSpec{NodeName: "n1"}}
		for range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c" + string(rune('0'+len(p.Spec.Containers)))})
		}
		for range inits {
			p.Spec.InitContainers = append(p.Spec.InitContainers, corev1.Container{Name: "i" + string(rune('0'+len(p.Spec.InitContainers)))})
		}
		mutate(p)
		return p
	}
	cases := []struct {
		name string
		pod  *corev1.Pod
		want podRow
	}{
		{"pending unscheduled", pod(1, 0, func(p *corev1.Pod) { p.Spec.NodeName = ""; p.Status.Phase = corev1.PodPending }),
			podRow{"p", "0/1", "Pending", "0", "90m", "<none>"}},
		{"running one of two ready", pod(2, 0, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", Ready: true, State: running}, {Name: "c1", State: running}}
		}), podRow{"p", "1/2", "Running", "0", "90m", "n1"}},
		{"container creating", pod(1, 0, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", State: waiting("ContainerCreating")}}
		}), podRow{"p", "0/1", "ContainerCreating", "0", "90m", "n1"}},
		{"crash loop with restarts", pod(1, 0, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", RestartCount: 3, State: waiting("CrashLoopBackOff"),
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.NewTime(now.Add(-2 * time.Minute))}}}}
		}), podRow{"p", "0/1", "CrashLoopBackOff", "3 (2m ago)", "90m", "n1"}},
		{"completed", pod(1, 0, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", State: terminated(0, "Completed")}}
		}), podRow{"p", "0/1", "Completed", "0", "90m", "n1"}},
		{"exit code without reason", pod(1, 0, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", State: terminated(137, "")}}
		}), podRow{"p", "0/1", "ExitCode:137", "0", "90m", "n1"}},
		{"init running", pod(1, 2, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i0", State: terminated(0, "Completed")}, {Name: "i1", State: running}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", State: waiting("PodInitializing")}}
		}), podRow{"p", "0/1", "Init:1/2", "0", "90m", "n1"}},
		{"init crash loop", pod(1, 1, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i0", RestartCount: 2, State: waiting("CrashLoopBackOff")}}
		}), podRow{"p", "0/1", "Init:CrashLoopBackOff", "2", "90m", "n1"}},
		{"init failed", pod(1, 1, func(p *corev1.Pod) {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i0", State: terminated(1, "Error")}}
		}), podRow{"p", "0/1", "Init:Error", "0", "90m", "n1"}},
		{"started sidecar counts as a container", pod(1, 1, func(p *corev1.Pod) {
			p.Spec.InitContainers[0].RestartPolicy = &always
			p.Status.Phase = corev1.PodRunning
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i0", Started: &yes, Ready: true, RestartCount: 1, State: running}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", Ready: true, State: running}}
		}), podRow{"p", "2/2", "Running", "1", "90m", "n1"}},
		{"terminating", pod(1, 0, func(p *corev1.Pod) {
			ts := metav1.NewTime(now)
			p.DeletionTimestamp = &ts
			p.Status.Phase = corev1.PodRunning
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c0", Ready: true, State: running}}
		}), podRow{"p", "1/1", "Terminating", "0", "90m", "n1"}},
		{"evicted", pod(1, 0, func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed; p.Status.Reason = "Evicted" }),
			podRow{"p", "0/1", "Evicted", "0", "90m", "n1"}},
		{"no creation timestamp", pod(1, 0, func(p *corev1.Pod) { p.CreationTimestamp = metav1.Time{}; p.Status.Phase = corev1.PodPending }),
			podRow{"p", "0/1", "Pending", "0", "<unknown>", "n1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := rowFor(tc.pod, now); got != tc.want {
				t.Errorf("rowFor = %+v, want %+v", got, tc.want)
			}
		})
	}
}
