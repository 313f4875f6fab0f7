package apiextensions

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/fieldtest"
)

func TestVersionHelpers(t *testing.T) {
	crd := cronTab(t)
	v2 := secondVersion(crd)
	v2.Served = false

	if v, err := StorageVersion(crd); err != nil || v != "v1" {
		t.Errorf("StorageVersion = %q, %v; want v1", v, err)
	}
	if !HasServedVersion(crd, "v1") || HasServedVersion(crd, "v2") || HasServedVersion(crd, "v3") {
		t.Errorf("HasServedVersion: v1 %v, v2 %v, v3 %v; want true, false, false",
			HasServedVersion(crd, "v1"), HasServedVersion(crd, "v2"), HasServedVersion(crd, "v3"))
	}
	if v := GetVersion(crd, "v2"); v != &crd.Spec.Versions[1] {
		t.Errorf("GetVersion(v2) = %p, want %p", v, &crd.Spec.Versions[1])
	}
	if v := GetVersion(crd, "v3"); v != nil {
		t.Errorf("GetVersion(v3) = %+v, want nil", v)
	}

	crd.Spec.Versions[0].Storage = false
	if v, err := StorageVersion(crd); err == nil {
		t.Errorf("StorageVersion without one = %q, want an error", v)
	}
}

func TestConditions(t *testing.T) {
	crd := cronTab(t)
	if FindCondition(crd, apiextv1.Established) != nil || IsEstablished(crd) || IsTerminating(crd) {
		t.Fatalf("a new CRD has conditions: %+v", crd.Status.Conditions)
	}

	SetCondition(crd, apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Established, Status: apiextv1.ConditionFalse, Reason: "Installing"})
	c := FindCondition(crd, apiextv1.Established)
	if c == nil || c.LastTransitionTime.IsZero() || IsEstablished(crd) || !IsConditionFalse(crd, apiextv1.Established) {
		t.Fatalf("after set: %+v", crd.Status.Conditions)
	}

	// Same status: the transition time stays, the rest is overwritten.
	past := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	c.LastTransitionTime = past
	SetCondition(crd, apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Established, Status: apiextv1.ConditionFalse, Reason: "StillInstalling", Message: "m", ObservedGeneration: 2})
	c = FindCondition(crd, apiextv1.Established)
	if !c.LastTransitionTime.Equal(&past) || c.Reason != "StillInstalling" || c.Message != "m" || c.ObservedGeneration != 2 {
		t.Errorf("same status: %+v", c)
	}

	// New status: a new transition time.
	SetCondition(crd, apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Established, Status: apiextv1.ConditionTrue, Reason: "InitialNamesAccepted"})
	c = FindCondition(crd, apiextv1.Established)
	if c.LastTransitionTime.Equal(&past) || !IsEstablished(crd) {
		t.Errorf("new status: %+v", c)
	}

	SetCondition(crd, apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Terminating, Status: apiextv1.ConditionTrue})
	if !IsTerminating(crd) || len(crd.Status.Conditions) != 2 {
		t.Errorf("terminating: %+v", crd.Status.Conditions)
	}
	RemoveCondition(crd, apiextv1.Established)
	if IsEstablished(crd) || !IsTerminating(crd) || len(crd.Status.Conditions) != 1 {
		t.Errorf("after remove: %+v", crd.Status.Conditions)
	}
	RemoveCondition(crd, apiextv1.Terminating)
	if crd.Status.Conditions == nil || len(crd.Status.Conditions) != 0 {
		t.Errorf("after removing all: %#v, want an empty list", crd.Status.Conditions)
	}

	a := &apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Established, Status: apiextv1.ConditionTrue, Reason: "r", LastTransitionTime: past}
	b := &apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Established, Status: apiextv1.ConditionTrue, Reason: "r"}
	if !IsConditionEquivalent(a, b) || !IsConditionEquivalent(nil, nil) || IsConditionEquivalent(a, nil) {
		t.Error("IsConditionEquivalent")
	}
}

func TestAPIApprovalState(t *testing.T) {
	tests := []struct {
		value string
		want  APIApprovalState
	}{
		{"", APIApprovalMissing},
		{"unapproved", APIApprovalBypassed},
		{"unapproved, experimental", APIApprovalBypassed},
		{"https://github.com/kubernetes/enhancements/pull/1111", APIApproved},
		{"approved", APIApprovalInvalid},
		{"github.com/kubernetes/enhancements/pull/1111", APIApprovalInvalid},
	}
	for _, tc := range tests {
		if got, _ := GetAPIApprovalState(map[string]string{apiextv1.KubeAPIApprovedAnnotation: tc.value}); got != tc.want {
			t.Errorf("%q: state %v, want %v", tc.value, got, tc.want)
		}
	}
	for group, want := range map[string]bool{
		"k8s.io": true, "x.k8s.io": true, "kubernetes.io": true, "a.b.kubernetes.io": true,
		"notk8s.io": false, "k8s.io.example.com": false, "example.com": false,
	} {
		if got := IsProtectedCommunityGroup(group); got != want {
			t.Errorf("IsProtectedCommunityGroup(%q) = %v", group, got)
		}
	}
}

// selfSigned returns a PEM certificate.
func selfSigned(t testing.TB) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "conversion-ca"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestCABundle(t *testing.T) {
	p := field.NewPath("caBundle")
	fieldtest.Check(t, ValidateCABundle(p, selfSigned(t)))
	notCert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")})
	fieldtest.Check(t, ValidateCABundle(p, notCert), fieldtest.Invalid("caBundle"))
	fieldtest.Check(t, ValidateCABundle(p, []byte("junk")), fieldtest.Invalid("caBundle"))

	// Once established, a valid caBundle passes an update.
	old := stored(t)
	established(old)
	crd := old.DeepCopy()
	crd.Spec.Conversion = webhook(&apiextv1.WebhookClientConfig{URL: ptr.To("https://conv.example.com"), CABundle: selfSigned(t)}, "v1")
	fieldtest.Check(t, update(crd, old))
}

func TestWebhookService(t *testing.T) {
	p := field.NewPath("service")
	tests := []struct {
		path string
		want []fieldtest.Want
	}{
		{"", nil},
		{"/", nil},
		{"/convert", nil},
		{"/convert/v1/", nil},
		{"//", []fieldtest.Want{fieldtest.Invalid("service.path")}},
		{"/a//b", []fieldtest.Want{fieldtest.Invalid("service.path")}},
		{"convert", []fieldtest.Want{fieldtest.Invalid("service.path")}},
		{"/Convert", []fieldtest.Want{fieldtest.Invalid("service.path")}},
	}
	for _, tc := range tests {
		fieldtest.Check(t, ValidateWebhookService(p, "ns", "svc", &tc.path, 443), tc.want...)
	}
	fieldtest.Check(t, ValidateWebhookService(p, "ns", "svc", nil, 0), fieldtest.Invalid("service.port"))
}
