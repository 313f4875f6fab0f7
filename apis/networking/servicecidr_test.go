package networking

import (
	"context"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func paths(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

func TestServiceCIDRValidation(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		cidrs []string
		want  int
	}{
		{"one", []string{"10.0.0.0/24"}, 0},
		{"dual stack", []string{"10.0.0.0/24", "fd00::/108"}, 0},
		{"none", nil, 1},
		{"three", []string{"10.0.0.0/24", "fd00::/108", "10.1.0.0/24"}, 1},
		{"same family twice", []string{"10.0.0.0/24", "10.1.0.0/24"}, 1},
		{"not a CIDR", []string{"10.0.0.0"}, 1},
		{"host bits set", []string{"10.0.0.1/24"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := &networkingv1.ServiceCIDR{Spec: networkingv1.ServiceCIDRSpec{CIDRs: c.cidrs}}
			if errs := (ServiceCIDRStrategy{}).Validate(ctx, obj); len(errs) != c.want {
				t.Errorf("errors %v, want %d", paths(errs), c.want)
			}
		})
	}
	old := &networkingv1.ServiceCIDR{Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.0.0.0/24"}}}
	for _, u := range []struct {
		cidrs []string
		ok    bool
	}{
		{[]string{"10.0.0.0/24"}, true},
		{[]string{"10.0.0.0/24", "fd00::/108"}, true},
		{[]string{"10.0.1.0/24"}, false},
		{[]string{"10.0.1.0/24", "fd00::/108"}, false},
		{nil, false},
	} {
		obj := &networkingv1.ServiceCIDR{Spec: networkingv1.ServiceCIDRSpec{CIDRs: u.cidrs}}
		if errs := (ServiceCIDRStrategy{}).ValidateUpdate(ctx, obj, old); (len(errs) == 0) != u.ok {
			t.Errorf("update to %v: %v", u.cidrs, paths(errs))
		}
	}
}

func TestServiceCIDRReady(t *testing.T) {
	c := &networkingv1.ServiceCIDR{}
	if !ServiceCIDRReady(c) {
		t.Error("a CIDR without conditions is ready")
	}
	c.Status.Conditions = []metav1.Condition{{Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionFalse}}
	if ServiceCIDRReady(c) {
		t.Error("Ready=False is not ready")
	}
	c.Status.Conditions = nil
	c.DeletionTimestamp = &metav1.Time{}
	if ServiceCIDRReady(c) {
		t.Error("a CIDR being deleted is not ready")
	}
}

func TestIPAddressValidation(t *testing.T) {
	s := IPAddressStrategy{}
	for name, ok := range map[string]bool{"10.0.0.1": true, "fd00::1": true, "10.0.0.01": false, "::ffff:10.0.0.1": false, "host": false} {
		if got := len(s.ValidateName(name, false)) == 0; got != ok {
			t.Errorf("name %q valid = %v, want %v", name, got, ok)
		}
	}
	ref := &networkingv1.ParentReference{Resource: "services", Namespace: "default", Name: "web"}
	ip := &networkingv1.IPAddress{Spec: networkingv1.IPAddressSpec{ParentRef: ref}}
	if errs := s.Validate(context.Background(), ip); len(errs) != 0 {
		t.Errorf("valid: %v", paths(errs))
	}
	if errs := s.Validate(context.Background(), &networkingv1.IPAddress{}); len(errs) != 1 || errs[0].Field != "spec.parentRef" {
		t.Errorf("no parent: %v", paths(errs))
	}
	bad := &networkingv1.IPAddress{Spec: networkingv1.IPAddressSpec{ParentRef: &networkingv1.ParentReference{Group: "Bad_Group", Name: ".."}}}
	if errs := s.Validate(context.Background(), bad); len(errs) != 3 {
		t.Errorf("bad parent: %v", paths(errs))
	}
	moved := ip.DeepCopy()
	moved.Spec.ParentRef.Name = "other"
	if errs := s.ValidateUpdate(context.Background(), moved, ip); len(errs) != 1 || errs[0].Field != "spec.parentRef" {
		t.Errorf("parent changed: %v", paths(errs))
	}
}
