package cache

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SnapshotScopeFor returns the snapshot scope (see
// SharedIndexInformerOptions.SnapshotScope) of an informer whose
// ListerWatcher lists namespace ("" for all namespaces) and passes its
// requests through tweak (nil for none): the namespace and the label and
// field selectors tweak sets on empty ListOptions. It returns "" when
// neither restricts anything, which is the scope of an informer built
// without one. Factories call it with their WithNamespace and
// WithTweakListOptions values; call it the same way for an informer built
// on a filtered ListWatch. It is safe for concurrent use when tweak is.
// kinformer extension, not in client-go.
func SnapshotScopeFor(namespace string, tweak func(*metav1.ListOptions)) string {
	var opts metav1.ListOptions
	if tweak != nil {
		tweak(&opts)
	}
	if namespace == "" && opts.LabelSelector == "" && opts.FieldSelector == "" {
		return ""
	}
	return "namespace=" + strconv.Quote(namespace) +
		" labelSelector=" + strconv.Quote(opts.LabelSelector) +
		" fieldSelector=" + strconv.Quote(opts.FieldSelector)
}

// describeSnapshotScope renders a scope for an error message. A server
// address in it loses any userinfo (an older version saved addresses with
// their credentials).
func describeSnapshotScope(scope string) string {
	if scope == "" {
		return "all objects of the type (no namespace, no selectors)"
	}
	return snapshotScopeServer.ReplaceAllStringFunc(scope, func(field string) string {
		quoted := strings.TrimPrefix(field, "server=")
		addr, err := strconv.Unquote(quoted)
		if err != nil {
			return field
		}
		u, err := url.Parse(addr)
		if err != nil || u.User == nil {
			return field
		}
		u.User = nil
		return "server=" + strconv.Quote(u.String())
	})
}

// snapshotScopeServer matches the server field of a scope: server= and a
// Go-quoted string.
var snapshotScopeServer = regexp.MustCompile(`server="(?:[^"\\]|\\.)*"`)
