package main

import (
	"context"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	kinformercr "github.com/kinformer/kinformer/interop/controllerruntime"
)

// drive is what makes the example run to completion: once the manager's cache has synced, it
// creates a namespace and a pod through the manager's client, waits until the reconciler has
// annotated the pod and seen the annotation in the cache, deletes the pod, waits until the
// reconciler has seen it gone, deletes the namespace and returns. It prints each step and
// what the reconciler reported. It gives up after timeout, or when ctx ends.
func drive(ctx context.Context, mgr ctrl.Manager, r *PodReconciler, timeout time.Duration, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("the manager's cache did not sync within %s", timeout)
	}
	informer, err := mgr.GetCache().GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return fmt.Errorf("the pod informer: %w", err)
	}
	engine := "client-go's"
	if _, ok := kinformercr.Unwrap(informer); ok {
		engine = "kinformer's"
	}
	fmt.Fprintf(stdout, "manager started: the pod informer is %s\n", engine)

	c := mgr.GetClient()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: managedBy + "-"}}
	if err := c.Create(ctx, ns); err != nil {
		return fmt.Errorf("create a namespace: %w", err)
	}
	defer func() {
		// The namespace goes last; a cluster without a namespace controller keeps it
		// Terminating, which harms nothing.
		_ = c.Delete(context.WithoutCancel(ctx), ns)
	}()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "demo", Labels: map[string]string{managedByLabel: managedBy}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
	}
	if err := c.Create(ctx, pod); err != nil {
		return fmt.Errorf("create pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	fmt.Fprintf(stdout, "created pod %s/%s\n", pod.Namespace, pod.Name)
	key := client.ObjectKeyFromObject(pod)
	reconciles := 0
	// awaitOutcome prints what the reconciler reports until it reports want for the pod.
	awaitOutcome := func(want string) error {
		for {
			select {
			case s := <-r.seen:
				reconciles++
				fmt.Fprintf(stdout, "reconciled %s: %s\n", s.key, s.outcome)
				if s.key == key && s.outcome == want {
					return nil
				}
			case <-ctx.Done():
				return fmt.Errorf("the reconciler did not report %s %q within %s", key, want, timeout)
			}
		}
	}
	if err := awaitOutcome("up to date"); err != nil {
		return err
	}
	if err := c.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
		return fmt.Errorf("delete pod %s: %w", key, err)
	}
	fmt.Fprintf(stdout, "deleted pod %s\n", key)
	if err := awaitOutcome("gone"); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "done: %d reconciles of pod %s, on %s informers\n", reconciles, key, engine)
	return nil
}
