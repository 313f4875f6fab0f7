package certificates

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authn"
)

// SubjectRestriction is the CertificateSubjectRestriction plugin: nobody
// may ask the kube-apiserver client signer for a certificate in the
// system:masters group, which RBAC cannot restrain.
type SubjectRestriction struct{}

var (
	_ admission.Validator = SubjectRestriction{}
	_ admission.Handles   = SubjectRestriction{}
)

// Handles creates only.
func (SubjectRestriction) Handles(op admission.Operation) bool { return op == admission.Create }

// Validate refuses a kube-apiserver client request whose subject has the
// organization system:masters.
func (SubjectRestriction) Validate(_ context.Context, a *admission.Attributes) error {
	if !isCSR(a, "") {
		return nil
	}
	csr, err := csrOf(a, a.Object)
	if err != nil {
		return err
	}
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return nil
	}
	req, err := parseRequest(csr.Spec.Request)
	if err != nil {
		return forbidden(a, fmt.Errorf("failed to parse CSR: %v", err))
	}
	if slices.Contains(req.Subject.Organization, authn.SystemPrivilegedGroup) {
		return forbidden(a, fmt.Errorf("use of %s signer with %s group is not allowed",
			certificatesv1.KubeAPIServerClientSignerName, authn.SystemPrivilegedGroup))
	}
	return nil
}

// parseRequest reads the PEM CERTIFICATE REQUEST block of a CSR.
func parseRequest(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, fmt.Errorf("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}
