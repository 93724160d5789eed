package factoryengine

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/sharding"
)

// Snapshots says how a factory names its informers' snapshot files and
// what it ties them to, besides the namespace and tweak of its Options.
type Snapshots[K comparable] struct {
	// Name names a key in errors (as Engine's name does).
	Name func(K) string
	// FileName returns the name of the snapshot file of key's informer in
	// the snapshot directory.
	FileName func(K) string
	// AlwaysSensitive reports the keys whose objects are sensitive whatever
	// the options say (core secrets, for a factory that cannot tell from
	// the objects' type); nil: none.
	AlwaysSensitive func(K) bool
	// Server is the address of the API server the files are tied to; ""
	// for none.
	Server string
	// Cluster reads the identity of the cluster the files are tied to
	// (cache.SharedIndexInformerOptions.SnapshotCluster); nil: none.
	Cluster func(ctx context.Context) (string, error)
}

// InformerOptions returns base with what o says about key's informer: its
// list admission and priority, the settings of o.Informer that are not
// zero, and, when o has a snapshot
// directory, snapshots is not nil and o has no Membership (sharded
// informers take no snapshots), its snapshot file (snapshots.FileName
// in the directory), scope (cache.SnapshotScopeFor of o's namespace and
// tweak, then snapshots.Server), cluster and protection (sensitive when
// snapshots.AlwaysSensitive or o.Sensitive says so, encrypted with
// o.SnapshotKey). A snapshot key of the wrong size leaves the snapshot
// fields unset (no snapshot rather than one without the protection asked
// for) and is reported through utilruntime.HandleError. It is the one place
// where a factory's options become an informer's settings.
func (o *Options[K]) InformerOptions(base cache.SharedIndexInformerOptions, key K, snapshots *Snapshots[K]) cache.SharedIndexInformerOptions {
	options := base
	options.ListAdmission = o.ListAdmission
	if o.ListAdmission != nil {
		options.ListAdmissionPriority = o.ListAdmissionPriorities[key]
	}
	overlay(&options, o.Informer)
	if o.SnapshotDir == "" || snapshots == nil || o.Membership.Member != nil {
		return options
	}
	if o.SnapshotKey != nil && len(o.SnapshotKey) != cache.SnapshotKeySize {
		utilruntime.HandleError(fmt.Errorf("no snapshot for %s: the snapshot encryption key has %d bytes; it must have %d", snapshots.Name(key), len(o.SnapshotKey), cache.SnapshotKeySize))
		return options
	}
	options.SnapshotFile = filepath.Join(o.SnapshotDir, snapshots.FileName(key))
	options.SnapshotScope = SnapshotScope(o.Namespace, o.TweakListOptions, snapshots.Server)
	options.SnapshotCluster = snapshots.Cluster
	options.SnapshotProtection = cache.SnapshotProtection{
		Sensitive: o.Sensitive[key] || (snapshots.AlwaysSensitive != nil && snapshots.AlwaysSensitive(key)),
		Key:       o.SnapshotKey,
	}
	return options
}

// SnapshotScope returns the scope a factory's snapshot files are tied to:
// cache.SnapshotScopeFor of its namespace and tweak, followed by the API
// server's address when server is not "", so that a snapshot taken from one
// cluster is not resumed against another (whose watch might accept the
// resourceVersion and leave the cache holding the first cluster's objects).
func SnapshotScope(namespace string, tweak func(*metav1.ListOptions), server string) string {
	scope := cache.SnapshotScopeFor(namespace, tweak)
	if server == "" {
		return scope
	}
	if scope != "" {
		scope += " "
	}
	return scope + "server=" + strconv.Quote(server)
}

// Configure gives informer, built but not started, the transform and the
// kinformer settings of options that InformerOptions derives from a
// factory's Options, through cache.ConfigureInformer: it is how the typed
// factory, whose informers are built by constructors that take no
// kinformer options, configures them. A zero setting leaves the informer's
// own (a projection's snapshot tie and transform check, set when it was
// built). An informer that refuses the settings (not built by package
// cache, or given a snapshot key of the wrong size) gets the error
// reported through utilruntime.HandleError; one refused for its snapshot
// protection is configured without a snapshot file. A *sharding.Informer,
// or a wrapper of one (WithMembership), gets the transform only: its range
// informers were given the settings when it was built (see NewInformer),
// and it cannot be configured afterwards.
func Configure(informer cache.SharedIndexInformer, transform cache.TransformFunc, options cache.SharedIndexInformerOptions) {
	if transform != nil {
		// The informer is new and not running, so this cannot fail.
		_ = informer.SetTransform(transform)
	}
	if _, sharded := sharding.InformerOf(informer); sharded {
		return
	}
	apply := func(withSnapshot bool) error {
		settings := options
		if !withSnapshot {
			settings.SnapshotFile, settings.SnapshotScope = "", ""
			settings.SnapshotCluster, settings.SnapshotProtection = nil, cache.SnapshotProtection{}
		}
		return cache.ConfigureInformer(informer, func(o *cache.SharedIndexInformerOptions) { overlay(o, settings) })
	}
	if err := apply(true); err != nil {
		utilruntime.HandleError(err)
		if options.SnapshotFile != "" {
			if err := apply(false); err != nil {
				utilruntime.HandleError(err)
			}
		}
	}
}

// Overlay returns dst with every field that is not zero in src set to src's
// value: a factory's settings (InformerOptions) over the options an
// informer is built with.
func Overlay(dst, src cache.SharedIndexInformerOptions) cache.SharedIndexInformerOptions {
	overlay(&dst, src)
	return dst
}

// overlay sets every field of dst that is not zero in src to src's value,
// leaving the others as they are. It walks the fields, so that a field
// added to cache.SharedIndexInformerOptions needs no change here.
func overlay(dst *cache.SharedIndexInformerOptions, src cache.SharedIndexInformerOptions) {
	to, from := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src)
	for i := range from.NumField() {
		if field := from.Field(i); !field.IsZero() {
			to.Field(i).Set(field)
		}
	}
}
