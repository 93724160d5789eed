package projection_test

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/projection"
)

// A projection names the fields a controller reads; Apply shows what an
// informer with it holds of an object.
func ExampleProjection_Apply() {
	p := projection.MustNew("metadata.labels", "spec.nodeName", "status.phase")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "node-7", Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.9"},
	}
	obj, err := p.Apply(pod)
	if err != nil {
		panic(err)
	}
	projected := obj.(*corev1.Pod)
	fmt.Println(projected.Name, projected.Labels, projected.Spec.NodeName, projected.Status.Phase)
	fmt.Println("containers:", len(projected.Spec.Containers), "podIP:", projected.Status.PodIP == "")
	_, marked := projection.Marked(projected)
	fmt.Println("marked:", marked)
	fmt.Println(p)
	// Output:
	// web-1 map[app:web] node-7 Running
	// containers: 0 podIP: true
	// marked: true
	// apiVersion,kind,metadata.labels,metadata.name,metadata.namespace,metadata.resourceVersion,metadata.uid,spec.nodeName,status.phase
}

// A client built with GuardConfig refuses to write back an object read from
// a projected informer, before anything is sent.
func ExampleGuardConfig() {
	client, err := kubernetes.NewForConfig(projection.GuardConfig(&rest.Config{Host: "https://127.0.0.1:1"}))
	if err != nil {
		panic(err)
	}
	p := projection.MustNew("spec.nodeName")
	obj, _ := p.Apply(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop"}})
	_, err = client.CoreV1().Pods("shop").Update(context.Background(), obj.(*corev1.Pod), metav1.UpdateOptions{})
	fmt.Println(errors.Is(err, projection.ErrProjectedWrite))
	// Output: true
}
