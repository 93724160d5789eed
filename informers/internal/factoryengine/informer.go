package factoryengine

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/kinformer/kinformer/cache"
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
// list admission and priority, relist mode, watch idle timeout, staleness
// probe interval and maximum Retry-After, and, when o has a snapshot
// directory and snapshots is not nil, its snapshot file (snapshots.FileName
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
	options.RelistPageByPage = o.RelistPageByPage
	options.WatchIdleTimeout = o.WatchIdleTimeout
	options.StalenessProbeInterval = o.StalenessProbeInterval
	options.MaxRetryAfter = o.MaxRetryAfter
	if o.SnapshotDir == "" || snapshots == nil {
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
// settings of options that InformerOptions derives from a factory's
// Options, through the cache package's setters: it is how the typed
// factory, whose informers are built by constructors that take no
// kinformer options, configures them. A zero setting leaves the informer's
// own; an informer that refuses a setting (not built by package cache)
// gets an error reported through utilruntime.HandleError, and one that
// refuses its snapshot protection gets no snapshot file.
func Configure(informer cache.SharedIndexInformer, transform cache.TransformFunc, options cache.SharedIndexInformerOptions) {
	if transform != nil {
		// The informer is new and not running, so this cannot fail.
		_ = informer.SetTransform(transform)
	}
	report := func(err error) {
		if err != nil {
			utilruntime.HandleError(err)
		}
	}
	if a := options.ListAdmission; a != nil {
		report(cache.SetListAdmission(informer, a))
		if p := options.ListAdmissionPriority; p != 0 {
			report(cache.SetListAdmissionPriority(informer, p))
		}
	}
	if d := options.WatchIdleTimeout; d != 0 {
		report(cache.SetWatchIdleTimeout(informer, d))
	}
	if d := options.StalenessProbeInterval; d != 0 {
		report(cache.SetStalenessProbeInterval(informer, d))
	}
	if d := options.MaxRetryAfter; d != 0 {
		report(cache.SetMaxRetryAfter(informer, d))
	}
	if options.RelistPageByPage {
		report(cache.SetRelistPageByPage(informer, true))
	}
	if options.SnapshotFile != "" {
		report(cache.SetSnapshotFile(informer, options.SnapshotFile))
		report(cache.SetSnapshotScope(informer, options.SnapshotScope))
		if err := cache.SetSnapshotProtection(informer, options.SnapshotProtection); err != nil {
			utilruntime.HandleError(err)
			_ = cache.SetSnapshotFile(informer, "")
		}
	}
}
