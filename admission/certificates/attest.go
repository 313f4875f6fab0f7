package certificates

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/apis/rbac"
	"github.com/capstan-io/capstan/authz"
)

var clusterTrustBundles = certificatesv1.Resource("clustertrustbundles")

// Attest is the ClusterTrustBundleAttest plugin: a bundle that names a
// signer may be written only by a user with the attest verb on that
// signer.
type Attest struct {
	authz authz.Authorizer
}

// NewAttest returns the plugin asking az.
func NewAttest(az authz.Authorizer) *Attest { return &Attest{authz: az} }

var (
	_ admission.Validator = (*Attest)(nil)
	_ admission.Handles   = (*Attest)(nil)
)

// Handles creates and updates.
func (*Attest) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate refuses a bundle naming a signer the user may not attest for.
// An update that changes only what the garbage collector writes passes, so
// that storage migration and deletion work whoever runs them.
func (p *Attest) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.GroupResource() != clusterTrustBundles {
		return nil
	}
	var signer string
	switch b := a.Object.(type) {
	case *certificatesv1.ClusterTrustBundle:
		signer = b.Spec.SignerName
	case *certificatesv1beta1.ClusterTrustBundle:
		signer = b.Spec.SignerName
	default:
		return forbidden(a, fmt.Errorf("expected type ClusterTrustBundle, got: %T", a.OldObject))
	}
	if signer == "" {
		return nil
	}
	if a.Operation == admission.Update && a.OldObject != nil && rbac.OnlyGCFieldsChange(a.Object, a.OldObject) {
		return nil
	}
	if !MayActForSigner(ctx, p.authz, "attest", signer) {
		return forbidden(a, fmt.Errorf("user not permitted to attest for signerName %q", signer))
	}
	return nil
}
