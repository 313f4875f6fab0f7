package plugins

import (
	"fmt"
	"slices"
	"testing"
)

func TestSelect(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		enable, disable, control []string
		want, explicit           []string
		without                  []string
	}{
		{name: "defaults", want: DefaultEnabled()},
		{name: "enable in any order runs in kube's", enable: []string{"AlwaysPullImages", "NodeRestriction"},
			explicit: []string{"NodeRestriction", "AlwaysPullImages"}},
		{name: "disable", disable: []string{"ServiceAccount", "ResourceQuota"}, without: []string{"ServiceAccount", "ResourceQuota"}},
		{name: "admission-control is the whole set", control: []string{"ResourceQuota", "AlwaysAdmit", "NamespaceLifecycle"},
			want: []string{"AlwaysAdmit", "NamespaceLifecycle", "ResourceQuota"}, explicit: []string{"AlwaysAdmit", "NamespaceLifecycle", "ResourceQuota"}},
		{name: "empty admission-control runs nothing", control: []string{}, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Select(tc.enable, tc.disable, tc.control)
			want := tc.want
			if want == nil && tc.control == nil {
				want = DefaultEnabled()
				for _, n := range tc.explicit {
					want = append(want, n)
				}
				want = slices.DeleteFunc(want, func(n string) bool { return slices.Contains(tc.without, n) })
				slices.SortFunc(want, func(a, b string) int { return slices.Index(Ordered, a) - slices.Index(Ordered, b) })
			}
			if !slices.Equal(s.Enabled, want) {
				t.Errorf("enabled %v, want %v", s.Enabled, want)
			}
			for _, n := range tc.explicit {
				if !slices.Contains(s.Explicit, n) {
					t.Errorf("%s not explicit: %v", n, s.Explicit)
				}
			}
		})
	}
}

func TestDefaultEnabled(t *testing.T) {
	want := []string{"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "TaintNodesByCondition", "PodSecurity", "Priority",
		"DefaultTolerationSeconds", "DefaultStorageClass", "StorageObjectInUseProtection", "PodGroupProtection", "PersistentVolumeClaimResize",
		"RuntimeClass", "CertificateApproval", "CertificateSigning", "ClusterTrustBundleAttest", "CertificateSubjectRestriction",
		"DefaultIngressClass", "PodTopologyLabels", "NodeDeclaredFeatureValidator", "PodResizeValidator", "MutatingAdmissionPolicy",
		"MutatingAdmissionWebhook", "ValidatingAdmissionPolicy", "ValidatingAdmissionWebhook", "ResourceQuota"}
	if got := DefaultEnabled(); !slices.Equal(got, want) {
		t.Errorf("DefaultEnabled() = %v\nwant %v", got, want)
	}
}

func TestValidateNames(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		enable, disable, control []string
		want                     []string
	}{
		{name: "fine", enable: []string{"AlwaysPullImages"}, disable: []string{"ServiceAccount"}},
		{name: "unknown enabled", enable: []string{"Nope"}, want: []string{`enable-admission-plugins plugin "Nope" is unknown`}},
		{name: "unknown disabled", disable: []string{"nope"}, want: []string{`disable-admission-plugins plugin "nope" is unknown`}},
		{name: "unknown in admission-control", control: []string{"X"}, want: []string{`admission-control plugin "X" is unknown`}},
		{name: "exclusive", control: []string{"AlwaysAdmit"}, enable: []string{"AlwaysDeny"},
			want: []string{"admission-control and enable-admission-plugins/disable-admission-plugins flags are mutually exclusive"}},
		{name: "overlap", enable: []string{"ServiceAccount", "AlwaysDeny"}, disable: []string{"AlwaysDeny", "ServiceAccount"},
			want: []string{"[AlwaysDeny ServiceAccount] in enable-admission-plugins and disable-admission-plugins overlapped"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateNames(tc.enable, tc.disable, tc.control)
			var got []string
			for _, err := range errs {
				got = append(got, err.Error())
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
