// Package certificates holds kube's three admission plugins of
// CertificateSigningRequests: CertificateApproval and CertificateSigning,
// which ask the authorizer whether the user may approve or sign for the
// request's signer, and CertificateSubjectRestriction, which keeps
// system:masters out of kube-apiserver client certificates.
package certificates

import (
	"context"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

var csrs = certificatesv1.Resource("certificatesigningrequests")

// isCSR reports whether a is a write of sub, a subresource of
// certificatesigningrequests ("" for the object itself).
func isCSR(a *admission.Attributes, sub string) bool {
	return a.Resource.GroupResource() == csrs && a.Subresource == sub
}

// MayActForSigner asks authz whether the request's user has verb on the
// signers resource named signerName, or else on its domain's wildcard
// ("example.com/*"), as RBAC rules for signers are written either way.
func MayActForSigner(ctx context.Context, az authz.Authorizer, verb, signerName string) bool {
	u, ok := authn.UserFrom(ctx)
	if !ok {
		return false
	}
	domain, _, _ := strings.Cut(signerName, "/")
	for _, name := range []string{signerName, domain + "/*"} {
		info := &request.Info{IsResourceRequest: true, Verb: verb, APIGroup: certificatesv1.GroupName,
			APIVersion: "*", Resource: "signers", Name: name}
		if d, _, err := az.Authorize(ctx, authz.Attributes{User: u, Info: info}); err == nil && d == authz.Allow {
			return true
		}
	}
	return false
}

// forbidden is admission's 403: it names the object as the write does, or
// by its generateName before a name is generated, or "Unknown".
func forbidden(a *admission.Attributes, err error) error {
	name := a.Name
	if name == "" {
		name = "Unknown"
		if m, merr := meta.Accessor(a.Object); a.Object != nil && merr == nil {
			if m.GetName() != "" {
				name = m.GetName()
			} else if m.GetGenerateName() != "" {
				name = m.GetGenerateName()
			}
		}
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), name, err)
}

// csrOf is obj as a CertificateSigningRequest, or admission's 403.
func csrOf(a *admission.Attributes, obj runtime.Object) (*certificatesv1.CertificateSigningRequest, error) {
	csr, ok := obj.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return nil, forbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", obj))
	}
	return csr, nil
}
