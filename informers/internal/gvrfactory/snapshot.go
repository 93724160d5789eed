package gvrfactory

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SnapshotFileName returns the name of the snapshot file of gvr's informer
// in a factory's snapshot directory: "<resource>.<version>.<group>" (no
// group part for the core group), then "."+variant when variant is not ""
// (the metadata factory passes "metadata", so that a dynamic and a metadata
// factory sharing a directory do not overwrite each other's files), then
// ".snap". Path separators in the names are replaced by "_".
func SnapshotFileName(gvr schema.GroupVersionResource, variant string) string {
	parts := []string{gvr.Resource, gvr.Version}
	if gvr.Group != "" {
		parts = append(parts, gvr.Group)
	}
	if variant != "" {
		parts = append(parts, variant)
	}
	name := strings.Join(parts, ".") + ".snap"
	return strings.NewReplacer("/", "_", "\\", "_").Replace(name)
}

// clusterIdentityTimeout bounds the one read of a factory's cluster
// identity.
const clusterIdentityTimeout = 30 * time.Second

// KubeSystemNamespace is the namespace whose UID identifies a cluster: it
// exists in every cluster, is never deleted, and gets a new UID when a
// cluster is rebuilt, even at the same address.
const KubeSystemNamespace = "kube-system"

// ClusterIdentity reads the identity of a factory's cluster (the UID of its
// kube-system namespace) once, on the first call of Get, and remembers the
// outcome, a failure included: a factory that could not read it takes no
// snapshot until it is built again. Safe for concurrent use; callers wait
// for the first read.
type ClusterIdentity struct {
	read func(ctx context.Context) (string, error)

	mu   sync.Mutex
	done bool
	id   string
	err  error
}

// NamespacesGVR is the core namespaces resource.
var NamespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// KubeSystemUID returns a ClusterIdentity that reads the UID of the
// kube-system namespace with get, the Get of a client's namespaces resource
// (dynamic or metadata).
func KubeSystemUID[T metav1.Object](get func(ctx context.Context, name string, options metav1.GetOptions, subresources ...string) (T, error)) *ClusterIdentity {
	return NewClusterIdentity(func(ctx context.Context) (string, error) {
		ns, err := get(ctx, KubeSystemNamespace, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		return string(ns.GetUID()), nil
	})
}

// NewClusterIdentity returns a ClusterIdentity that reads with read.
func NewClusterIdentity(read func(ctx context.Context) (string, error)) *ClusterIdentity {
	return &ClusterIdentity{read: read}
}

// Get returns the cluster's identity, reading it on the first call (bounded
// by ctx and by clusterIdentityTimeout); an empty identity is an error.
func (c *ClusterIdentity) Get(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.done {
		ctx, cancel := context.WithTimeout(ctx, clusterIdentityTimeout)
		c.id, c.err = c.read(ctx)
		cancel()
		if c.err == nil && c.id == "" {
			c.err = errors.New("the kube-system namespace has no UID")
		}
		c.done = true
	}
	return c.id, c.err
}

// get is Get for a possibly nil ClusterIdentity: without one the cluster is
// not known.
func (c *ClusterIdentity) get(ctx context.Context) (string, error) {
	if c == nil {
		return "", errors.New("no way to read the cluster's identity")
	}
	return c.Get(ctx)
}
