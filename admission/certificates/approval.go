package certificates

import (
	"context"
	"fmt"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authz"
)

// Approval is the CertificateApproval plugin: a write of the approval
// subresource needs the approve verb on the request's signer.
type Approval struct {
	authz authz.Authorizer
}

// NewApproval returns the plugin asking az.
func NewApproval(az authz.Authorizer) *Approval { return &Approval{authz: az} }

var (
	_ admission.Validator = (*Approval)(nil)
	_ admission.Handles   = (*Approval)(nil)
)

// Handles updates only.
func (*Approval) Handles(op admission.Operation) bool { return op == admission.Update }

// Validate refuses the approval (or denial) of a request whose signer the
// user may not approve for. The signer is the stored one: the write cannot
// change it.
func (p *Approval) Validate(ctx context.Context, a *admission.Attributes) error {
	if !isCSR(a, "approval") {
		return nil
	}
	csr, err := csrOf(a, a.OldObject)
	if err != nil {
		return err
	}
	if !MayActForSigner(ctx, p.authz, "approve", csr.Spec.SignerName) {
		return forbidden(a, fmt.Errorf("user not permitted to approve requests with signerName %q", csr.Spec.SignerName))
	}
	return nil
}
