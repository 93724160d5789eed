package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

const (
	// managedByLabel and managedBy mark the pods this reconciler looks after: the ones the
	// driver creates, never another program's.
	managedByLabel = "app.kubernetes.io/managed-by"
	managedBy      = "kinformer-ctrlruntime-example"
	// reconciledAnnotation is what the reconciler sets on each of its pods.
	reconciledAnnotation = "example.com/reconciled-by"
	reconciledValue      = "kinformer"
)

// PodReconciler annotates the pods labelled as managed by this example, once each, reading
// them from the manager's cache (kinformer's informers underneath) and writing through the
// manager's client.
type PodReconciler struct {
	client.Client
	Scheme *runtime.Scheme

	// seen receives what each Reconcile found, for the driver to print and wait on.
	seen chan seen
}

// seen is what one Reconcile found for one pod.
type seen struct {
	key types.NamespacedName
	// outcome is "annotated", "up to date" or "gone".
	outcome string
}

// Reconcile reads the pod from the cache: a pod that is gone is reported so; one without the
// annotation gets it with a merge patch; one with it is up to date.
func (r *PodReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	var pod corev1.Pod
	if err := r.Get(ctx, req.NamespacedName, &pod); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.report(ctx, req, "gone")
		}
		return ctrl.Result{}, err
	}
	if pod.Annotations[reconciledAnnotation] == reconciledValue {
		return ctrl.Result{}, r.report(ctx, req, "up to date")
	}
	patch := client.MergeFrom(pod.DeepCopy())
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[reconciledAnnotation] = reconciledValue
	if err := r.Patch(ctx, &pod, patch); err != nil {
		return ctrl.Result{}, err
	}
	log.V(1).Info("annotated", "pod", req.NamespacedName)
	return ctrl.Result{}, r.report(ctx, req, "annotated")
}

// report hands what Reconcile found to the driver; it fails only when ctx ends first.
func (r *PodReconciler) report(ctx context.Context, req ctrl.Request, outcome string) error {
	select {
	case r.seen <- seen{key: req.NamespacedName, outcome: outcome}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SetupWithManager sets up the controller with the Manager: pods, restricted to this
// example's.
func (r *PodReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&corev1.Pod{}).
		WithEventFilter(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetLabels()[managedByLabel] == managedBy
		})).
		Named("pod").
		Complete(r)
}
