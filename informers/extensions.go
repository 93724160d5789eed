package informers

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kinformer/kinformer/cache"
	"github.com/kinformer/kinformer/listadmission"
)

// WithListAdmission makes the factory's informers admit their initial lists
// and relists through admission (see package listadmission): at most
// admission's limit of them list at once, the highest priority first (see
// WithListAdmissionPriority), and a 429 slows them all down. Pass the same
// admission to several factories (typed, dynamic, metadata) to limit the
// lists of a whole process. nil turns admission off: every informer lists
// at once, as in client-go. Without this option a factory has its own
// listadmission.New(listadmission.Options{}) (10 lists at once; a
// handful of informers never waits). Only when lists are requested changes,
// not what listers and handlers observe. kinformer extension, not in
// client-go.
func WithListAdmission(admission *listadmission.Admission) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.ListAdmission, f.options.ListAdmissionSet = admission, true
		return f
	}
}

// WithListAdmissionPriority gives the informers of the types of examples
// (such as &v1.Pod{}) priority in the factory's list admission (see
// WithListAdmission): waiting informers are admitted the highest priority
// first, and in the order they asked among equals. The default is 0; a
// negative priority lets the others go first. nil examples are ignored.
// kinformer extension, not in client-go.
func WithListAdmissionPriority(priority int, examples ...runtime.Object) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.Prioritize(priority, typesOf(examples)...)
		return f
	}
}

// WithRelistPageByPage makes every informer the factory builds apply its
// relists page by page, as the pages arrive, instead of atomically once
// complete as client-go does (see
// cache.SharedIndexInformerOptions.RelistPageByPage): a relist then never
// holds the old cache and the changed objects together, at the price of
// paged requests served from etcd, of partial states visible to listers
// while it runs, and of its deletions reaching handlers after its updates
// and adds. kinformer extension, not in client-go.
func WithRelistPageByPage() SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.Informer.RelistPageByPage = true
		return f
	}
}

// WithWatchIdleTimeout sets the watch liveness deadline of every informer the
// factory builds (see cache.SharedIndexInformerOptions.WatchIdleTimeout): a
// watch that has received a periodic bookmark and then nothing for d is
// reopened from the last resourceVersion. Zero keeps the default
// (cache.DefaultWatchIdleTimeout, 2 minutes), a negative value turns
// liveness off. A d below the server's bookmark interval (about a minute)
// restarts healthy idle watches after each bookmark. kinformer extension,
// not in client-go.
func WithWatchIdleTimeout(d time.Duration) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.Informer.WatchIdleTimeout = d
		return f
	}
}

// WithStalenessProbeInterval sets how long every informer the factory
// builds goes without the server confirming its cache as current (a
// bookmark, a list) before it asks with a LIST of one object (see
// cache.SharedIndexInformerOptions.StalenessProbeInterval and
// cache.InformerStatus.Confirmed). Zero keeps the default
// (cache.DefaultStalenessProbeInterval, 2 minutes, above the watch cache's
// bookmark interval), a negative value turns probing off. kinformer
// extension, not in client-go.
func WithStalenessProbeInterval(d time.Duration) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.Informer.StalenessProbeInterval = d
		return f
	}
}

// WithMaxRetryAfter sets the longest Retry-After the Reflector of every
// informer the factory builds honours before it retries a failed list or
// watch (see cache.SharedIndexInformerOptions.MaxRetryAfter). Zero keeps
// the default (listadmission.DefaultMaxRetryAfter, 60 s), a negative value
// sets no maximum. The pause of the factory's list admission has its own
// maximum (listadmission.Options.MaxRetryAfter). kinformer extension, not
// in client-go.
func WithMaxRetryAfter(d time.Duration) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.Informer.MaxRetryAfter = d
		return f
	}
}

// WithShard makes every informer the factory builds keep one shard of its
// resource (see cache.SharedIndexInformerOptions.Shard): every LIST and
// WATCH request carries the shard selector, and the informers keep only
// the objects whose hash falls in shard's ranges, whatever the server
// sends (see cache.Shard for the trade of each key: by uid spreads objects
// evenly but puts an owner and its children in different shards; by
// namespace keeps them together but puts every cluster-scoped object in one
// range; and for the degraded mode of a server that ignores the selector,
// reported as a *cache.ShardSelectorIgnoredError). The zero cache.Shard
// keeps the whole resource, as without the option. An invalid shard (see
// cache.Shard.Validate) makes every informer's lists fail with an error
// wrapping cache.ErrInvalidShard instead of listing unsharded. The ranges
// are copied. kinformer extension, not in client-go.
func WithShard(shard cache.Shard) SharedInformerOption {
	ranges := slices.Clone(shard.Ranges)
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.Informer.Shard = cache.Shard{Key: shard.Key, Ranges: slices.Clone(ranges)}
		return f
	}
}

// WithSnapshotDir makes every informer the factory builds warm-restartable
// (see cache.SharedIndexInformerOptions.SnapshotFile): on stop it writes its
// cache to a file in dir named after its object type (for example
// "k8s.io_api_core_v1.Pod.snap"), and on start it resumes from that file
// instead of listing. The directory is created owner-only (0700) when
// needed; Secrets and the types marked sensitive are written only with
// WithSnapshotEncryptionKey (see cache.SnapshotProtection). Each file is
// tied to the factory's scope (cache.SnapshotScopeFor of its WithNamespace
// and of the label and field selectors its WithTweakListOptions sets, and,
// when the client is a *kubernetes.Clientset, the API server's address): a
// factory with another namespace, other selectors or another server rejects
// the file with a *cache.SnapshotError and lists as usual, so sharing a directory between
// configurations costs lists but never loads foreign objects (give each
// configuration its own directory to keep both warm). Only the factory's
// own informers (Core().V1().Pods() and the like, and ForResource) are
// snapshotted: an informer InformerFor builds with the caller's own
// NewInformerFunc may select other objects than the factory's scope says,
// which the factory cannot know, so it gets no snapshot file and always
// lists. Only one running factory may use a directory at a time. kinformer
// extension, not in client-go.
func WithSnapshotDir(dir string) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.SnapshotDir = dir
		return f
	}
}

// WithSnapshotEncryptionKey makes the factory's snapshot files (see
// WithSnapshotDir) encrypted and authenticated with key, which must be
// cache.SnapshotKeySize (32) bytes long (another size is reported through
// utilruntime.HandleError when an informer is built, and that informer's
// snapshot stays off), and lets the informers of sensitive types (Secrets,
// and those of WithSensitiveResources) write theirs, which they never do
// without a key. Files written without the key, or with another, are
// rejected and the informers list as usual. The key is copied. See
// cache.SnapshotProtection. kinformer extension, not in client-go.
func WithSnapshotEncryptionKey(key []byte) SharedInformerOption {
	key = bytes.Clone(key)
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.SnapshotKey = key
		return f
	}
}

// WithSensitiveResources marks the objects of the types of examples (such
// as &v1.ConfigMap{}) as sensitive, as Secrets always are: their informers
// write no snapshot file (see WithSnapshotDir) unless
// WithSnapshotEncryptionKey gives a key, and delete one they find. nil
// examples are ignored. See cache.SnapshotProtection. kinformer extension,
// not in client-go.
func WithSensitiveResources(examples ...runtime.Object) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.MarkSensitive(typesOf(examples)...)
		return f
	}
}

// WithAPIMachineryDecoding makes the factory's informers for the types of
// examples (such as &corev1.Pod{}) decode the server's protobuf answers
// with apimachinery's decoder (each type's generated Unmarshal, behind
// client-go's protobuf serializer), as client-go's informers do, each
// LIST's answer read whole before it is decoded.
//
// By default the factory's informers of built-in types decode protobuf with
// kinformer's generated decoders, which are faster and allocate less, and
// give objects identical to apimachinery's (deeply equal, nil and empty
// slices and maps alike), with the same errors: differential tests and
// fuzzing check every type, and the integration tests check every object
// they read from a real API server. They decode a LIST's protobuf answer
// item by item as it arrives, never holding the body whole (the REST
// client is handed an envelope without items in its place, so its
// rest_client_response_size_bytes metric records that envelope's size;
// docs/memory.md has the details). This option exists to rule kinformer's
// decoders out when diagnosing a problem; it changes no object listers and
// handlers see. JSON answers (from servers or proxies that do not speak
// protobuf) are decoded by apimachinery either way, and so are the answers
// to informers built over a client that is not a *kubernetes.Clientset
// (client-go's fake clientsets). The informers of the dynamic and metadata
// factories decode through the dynamic and metadata clients, never with
// kinformer's generated decoders, and those factories have no such option.
// nil examples are ignored. kinformer extension, not in client-go.
func WithAPIMachineryDecoding(examples ...runtime.Object) SharedInformerOption {
	return func(f *sharedInformerFactory) *sharedInformerFactory {
		f.options.DecodeWithAPIMachinery(typesOf(examples)...)
		return f
	}
}

// typesOf returns the Go types of the non-nil examples, the keys of the
// factory's informers.
func typesOf(examples []runtime.Object) []reflect.Type {
	types := make([]reflect.Type, 0, len(examples))
	for _, obj := range examples {
		if obj != nil {
			types = append(types, reflect.TypeOf(obj))
		}
	}
	return types
}

// SnapshotFileName returns the name of the snapshot file WithSnapshotDir
// uses for the informers of objects of type t (a pointer to an API type).
func SnapshotFileName(t reflect.Type) string {
	if t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "nil.snap"
	}
	name := t.Name()
	if pkg := t.PkgPath(); pkg != "" {
		name = strings.NewReplacer("/", "_", "\\", "_").Replace(pkg) + "." + name
	}
	return name + ".snap"
}

// clientServer returns the scheme, host and path prefix of the API server a
// *kubernetes.Clientset talks to, without any userinfo, or "" for any other
// client.
func clientServer(client kubernetes.Interface) string {
	cs, ok := client.(*kubernetes.Clientset)
	if !ok || cs == nil {
		return ""
	}
	rc, ok := cs.CoreV1().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil || rc.Client == nil {
		return ""
	}
	u := rc.Get().URL()
	// Credentials in the address (https://user:password@host) identify no
	// cluster and must not reach the snapshot header, errors, logs or
	// status bodies.
	u.User = nil
	u.RawQuery, u.Fragment = "", ""
	// The core group's requests go to <server>/api/v1; what precedes it is
	// the server, with the prefix of a proxy in front of it if any.
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/api/v1")
	u.RawPath = ""
	return u.String()
}
