// Package podselect holds what the hand-written lister expansions share:
// finding the controllers (DaemonSets, ReplicaSets, Jobs, …) whose label
// selector selects a given pod or ControllerRevision.
package podselect

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// ErrNilObject is returned by the expansion methods for a nil pod or
// ControllerRevision.
var ErrNilObject = errors.New("listers: nil object passed to a selector lookup")

// SelectorFunc returns the selector of a candidate and whether it may select
// anything at all; candidates for which it returns false are skipped.
type SelectorFunc[T any] func(T) (labels.Selector, bool)

// Matching returns the candidates that live in namespace and whose selector
// matches set, in the order given; nil when none does.
func Matching[T metav1.Object](candidates []T, namespace string, set labels.Set, selectorOf SelectorFunc[T]) []T {
	var out []T
	for _, c := range candidates {
		if c.GetNamespace() != namespace {
			continue
		}
		sel, ok := selectorOf(c)
		if ok && sel.Matches(set) {
			out = append(out, c)
		}
	}
	return out
}

// NonEmpty converts a label selector for Matching: an invalid selector and
// one that selects everything (empty) both select nothing, and nil selects
// nothing.
func NonEmpty(s *metav1.LabelSelector) (labels.Selector, bool) {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil || sel.Empty() {
		return nil, false
	}
	return sel, true
}

// AllowEmpty converts a label selector for Matching: an invalid selector
// selects nothing, an empty one selects everything, and nil selects nothing.
func AllowEmpty(s *metav1.LabelSelector) (labels.Selector, bool) {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil, false
	}
	return sel, true
}

// NonEmptyMap converts an equality-based selector map (as in a
// ReplicationController's spec) for Matching: a nil or empty map selects
// nothing.
func NonEmptyMap(m map[string]string) (labels.Selector, bool) {
	if len(m) == 0 {
		return nil, false
	}
	return labels.Set(m).AsSelectorPreValidated(), true
}
