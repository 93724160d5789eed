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

// ParseObjectName is the inverse of ObjectName.String: it splits a store key
// with SplitMetaNamespaceKey and returns its parts as an ObjectName. It accepts
// and rejects exactly the keys SplitMetaNamespaceKey does; on error the
// ObjectName is empty.
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
// yields an empty namespace (the empty key yields two empty parts); a key with
// one "/" yields the text before it as the namespace and the text after it as
// the name, either of which may be empty ("/name", "ns/", "/"). A key with
// more than one "/" is rejected with an error naming the key, and empty
// parts. This is client-go's contract: callers that need non-empty parts
// check them.
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	i := strings.IndexByte(key, '/')
	if i < 0 {
		return "", key, nil
	}
	namespace, name = key[:i], key[i+1:]
	if strings.IndexByte(name, '/') >= 0 {
		return "", "", fmt.Errorf("unexpected key format: %q", key)
	}
	return namespace, name, nil
}
