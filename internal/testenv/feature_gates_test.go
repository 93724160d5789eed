package testenv

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFeatureGatesFlag(t *testing.T) {
	assert.Empty(t, featureGatesFlag(nil))
	assert.Equal(t, "--feature-gates=ShardedListAndWatch=true", featureGatesFlag(map[string]bool{ShardedListAndWatchGate: true}))
	assert.Equal(t, "--feature-gates=A=false,B=true", featureGatesFlag(map[string]bool{"B": true, "A": false}))
}

// TestShardedListAndWatchGate: a cluster started with the gate answers a
// LIST with a shard selector with the shard only, echoing the selector in
// its shardInfo.
func TestShardedListAndWatchGate(t *testing.T) {
	env := Start(t, Options{FeatureGates: map[string]bool{ShardedListAndWatchGate: true}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := env.Clientset()
	ns := Namespace(t, cs)
	for i := range 20 {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i)},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/app:1"}}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	const selector = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
	half, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{ShardSelector: selector})
	require.NoError(t, err)
	require.NotNil(t, half.ShardInfo, "the gate is on: the list echoes the selector")
	assert.Equal(t, selector, half.ShardInfo.Selector)
	all, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Nil(t, all.ShardInfo)
	assert.Len(t, all.Items, 20)
	assert.Less(t, len(half.Items), 20)
}
