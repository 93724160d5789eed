package cache

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// ObjectName is the structured form of a store key: the namespace (empty for
// cluster-scoped objects) and the name of an API object. The zero value is a
// valid, empty name. ObjectName is a plain value and safe to copy and share.
type ObjectName struct {
	Namespace string
	Name      string
}

// NewObjectName returns the ObjectName with the given namespace and name.
// It does not validate either part.
func NewObjectName(namespace, name string) ObjectName {
	return ObjectName{Namespace: namespace, Name: name}
}

// Parts returns the namespace and the name, in that order.
func (objName ObjectName) Parts() (namespace, name string) {
	return objName.Namespace, objName.Name
}

// String returns the store key for the name: "namespace/name" when the
// namespace is set and just "name" when it is empty. This is the same string
// MetaNamespaceKeyFunc produces for an object with this namespace and name.
func (objName ObjectName) String() string {
	if objName.Namespace == "" {
		return objName.Name
	}
	return objName.Namespace + "/" + objName.Name
}

// AsNamespacedName converts the name to a types.NamespacedName.
func (objName ObjectName) AsNamespacedName() types.NamespacedName {
	return types.NamespacedName{Namespace: objName.Namespace, Name: objName.Name}
}

// ParseObjectName is the inverse of ObjectName.String: it parses a store key
// of the form "namespace/name" or "name".
//
// Difference from client-go: malformed keys are rejected with an error, as
// SplitMetaNamespaceKey does: the empty key, a key with more than one "/",
// and a key with an empty namespace or an empty name around its "/"
// ("/name", "ns/"). client-go accepts the last three and returns empty parts.
func ParseObjectName(str string) (ObjectName, error) {
	ns, name, err := SplitMetaNamespaceKey(str)
	if err != nil {
		return ObjectName{}, err
	}
	return ObjectName{Namespace: ns, Name: name}, nil
}

// NamespacedNameAsObjectName converts a types.NamespacedName to an ObjectName.
func NamespacedNameAsObjectName(nn types.NamespacedName) ObjectName {
	return ObjectName{Namespace: nn.Namespace, Name: nn.Name}
}

// SplitMetaNamespaceKey splits a key made by MetaNamespaceKeyFunc back into
// its namespace and name. A key without "/" is a cluster-scoped name and
// yields an empty namespace.
//
// Difference from client-go: besides keys with more than one "/" (which
// client-go also rejects), the empty key and keys with an empty part around
// the "/" ("/name", "ns/") return an error instead of empty strings, since
// no object produces such a key and a caller would otherwise act on an
// empty name.
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	i := strings.IndexByte(key, '/')
	if i < 0 {
		if key == "" {
			return "", "", fmt.Errorf("invalid object key %q: empty key", key)
		}
		return "", key, nil
	}
	namespace, name = key[:i], key[i+1:]
	switch {
	case strings.IndexByte(name, '/') >= 0:
		return "", "", fmt.Errorf("invalid object key %q: more than one \"/\"", key)
	case namespace == "":
		return "", "", fmt.Errorf("invalid object key %q: empty namespace before \"/\"", key)
	case name == "":
		return "", "", fmt.Errorf("invalid object key %q: empty name after \"/\"", key)
	}
	return namespace, name, nil
}
