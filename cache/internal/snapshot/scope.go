package snapshot

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// ScopeFor returns the scope of an informer that lists namespace ("" for
// all namespaces) with labelSelector and fieldSelector: "" when none of
// them restricts anything, else all three in a stable text form in which
// no value can be taken for another field. A File tied to a scope reads
// only files written under the same scope.
func ScopeFor(namespace, labelSelector, fieldSelector string) string {
	if namespace == "" && labelSelector == "" && fieldSelector == "" {
		return ""
	}
	return "namespace=" + strconv.Quote(namespace) +
		" labelSelector=" + strconv.Quote(labelSelector) +
		" fieldSelector=" + strconv.Quote(fieldSelector)
}

// describeScope renders a scope for an error message. A server address in
// it loses any userinfo (an older version saved addresses with their
// credentials).
func describeScope(scope string) string {
	if scope == "" {
		return "all objects of the type (no namespace, no selectors)"
	}
	return scopeServer.ReplaceAllStringFunc(scope, func(field string) string {
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

// scopeServer matches the server field of a scope: server= and a Go-quoted
// string.
var scopeServer = regexp.MustCompile(`server="(?:[^"\\]|\\.)*"`)
