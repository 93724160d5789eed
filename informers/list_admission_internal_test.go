package informers

import (
	"testing"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/kinformer/kinformer/listadmission"
)

// TestFactoryHasItsOwnListAdmission: without WithListAdmission each factory
// makes its own (no state shared between factories behind the user's back);
// WithListAdmission(nil) turns it off, and one passed is used as is.
func TestFactoryHasItsOwnListAdmission(t *testing.T) {
	client := fake.NewSimpleClientset() //nolint:staticcheck // enough here
	first := NewSharedInformerFactory(client, 0).(*sharedInformerFactory)
	second := NewSharedInformerFactory(client, 0).(*sharedInformerFactory)
	if first.options.ListAdmission == nil || first.options.ListAdmission == second.options.ListAdmission {
		t.Fatalf("default list admissions %p and %p: want one of its own per factory", first.options.ListAdmission, second.options.ListAdmission)
	}
	if s := first.options.ListAdmission.Stats(); s.Limit != listadmission.DefaultLimit {
		t.Fatalf("default limit %d, want %d", s.Limit, listadmission.DefaultLimit)
	}
	off := NewSharedInformerFactoryWithOptions(client, 0, WithListAdmission(nil)).(*sharedInformerFactory)
	if off.options.ListAdmission != nil {
		t.Fatal("WithListAdmission(nil) left an admission")
	}
	shared := listadmission.New(listadmission.Options{})
	withShared := NewSharedInformerFactoryWithOptions(client, 0, WithListAdmission(shared)).(*sharedInformerFactory)
	if withShared.options.ListAdmission != shared {
		t.Fatal("WithListAdmission's admission not used")
	}
}
