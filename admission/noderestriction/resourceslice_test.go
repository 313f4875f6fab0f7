package noderestriction

import (
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/admission"
)

func TestAdmitResourceSlice(t *testing.T) {
	v1 := func(node *string) *resourcev1.ResourceSlice {
		return &resourcev1.ResourceSlice{Spec: resourcev1.ResourceSliceSpec{NodeName: node}}
	}
	const (
		createErr = `resourceslices.resource.k8s.io "s" is forbidden: can only create ResourceSlice with the same NodeName as the requesting node`
		deleteErr = `resourceslices.resource.k8s.io "s" is forbidden: can only delete ResourceSlice with the same NodeName as the requesting node`
	)
	for _, c := range []struct {
		name string
		op   admission.Operation
		obj  runtime.Object
		want string
	}{
		{"create own", admission.Create, v1(ptr.To("n1")), ""},
		{"create another node's", admission.Create, v1(ptr.To("n2")), createErr},
		{"create of no node", admission.Create, v1(nil), createErr},
		{"create own at v1beta2", admission.Create, &resourcev1beta2.ResourceSlice{Spec: resourcev1beta2.ResourceSliceSpec{NodeName: ptr.To("n1")}}, ""},
		{"create own at v1beta1", admission.Create, &resourcev1beta1.ResourceSlice{Spec: resourcev1beta1.ResourceSliceSpec{NodeName: "n1"}}, ""},
		{"create of no node at v1beta1", admission.Create, &resourcev1beta1.ResourceSlice{}, createErr},
		// The authorizer's graph keeps updates to the node's own slices.
		{"update another node's", admission.Update, v1(ptr.To("n2")), ""},
		{"delete own", admission.Delete, v1(ptr.To("n1")), ""},
		{"delete another node's", admission.Delete, v1(ptr.To("n2")), deleteErr},
		{"delete of no node", admission.Delete, v1(nil), deleteErr},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: c.op, Name: "s", Resource: resourcev1.SchemeGroupVersion.WithResource("resourceslices")}
			if c.op == admission.Delete {
				a.OldObject = c.obj
			} else {
				a.Object = c.obj
			}
			err := admitResourceSlice("n1", a)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
