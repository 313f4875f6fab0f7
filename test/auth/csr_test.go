package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestCertificateSigningRequestAdmission: kube's CertificateApproval,
// CertificateSigning and CertificateSubjectRestriction plugins, met by a
// user whom RBAC lets write the subresources but not act for the signer.
func TestCertificateSigningRequestAdmission(t *testing.T) {
	s := testkit.StartServer(t)
	admin := s.Client(t)
	t.Run("approval needs approve on the signer", func(t *testing.T) { testCSRApproval(t, s, admin) })
	t.Run("signing needs sign on the signer", func(t *testing.T) { testCSRSigning(t, s, admin) })
	t.Run("no system:masters from the apiserver client signer", func(t *testing.T) { testCSRSubjectRestriction(t, admin) })
	t.Run("a signer's trust bundle needs attest on the signer", func(t *testing.T) { testTrustBundleAttest(t, s, admin) })
}

// testTrustBundleAttest: kube's ClusterTrustBundleAttest plugin: a user
// whom RBAC lets create bundles may create one naming a signer only with
// the attest verb on it; a bundle without a signer needs nothing more.
func testTrustBundleAttest(t *testing.T, s *testkit.Server, admin kubernetes.Interface) {
	ida := newUser(t, s, "ida")
	bindCluster(t, admin, "ida-bundles", "ida", rbacv1.PolicyRule{Verbs: []string{"create"},
		APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"clustertrustbundles"}})
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bundle-ca"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	bundle := func(name, signer string) *certificatesv1.ClusterTrustBundle {
		return &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: string(pemCert(der))}}
	}
	create := func(ctx context.Context) error {
		_, err := ida.client.CertificatesV1().ClusterTrustBundles().Create(ctx, bundle("example.com:attested:one", "example.com/attested"), metav1.CreateOptions{})
		return err
	}
	want := `clustertrustbundles.certificates.k8s.io "example.com:attested:one" is forbidden: user not permitted to attest for signerName "example.com/attested"`
	eventually(t, "RBAC lets ida reach admission", func(ctx context.Context) error {
		if err := create(ctx); !apierrors.IsForbidden(err) || err.Error() != want {
			return fmt.Errorf("got %v, want 403 %s", err, want)
		}
		return nil
	})
	if _, err := ida.client.CertificatesV1().ClusterTrustBundles().Create(ctx(t), bundle("no-signer", ""), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a bundle without a signer: %v", err)
	}
	bindCluster(t, admin, "ida-attests", "ida", rbacv1.PolicyRule{Verbs: []string{"attest"},
		APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"signers"}, ResourceNames: []string{"example.com/attested"}})
	eventually(t, "ida attests", create)
}

func testCSRApproval(t *testing.T, s *testkit.Server, admin kubernetes.Interface) {
	gina := newUser(t, s, "gina")
	bindCluster(t, admin, "gina-approves", "gina", rbacv1.PolicyRule{Verbs: []string{"get", "update"},
		APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"certificatesigningrequests/approval"}})
	csr := createCSR(t, admin, "approve-me", "example.com/issuer", "gina")
	approve := func(ctx context.Context) error {
		c := csr.DeepCopy()
		c.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "ok"}}
		_, err := gina.client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, c.Name, c, metav1.UpdateOptions{})
		return err
	}
	want := `certificatesigningrequests.certificates.k8s.io "approve-me" is forbidden: user not permitted to approve requests with signerName "example.com/issuer"`
	eventually(t, "RBAC lets gina reach admission", func(ctx context.Context) error {
		if err := approve(ctx); !apierrors.IsForbidden(err) || err.Error() != want {
			return fmt.Errorf("got %v, want 403 %s", err, want)
		}
		return nil
	})
	// The domain's wildcard is enough, as kube's plugin asks for it too.
	bindCluster(t, admin, "gina-approves-for-example", "gina", rbacv1.PolicyRule{Verbs: []string{"approve"},
		APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"signers"}, ResourceNames: []string{"example.com/*"}})
	eventually(t, "gina approves", approve)
	got, err := admin.CertificatesV1().CertificateSigningRequests().Get(ctx(t), csr.Name, metav1.GetOptions{})
	if err != nil || len(got.Status.Conditions) != 1 || got.Status.Conditions[0].Type != certificatesv1.CertificateApproved {
		t.Errorf("after approval: %+v %v", got.Status, err)
	}
}

func testCSRSigning(t *testing.T, s *testkit.Server, admin kubernetes.Interface) {
	hugo := newUser(t, s, "hugo")
	bindCluster(t, admin, "hugo-signs", "hugo", rbacv1.PolicyRule{Verbs: []string{"get", "update"},
		APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"certificatesigningrequests/status"}})
	csr := createCSR(t, admin, "sign-me", "example.org/signer", "hugo")
	csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test"}}
	csr, err := admin.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx(t), csr.Name, csr, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sign := func(ctx context.Context) error {
		c := csr.DeepCopy()
		c.Status.Certificate = selfSignedPEM(t)
		_, err := hugo.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, c, metav1.UpdateOptions{})
		return err
	}
	want := `certificatesigningrequests.certificates.k8s.io "sign-me" is forbidden: user not permitted to sign requests with signerName "example.org/signer"`
	eventually(t, "RBAC lets hugo reach admission", func(ctx context.Context) error {
		if err := sign(ctx); !apierrors.IsForbidden(err) || err.Error() != want {
			return fmt.Errorf("got %v, want 403 %s", err, want)
		}
		return nil
	})
	// A status write that changes neither certificate nor conditions needs
	// no signer permission.
	if _, err := hugo.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx(t), csr, metav1.UpdateOptions{}); err != nil {
		t.Errorf("unchanged status: %v", err)
	}
	bindCluster(t, admin, "hugo-signs-for-example", "hugo", rbacv1.PolicyRule{Verbs: []string{"sign"},
		APIGroups: []string{certificatesv1.GroupName}, Resources: []string{"signers"}, ResourceNames: []string{"example.org/signer"}})
	eventually(t, "hugo signs", sign)
}

func testCSRSubjectRestriction(t *testing.T, admin kubernetes.Interface) {
	csr := csrObject(t, "masters", certificatesv1.KubeAPIServerClientSignerName, "mallory", "system:masters")
	_, err := admin.CertificatesV1().CertificateSigningRequests().Create(ctx(t), csr, metav1.CreateOptions{})
	want := `certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("got %v\nwant 403 %s", err, want)
	}
	// Another group, or another signer, is admitted.
	ok := csrObject(t, "devs", certificatesv1.KubeAPIServerClientSignerName, "dave", "devs")
	if _, err := admin.CertificatesV1().CertificateSigningRequests().Create(ctx(t), ok, metav1.CreateOptions{}); err != nil {
		t.Errorf("devs: %v", err)
	}
	other := csrObject(t, "masters-elsewhere", "example.com/issuer", "mallory", "system:masters")
	if _, err := admin.CertificatesV1().CertificateSigningRequests().Create(ctx(t), other, metav1.CreateOptions{}); err != nil {
		t.Errorf("another signer: %v", err)
	}
}

// bindCluster grants user rule through a cluster role and binding of name.
func bindCluster(t *testing.T, admin kubernetes.Interface, name, user string, rule rbacv1.PolicyRule) {
	t.Helper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}
	if _, err := admin.RbacV1().ClusterRoles().Create(ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: clusterRoleRef(name), Subjects: userSubject(user)}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx(t), crb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createCSR(t *testing.T, admin kubernetes.Interface, name, signer, cn string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	out, err := admin.CertificatesV1().CertificateSigningRequests().Create(ctx(t), csrObject(t, name, signer, cn), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// csrObject is a request for a client certificate of CN=cn, O=orgs.
func csrObject(t *testing.T, name, signer, cn string, orgs ...string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: cn, Organization: orgs}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: signer,
			Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		}}
}

// selfSignedPEM is a certificate for status.certificate, which must hold
// at least one valid PEM CERTIFICATE block.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "signed"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pemCert(der)
}
