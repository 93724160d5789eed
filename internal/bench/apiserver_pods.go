package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// CreatePods creates the namespace namespace and pods realistic pods in it on a real API
// server (NewPod's, without what the server sets itself: UID, resourceVersion,
// managedFields, creation time, status), with 32 concurrent writers; it gives up after 10
// minutes. It returns the first error, with the pod it concerns.
func CreatePods(cs kubernetes.Interface, namespace string, pods int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= pods {
					return
				}
				p := NewPod(i, "")
				p.Namespace = namespace
				p.UID, p.ResourceVersion, p.ManagedFields, p.CreationTimestamp = "", "", nil, metav1.Time{}
				p.Status = v1.PodStatus{}
				for c := range p.Spec.Containers {
					if pr := p.Spec.Containers[c].ReadinessProbe; pr != nil && pr.HTTPGet != nil {
						pr.HTTPGet.Port = intstr.FromInt32(8080)
					}
				}
				if _, err := cs.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("creating pod %s/%s: %w", p.Namespace, p.Name, err)
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}
