package apiserveridentity

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The expected names were computed outside Go from kube's definition: the
// SHA-256 of the uint16-length-prefixed host name and component, its first
// 16 bytes in lowercase unpadded base32.
func TestLeaseName(t *testing.T) {
	for _, tc := range []struct{ host, want string }{
		{"node-1", "apiserver-lgabes5ywnaqeagh5dny4zlzs4"},
		{"control-plane.example.com", "apiserver-rr3hfgffmb4kko4gycihudxqlm"},
	} {
		if got := LeaseName(tc.host, Component); got != tc.want {
			t.Errorf("LeaseName(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
	if LeaseName("a", "bkube-apiserver") == LeaseName("ab", "kube-apiserver") {
		t.Error("the length prefixes do not separate host and component")
	}
}

func TestExpired(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	secs := func(s int32) *int32 { return &s }
	at := func(d time.Duration) *metav1.MicroTime { return &metav1.MicroTime{Time: now.Add(d)} }
	for _, tc := range []struct {
		name    string
		spec    coordinationv1.LeaseSpec
		expired bool
	}{
		{"renewed within its duration", coordinationv1.LeaseSpec{RenewTime: at(-time.Hour + time.Second), LeaseDurationSeconds: secs(3600)}, false},
		{"past its duration", coordinationv1.LeaseSpec{RenewTime: at(-time.Hour - time.Second), LeaseDurationSeconds: secs(3600)}, true},
		{"no renew time", coordinationv1.LeaseSpec{LeaseDurationSeconds: secs(3600)}, true},
		{"no duration", coordinationv1.LeaseSpec{RenewTime: at(0)}, true},
	} {
		l := &coordinationv1.Lease{Spec: tc.spec}
		if got := Expired(l, now); got != tc.expired {
			t.Errorf("%s: Expired = %v, want %v", tc.name, got, tc.expired)
		}
	}
}
