package certificates

import (
	"bytes"
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authz"
)

// Signing is the CertificateSigning plugin: a status write that changes
// the certificate or the conditions needs the sign verb on the request's
// signer.
type Signing struct {
	authz authz.Authorizer
}

// NewSigning returns the plugin asking az.
func NewSigning(az authz.Authorizer) *Signing { return &Signing{authz: az} }

var (
	_ admission.Validator = (*Signing)(nil)
	_ admission.Handles   = (*Signing)(nil)
)

// Handles updates only.
func (*Signing) Handles(op admission.Operation) bool { return op == admission.Update }

// Validate refuses a status change by a user who may not sign for the
// request's signer; a status write that changes nothing passes.
func (p *Signing) Validate(ctx context.Context, a *admission.Attributes) error {
	if !isCSR(a, "status") {
		return nil
	}
	old, err := csrOf(a, a.OldObject)
	if err != nil {
		return err
	}
	csr, err := csrOf(a, a.Object)
	if err != nil {
		return err
	}
	if bytes.Equal(old.Status.Certificate, csr.Status.Certificate) &&
		equality.Semantic.DeepEqual(old.Status.Conditions, csr.Status.Conditions) {
		return nil
	}
	if !MayActForSigner(ctx, p.authz, "sign", old.Spec.SignerName) {
		return forbidden(a, fmt.Errorf("user not permitted to sign requests with signerName %q", old.Spec.SignerName))
	}
	return nil
}
