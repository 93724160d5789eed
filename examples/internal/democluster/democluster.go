// Package democluster is the workload the examples watch: a generator that creates, advances,
// reschedules and deletes pods at a steady rate, so an informer sees the same kinds of events
// it would see on a busy cluster. It writes either to an embedded cluster (client-go's fake
// clientset, seeded with pods: New) or through a real API server (NewOnServer), obeying the
// server's rules there: status through the status subresource, scheduling through the binding
// subresource, and graceful deletion.
//
// The sequence of writes depends only on the seed and the generator's own model of the pods.
// Run writes until its context ends; RunWith can also stop after a number of writes and make
// each one only once the watching program has caught up with every earlier one (Diff compares
// a store with the model), so that what the program prints is the same on every run, however
// loaded the machine: the examples' tests rely on this.
package democluster

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// nodeNames are the node names the generator schedules pods onto.
var nodeNames = [...]string{"node-a", "node-b", "node-c", "node-d"}

// namespaces are the namespaces the generator spreads pods over.
var namespaces = [...]string{"default", "shop", "batch"}

// Cluster is a clientset plus the generator's model of every pod in it. Client is safe for
// concurrent use; Run and RunWith must not be called from two goroutines at once.
type Cluster struct {
	// Client is the clientset the generator writes to and the examples' informers list and
	// watch: a fake clientset for New, the caller's for NewOnServer.
	Client kubernetes.Interface

	// server is set for NewOnServer: writes follow a real API server's rules.
	server bool

	rng      *rand.Rand
	pods     map[string]*corev1.Pod // namespace/name → last written pod
	order    []string               // keys of pods, for random picks
	seq      int
	target   int
	watching chan struct{}
}

// New returns a cluster seeded with pods pods in assorted states, created with the given seed
// for a reproducible workload. Watching() is closed once a client opens a pod watch.
func New(pods int, seed uint64) *Cluster {
	c := &Cluster{
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		pods:     make(map[string]*corev1.Pod),
		target:   pods,
		watching: make(chan struct{}),
	}
	seedObjs := make([]runtime.Object, 0, pods)
	for range pods {
		p := c.newPod()
		p.CreationTimestamp = metav1.NewTime(time.Now().Add(-time.Duration(c.rng.IntN(3600)) * time.Second))
		// Spread the seed pods over the lifecycle so the first table is varied.
		for range c.rng.IntN(5) {
			c.advance(p)
		}
		c.remember(p)
		seedObjs = append(seedObjs, p)
	}
	fc := fake.NewClientset(seedObjs...)
	c.Client = fc
	var once sync.Once
	fc.PrependWatchReactor("pods", func(clienttesting.Action) (bool, watch.Interface, error) {
		once.Do(func() { close(c.watching) })
		return false, nil, nil
	})
	return c
}

// NewOnServer returns a generator that writes through client to a real API server. It
// creates the namespaces it uses (when missing) and pods pods, advanced along their lifecycle
// by a few random steps each, so the first table is varied; it returns the first error a write
// gets. Pods it created earlier are not adopted: use a fresh cluster.
func NewOnServer(ctx context.Context, client kubernetes.Interface, pods int, seed uint64) (*Cluster, error) {
	c := &Cluster{
		Client:   client,
		server:   true,
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		pods:     make(map[string]*corev1.Pod),
		target:   pods,
		watching: make(chan struct{}),
	}
	// A real server has resourceVersions: an informer resumes its watch from its list, so the
	// workload need not wait for it.
	close(c.watching)
	for _, ns := range namespaces {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	for range pods {
		p := c.newPod()
		created, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("create pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		c.remember(created)
		for range c.rng.IntN(5) {
			next := created.DeepCopy()
			c.advance(next)
			if created, err = c.write(ctx, created, next); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// Watching is closed when the first pod watch is opened on the clientset. The fake clientset
// has no resourceVersions, so a write made between an informer's LIST and its WATCH would be
// lost: start the workload only after this channel is closed. For NewOnServer it is closed
// from the start.
func (c *Cluster) Watching() <-chan struct{} { return c.watching }

// Run writes to the cluster rate times per second until ctx is done, then returns nil; it
// returns an error only when a write fails. Call it from one goroutine at a time.
func (c *Cluster) Run(ctx context.Context, rate float64) error {
	return c.RunWith(ctx, RunOptions{Rate: rate})
}

// RunOptions say how fast and how long RunWith writes.
type RunOptions struct {
	// Rate is the most writes per second; it must be positive.
	Rate float64

	// Writes, when positive, is how many writes the run makes before it returns; zero runs
	// until ctx is done.
	Writes int

	// WaitCaughtUp, when set, is called before every write and, when Writes is positive,
	// once more after the last; the write (or the return) waits until it returns. It should
	// return once the program watching the cluster has caught up with every write so far (it
	// may call Diff), or ctx's error when ctx is done first; any other error ends the run with
	// that error. With it, each write is made in a quiet cluster, so what the watcher sees
	// depends only on the seed, the pod count and the number of writes, not on timing.
	WaitCaughtUp func(ctx context.Context) error
}

// RunWith writes to the cluster at most o.Rate times per second, until o.Writes writes are
// made (then, with o.WaitCaughtUp, until the watcher has caught up with them) or ctx is done.
// It returns nil then, and an error when a write or o.WaitCaughtUp fails while ctx is not
// done. Call it from one goroutine at a time; the model it keeps may be read (Diff) from
// o.WaitCaughtUp and, once it has returned, by whoever received its result.
func (c *Cluster) RunWith(ctx context.Context, o RunOptions) error {
	if o.Rate <= 0 {
		return fmt.Errorf("democluster: rate must be positive, got %v", o.Rate)
	}
	if o.Writes < 0 {
		return fmt.Errorf("democluster: writes must be >= 0, got %d", o.Writes)
	}
	tick := time.NewTicker(time.Duration(float64(time.Second) / o.Rate))
	defer tick.Stop()
	// Writes carry ctx's cancellation but not its deadline: with the deadline, the client's
	// rate limiter refuses a write that could not start before it ("would exceed context
	// deadline") while ctx is not yet done, which would read as a failed write.
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	caughtUp := func() error {
		if o.WaitCaughtUp == nil {
			return nil
		}
		return o.WaitCaughtUp(wctx)
	}
	for written := 0; o.Writes == 0 || written < o.Writes; written++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		err := caughtUp()
		if err == nil {
			err = c.step(wctx)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	if err := caughtUp(); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// Store is the read side of a store of pods keyed namespace/name, such as an informer's
// cache.Indexer.
type Store interface {
	// ListKeys returns the keys of every pod in the store.
	ListKeys() []string
	// GetByKey returns the pod stored under key, whether there is one, and an error when
	// the store cannot tell.
	GetByKey(key string) (item any, exists bool, err error)
}

// Diff compares s with the generator's model of the cluster: the pods it created or seeded
// and has not deleted, each as its last write left it. It returns "" when s holds the same
// keys and, for each key, the same pod: the same resourceVersion where the server sets one
// (NewOnServer), else equal contents (New's fake clientset sets none; every write changes
// a pod's contents). Otherwise it describes one difference, the first in key order. Call it
// only while no RunWith is making writes: from RunOptions.WaitCaughtUp, or after RunWith
// has returned.
func (c *Cluster) Diff(s Store) string {
	keys := s.ListKeys()
	slices.Sort(keys)
	for _, key := range keys {
		if _, ok := c.pods[key]; !ok {
			return fmt.Sprintf("%s is in the store but deleted (or never created) by the generator", key)
		}
	}
	model := slices.Clone(c.order)
	slices.Sort(model)
	for _, key := range model {
		want := c.pods[key]
		item, ok, err := s.GetByKey(key)
		switch {
		case err != nil:
			return fmt.Sprintf("%s: %v", key, err)
		case !ok:
			return fmt.Sprintf("%s is not in the store yet", key)
		}
		if d := diffPod(want, item); d != "" {
			return key + ": " + d
		}
	}
	return ""
}

// diffPod compares the pod the generator last wrote with a stored item.
func diffPod(want *corev1.Pod, item any) string {
	got, ok := item.(*corev1.Pod)
	if !ok {
		return fmt.Sprintf("stored as %T, want *v1.Pod", item)
	}
	if want.ResourceVersion != "" || got.ResourceVersion != "" {
		if got.ResourceVersion != want.ResourceVersion {
			return fmt.Sprintf("stored at resourceVersion %q, last written at %q", got.ResourceVersion, want.ResourceVersion)
		}
		return ""
	}
	if !equality.Semantic.DeepEqual(want, got) {
		return "stored contents differ from the last write"
	}
	return ""
}

// WaitFor calls cond now and after every receive from changed until it returns true, and then
// returns nil; it returns ctx's error when ctx is done first. Whatever cond reads should send
// on changed (without blocking, into a channel of capacity 1) after each change, so no change
// goes unnoticed; WaitFor never polls on a timer.
func WaitFor(ctx context.Context, changed <-chan struct{}, cond func() bool) error {
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
	return nil
}

// step makes one write: create, advance, reschedule, begin deleting or finish deleting a pod.
func (c *Cluster) step(ctx context.Context) error {
	pods := c.Client.CoreV1()
	n := len(c.order)
	roll := c.rng.IntN(100)
	switch {
	case n == 0 || (n < c.target*11/10 && roll < 20):
		p := c.newPod()
		created, err := pods.Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		c.remember(created)
		return nil
	}
	key := c.order[c.rng.IntN(n)]
	old := c.pods[key]
	p := old.DeepCopy()
	switch {
	case p.DeletionTimestamp != nil:
		return c.finishDelete(ctx, p)
	case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed,
		roll < 30 && n > c.target*9/10:
		return c.beginDelete(ctx, p)
	case roll < 38 && p.Spec.NodeName != "" && !c.server:
		// A real server does not let a bound pod move: there it advances instead.
		c.reschedule(p)
	default:
		c.advance(p)
	}
	_, err := c.write(ctx, old, p)
	return err
}

// write stores next, a changed copy of old, and records the result. On the fake clientset a
// plain update carries everything; on a real server the node goes through the binding
// subresource and the status through the status subresource.
func (c *Cluster) write(ctx context.Context, old, next *corev1.Pod) (*corev1.Pod, error) {
	key := next.Namespace + "/" + next.Name
	pods := c.Client.CoreV1().Pods(next.Namespace)
	if !c.server {
		updated, err := pods.Update(ctx, next, metav1.UpdateOptions{})
		if err != nil {
			return nil, fmt.Errorf("update pod %s: %w", key, err)
		}
		c.pods[key] = updated
		return updated, nil
	}
	if old.Spec.NodeName == "" && next.Spec.NodeName != "" {
		binding := &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Namespace: next.Namespace, Name: next.Name},
			Target:     corev1.ObjectReference{Kind: "Node", Name: next.Spec.NodeName},
		}
		if err := pods.Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("bind pod %s to %s: %w", key, next.Spec.NodeName, err)
		}
		// The binding changed the pod's resourceVersion; pods allow an unconditional status
		// update, and this generator is the pods' only writer.
		next.ResourceVersion = ""
	}
	updated, err := pods.UpdateStatus(ctx, next, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update status of pod %s: %w", key, err)
	}
	c.pods[key] = updated
	return updated, nil
}

// beginDelete starts deleting p: on the fake clientset by setting its deletion timestamp, on a
// real server by a graceful delete, which removes unscheduled and finished pods at once and
// leaves the others terminating (no kubelet will confirm them).
func (c *Cluster) beginDelete(ctx context.Context, p *corev1.Pod) error {
	key := p.Namespace + "/" + p.Name
	if !c.server {
		now := metav1.Now()
		p.DeletionTimestamp = &now
		_, err := c.write(ctx, c.pods[key], p)
		return err
	}
	pods := c.Client.CoreV1().Pods(p.Namespace)
	if err := pods.Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod %s: %w", key, err)
	}
	left, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		c.forget(key)
		return nil
	case err != nil:
		return fmt.Errorf("get pod %s after delete: %w", key, err)
	}
	c.pods[key] = left
	return nil
}

// finishDelete removes a terminating pod for good.
func (c *Cluster) finishDelete(ctx context.Context, p *corev1.Pod) error {
	key := p.Namespace + "/" + p.Name
	opts := metav1.DeleteOptions{}
	if c.server {
		var now int64
		opts.GracePeriodSeconds = &now
	}
	if err := c.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, opts); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete pod %s: %w", key, err)
	}
	c.forget(key)
	return nil
}

// newPod returns a new pending, unscheduled pod with one or two containers and, for some,
// an init container.
func (c *Cluster) newPod() *corev1.Pod {
	c.seq++
	ns := namespaces[c.rng.IntN(len(namespaces))]
	apps := [...]string{"web", "api", "worker", "cron"}
	app := apps[c.rng.IntN(len(apps))]
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         ns,
			Name:              fmt.Sprintf("%s-%05d", app, c.seq),
			Labels:            map[string]string{"app": app},
			CreationTimestamp: metav1.Now(),
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: app, Image: "registry.example/" + app + ":1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
	if c.rng.IntN(3) == 0 {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "sidecar", Image: "registry.example/proxy:1"})
	}
	if c.rng.IntN(3) == 0 {
		p.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "registry.example/migrate:1"}}
	}
	return p
}

// remember records p as the latest state of its key.
func (c *Cluster) remember(p *corev1.Pod) {
	key := p.Namespace + "/" + p.Name
	if _, ok := c.pods[key]; !ok {
		c.order = append(c.order, key)
	}
	c.pods[key] = p
}

// forget drops key from the model.
func (c *Cluster) forget(key string) {
	delete(c.pods, key)
	for i, k := range c.order {
		if k == key {
			c.order[i] = c.order[len(c.order)-1]
			c.order = c.order[:len(c.order)-1]
			return
		}
	}
}

// reschedule moves p to another node, back to the container-creating stage.
func (c *Cluster) reschedule(p *corev1.Pod) {
	for {
		node := nodeNames[c.rng.IntN(len(nodeNames))]
		if node != p.Spec.NodeName {
			p.Spec.NodeName = node
			break
		}
	}
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = nil
	p.Status.ContainerStatuses = waitingStatuses(p, "ContainerCreating")
}

// advance moves p one step along its lifecycle: scheduled → initialising → creating →
// running → (crash loop ↔ running) → completed or failed.
func (c *Cluster) advance(p *corev1.Pod) {
	now := metav1.Now()
	switch {
	case p.Spec.NodeName == "":
		p.Spec.NodeName = nodeNames[c.rng.IntN(len(nodeNames))]
		p.Status.HostIP = "10.0.0.1"
		if len(p.Spec.InitContainers) > 0 {
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{
				Name:  p.Spec.InitContainers[0].Name,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			}}
		}
		if len(p.Spec.InitContainers) > 0 {
			p.Status.ContainerStatuses = waitingStatuses(p, "PodInitializing")
		} else {
			p.Status.ContainerStatuses = waitingStatuses(p, "ContainerCreating")
		}
	case len(p.Status.InitContainerStatuses) > 0 && p.Status.InitContainerStatuses[0].State.Terminated == nil:
		p.Status.InitContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}}
		p.Status.ContainerStatuses = waitingStatuses(p, "ContainerCreating")
	case p.Status.Phase == corev1.PodPending:
		if len(p.Status.ContainerStatuses) == 0 {
			p.Status.ContainerStatuses = waitingStatuses(p, "ContainerCreating")
			return
		}
		c.run(p, now)
	case p.Status.Phase == corev1.PodRunning:
		cs := &p.Status.ContainerStatuses[0]
		switch roll := c.rng.IntN(10); {
		case cs.State.Waiting != nil:
			c.run(p, now)
		case roll < 4:
			cs.RestartCount++
			cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 1, Reason: "Error", FinishedAt: now}}
			cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
			cs.Ready = false
			setReady(p, false)
		case roll < 7:
			p.Status.Phase = corev1.PodSucceeded
			c.terminate(p, 0, "Completed", now)
		default:
			p.Status.Phase = corev1.PodFailed
			c.terminate(p, 1, "Error", now)
		}
	}
}

// run puts every container of p into the running, ready state.
func (c *Cluster) run(p *corev1.Pod, now metav1.Time) {
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP = fmt.Sprintf("10.244.%d.%d", c.rng.IntN(4), 2+c.rng.IntN(250))
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
		cs.Ready = true
		started := true
		cs.Started = &started
	}
	setReady(p, true)
}

// terminate stops every container of p with the given exit code and reason.
func (c *Cluster) terminate(p *corev1.Pod, code int32, reason string, now metav1.Time) {
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, FinishedAt: now}}
		cs.Ready = false
	}
	setReady(p, false)
}

// waitingStatuses returns one waiting status per container of p, with the given reason.
func waitingStatuses(p *corev1.Pod, reason string) []corev1.ContainerStatus {
	out := make([]corev1.ContainerStatus, len(p.Spec.Containers))
	for i, ctr := range p.Spec.Containers {
		out[i] = corev1.ContainerStatus{Name: ctr.Name, Image: ctr.Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}
	}
	return out
}

// setReady sets p's Ready condition.
func setReady(p *corev1.Pod, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
}
