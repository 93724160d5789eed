package cache_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/informers"
)

// docs/operability.md's read-your-writes: after a write, wait until the informer's
// cache has caught up with the write's resourceVersion, then read it from
// the lister. (client-go's fake clientset does not assign resource
// versions; a reactor numbers the writes here as a real server does.)
func ExampleWaitForResourceVersion() {
	client := fake.NewClientset(&corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings", ResourceVersion: "10"},
		Data:       map[string]string{"mode": "a"},
	})
	var rv atomic.Int64
	rv.Store(10)
	client.PrependReactor("update", "configmaps", func(action clienttesting.Action) (bool, runtime.Object, error) {
		obj := action.(clienttesting.UpdateAction).GetObject().(*corev1.ConfigMap)
		obj.ResourceVersion = strconv.FormatInt(rv.Add(1), 10)
		return false, nil, nil // the tracker stores it
	})

	factory := informers.NewSharedInformerFactory(client, 0)
	cmInformer := factory.Core().V1().ConfigMaps()
	_ = cmInformer.Informer()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer factory.Shutdown()
	defer cancel()
	factory.StartWithContext(ctx)
	if err := factory.WaitForCacheSyncWithContext(ctx).AsError(); err != nil {
		fmt.Println(err)
		return
	}

	cm, err := client.CoreV1().ConfigMaps("default").Get(ctx, "settings", metav1.GetOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	cm.Data["mode"] = "b"
	cm, err = client.CoreV1().ConfigMaps("default").Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := cache.WaitForResourceVersion(ctx, cmInformer.Informer(), cm.ResourceVersion); err != nil {
		fmt.Println(err)
		return
	}
	fresh, _ := cmInformer.Lister().ConfigMaps("default").Get(cm.Name) // this write or a later one
	fmt.Println(fresh.ResourceVersion, fresh.Data["mode"])
	// Output:
	// 11 b
}
