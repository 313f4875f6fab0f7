package certificates

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/authn"
)

var ctx = context.Background()

// testPEMs returns a PEM certificate request and a PEM certificate.
func testPEMs(t *testing.T) (request, cert []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER})
}

func newCSR(request []byte) *certificatesv1.CertificateSigningRequest {
	return &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "alice"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: request, SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}},
	}
}

func errStrings(errs field.ErrorList) []string {
	out := []string{}
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	slices.Sort(out)
	return out
}

func condition(t certificatesv1.RequestConditionType) certificatesv1.CertificateSigningRequestCondition {
	return certificatesv1.CertificateSigningRequestCondition{Type: t, Status: corev1.ConditionTrue}
}

func TestValidateCSR(t *testing.T) {
	request, _ := testPEMs(t)
	tests := []struct {
		name   string
		mutate func(*certificatesv1.CertificateSigningRequest)
		want   []string
	}{
		{"valid", func(*certificatesv1.CertificateSigningRequest) {}, []string{}},
		{"not pem", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Request = []byte("hello") }, []string{"FieldValueInvalid spec.request"}},
		{"no signer", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "" }, []string{"FieldValueRequired spec.signerName"}},
		{"unqualified signer", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "signer" },
			[]string{"FieldValueInvalid spec.signerName"}},
		{"one-label domain", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example/signer" },
			[]string{"FieldValueInvalid spec.signerName"}},
		{"bad path", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = "example.com/Signer_X" },
			[]string{"FieldValueInvalid spec.signerName"}},
		{"legacy signer", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.SignerName = legacyUnknownSignerName },
			[]string{"FieldValueInvalid spec.signerName"}},
		{"usages", func(c *certificatesv1.CertificateSigningRequest) {
			c.Spec.Usages = []certificatesv1.KeyUsage{"fly", certificatesv1.UsageClientAuth, certificatesv1.UsageClientAuth}
		}, []string{"FieldValueDuplicate spec.usages[2]", "FieldValueNotSupported spec.usages[0]"}},
		{"no usages", func(c *certificatesv1.CertificateSigningRequest) { c.Spec.Usages = nil }, []string{"FieldValueRequired spec.usages"}},
		{"short duration", func(c *certificatesv1.CertificateSigningRequest) { d := int32(599); c.Spec.ExpirationSeconds = &d },
			[]string{"FieldValueInvalid spec.expirationSeconds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr := newCSR(request)
			tt.mutate(csr)
			if got := errStrings(CSRStrategy{}.Validate(ctx, csr)); !slices.Equal(got, tt.want) {
				t.Errorf("errors = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCSRCreateTakesTheUser(t *testing.T) {
	request, cert := testPEMs(t)
	csr := newCSR(request)
	csr.Spec.Username, csr.Spec.Groups = "mallory", []string{"system:masters"}
	csr.Status.Certificate = cert
	u := &authn.User{Name: "alice", UID: "42", Groups: []string{"dev"}, Extra: map[string][]string{"k": {"v"}}}
	CSRStrategy{}.PrepareForCreate(authn.WithUser(ctx, u), csr)
	s := csr.Spec
	if s.Username != "alice" || s.UID != "42" || !slices.Equal(s.Groups, []string{"dev"}) || s.Extra["k"][0] != "v" || csr.Status.Certificate != nil {
		t.Errorf("after create: spec %+v status %+v", s, csr.Status)
	}
	anon := newCSR(request)
	anon.Spec.Username = "mallory"
	CSRStrategy{}.PrepareForCreate(ctx, anon)
	if anon.Spec.Username != "" {
		t.Errorf("username without a user = %q", anon.Spec.Username)
	}
}

func TestCSRSubresources(t *testing.T) {
	request, cert := testPEMs(t)
	old := newCSR(request)
	CSRStrategy{}.PrepareForCreate(ctx, old)
	tests := []struct {
		name     string
		approval bool
		mutate   func(*certificatesv1.CertificateSigningRequest)
		want     []string
	}{
		{"approve", true, func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = append(c.Status.Conditions, condition(certificatesv1.CertificateApproved))
		}, []string{}},
		{"approve and deny", true, func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = append(c.Status.Conditions, condition(certificatesv1.CertificateApproved), condition(certificatesv1.CertificateDenied))
		}, []string{"FieldValueInvalid status.conditions"}},
		{"approve through status", false, func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = append(c.Status.Conditions, condition(certificatesv1.CertificateApproved))
		}, []string{"FieldValueForbidden status.conditions"}},
		{"approved false", true, func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
				Type: certificatesv1.CertificateApproved, Status: corev1.ConditionFalse})
		}, []string{"FieldValueNotSupported status.conditions[0].status"}},
		{"issue through status", false, func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = cert }, []string{}},
		{"bad certificate", false, func(c *certificatesv1.CertificateSigningRequest) { c.Status.Certificate = []byte("x") },
			[]string{"FieldValueInvalid status.certificate"}},
		{"other condition through status", false, func(c *certificatesv1.CertificateSigningRequest) {
			c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: "Signing", Status: "Unknown"})
		}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := old.DeepCopy()
			tt.mutate(c)
			var errs field.ErrorList
			if tt.approval {
				CSRApprovalStrategy{}.PrepareForUpdate(ctx, c, old)
				errs = CSRApprovalStrategy{}.ValidateUpdate(ctx, c, old)
			} else {
				CSRStatusStrategy{}.PrepareForUpdate(ctx, c, old)
				errs = CSRStatusStrategy{}.ValidateUpdate(ctx, c, old)
			}
			if got := errStrings(errs); !slices.Equal(got, tt.want) {
				t.Errorf("errors = %v, want %v", got, tt.want)
			}
			for _, cond := range c.Status.Conditions {
				if cond.LastUpdateTime.IsZero() || cond.LastTransitionTime.IsZero() {
					t.Errorf("condition %s not stamped", cond.Type)
				}
			}
		})
	}
}

func TestCSRSubresourcesKeepWhatTheyDoNotOwn(t *testing.T) {
	request, cert := testPEMs(t)
	old := newCSR(request)
	CSRStrategy{}.PrepareForCreate(ctx, old)
	old.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{condition(certificatesv1.CertificateApproved)}

	c := old.DeepCopy()
	c.Status.Certificate = cert
	c.Spec.SignerName = "example.com/other"
	CSRApprovalStrategy{}.PrepareForUpdate(ctx, c, old)
	if c.Status.Certificate != nil || c.Spec.SignerName != old.Spec.SignerName {
		t.Errorf("approval changed the certificate or spec: %+v", c)
	}

	c = old.DeepCopy()
	c.Status.Conditions[0].Message = "changed by a signer"
	CSRStatusStrategy{}.PrepareForUpdate(ctx, c, old)
	if c.Status.Conditions[0].Message != "" {
		t.Errorf("status update changed the approval: %+v", c.Status.Conditions[0])
	}
	c.Status.Conditions = nil
	if got := errStrings(CSRStatusStrategy{}.ValidateUpdate(ctx, c, old)); !slices.Equal(got, []string{"FieldValueForbidden status.conditions"}) {
		t.Errorf("removing the approval: %v", got)
	}

	c = old.DeepCopy()
	c.Labels = map[string]string{"a": "b"}
	c.Status.Conditions = nil
	CSRStrategy{}.PrepareForUpdate(ctx, c, old)
	if len(c.Status.Conditions) != 1 {
		t.Errorf("main update changed the status: %+v", c.Status)
	}
	if got := (CSRStrategy{}).Fields(c)["spec.signerName"]; got != certificatesv1.KubeAPIServerClientSignerName {
		t.Errorf("spec.signerName field = %q", got)
	}
}
