// Package certificates holds the strategies of certificates.k8s.io/v1
// CertificateSigningRequests and of their status and approval
// subresources.
package certificates

import (
	"context"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/registry"
)

// CSRStrategy is the strategy of the certificatesigningrequests resource.
// The spec is written once, on create, and then never changes; the status
// changes through the status and approval subresources only.
type CSRStrategy struct{}

var (
	_ registry.Strategy        = CSRStrategy{}
	_ registry.NameValidator   = CSRStrategy{}
	_ registry.FieldSelectable = CSRStrategy{}
)

// NamespaceScoped is false: requests are cluster scoped.
func (CSRStrategy) NamespaceScoped() bool { return false }

// ValidateName accepts any name that can be a path segment, which the
// Store checks: kube does not care what requests are called.
func (CSRStrategy) ValidateName(string, bool) []string { return nil }

// PrepareForCreate records who asks, from the request's user, over what
// the client claimed, and starts with an empty status.
func (CSRStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
	if u, ok := authn.UserFrom(ctx); ok {
		csr.Spec.Username, csr.Spec.UID = u.Name, u.UID
		csr.Spec.Groups = append([]string(nil), u.Groups...)
		if len(u.Extra) > 0 {
			csr.Spec.Extra = map[string]certificatesv1.ExtraValue{}
			for k, v := range u.Extra {
				csr.Spec.Extra[k] = append(certificatesv1.ExtraValue(nil), v...)
			}
		}
	}
	csr.Status = certificatesv1.CertificateSigningRequestStatus{Conditions: []certificatesv1.CertificateSigningRequestCondition{}}
}

// PrepareForUpdate keeps spec and status: an update of the main resource
// changes only metadata.
func (CSRStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	csr.Spec, csr.Status = oldCSR.Spec, oldCSR.Status
}

// Validate validates a new request.
func (CSRStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	return validateCSR(csr, optionsFor(csr, nil))
}

// ValidateUpdate validates an update of the main resource.
func (CSRStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	return validateCSRUpdate(csr, oldCSR, optionsFor(csr, oldCSR))
}

// Fields returns spec.signerName, the request field selector beyond
// metadata.name.
func (CSRStrategy) Fields(obj runtime.Object) fields.Set {
	return fields.Set{"spec.signerName": obj.(*certificatesv1.CertificateSigningRequest).Spec.SignerName}
}

// CSRStatusStrategy is the strategy of certificatesigningrequests/status,
// which signers write: the certificate and conditions other than Approved
// and Denied.
type CSRStatusStrategy struct{ CSRStrategy }

// PrepareForUpdate keeps the spec, and the Approved and Denied conditions
// wherever the client left them in place, and stamps new conditions.
func (CSRStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	csr.Spec = oldCSR.Spec
	keepConditions(csr, oldCSR, certificatesv1.CertificateApproved)
	keepConditions(csr, oldCSR, certificatesv1.CertificateDenied)
	stampConditions(csr, oldCSR)
}

// ValidateUpdate allows setting the certificate, once.
func (CSRStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	opts := optionsFor(csr, oldCSR)
	opts.allowSettingCertificate = true
	return validateCSRUpdate(csr, oldCSR, opts)
}

// CSRApprovalStrategy is the strategy of
// certificatesigningrequests/approval, which approvers write: the
// conditions, Approved and Denied included, and nothing else.
type CSRApprovalStrategy struct{ CSRStrategy }

// PrepareForUpdate stamps new conditions and keeps everything else of old.
func (CSRApprovalStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	stampConditions(csr, oldCSR)
	conditions := csr.Status.Conditions
	csr.Spec, csr.Status = oldCSR.Spec, oldCSR.Status
	csr.Status.Conditions = conditions
}

// ValidateUpdate allows adding Approved or Denied conditions.
func (CSRApprovalStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	csr, oldCSR := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	opts := optionsFor(csr, oldCSR)
	opts.allowSettingApprovalConditions = true
	return validateCSRUpdate(csr, oldCSR, opts)
}

// keepConditions puts back the old conditions of type t when the new
// status has as many of them: a signer writing its status cannot change
// an approval.
func keepConditions(csr, old *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) {
	oldIdx, newIdx := conditionIndices(old, t), conditionIndices(csr, t)
	if len(oldIdx) != len(newIdx) {
		return
	}
	for i, o := range oldIdx {
		csr.Status.Conditions[newIdx[i]] = old.Status.Conditions[o]
	}
}

func conditionIndices(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []int {
	var out []int
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, i)
		}
	}
	return out
}

// stampConditions sets the times a client left unset: the update time to
// now, the transition time to that of an old condition of the same type
// and status, else now.
func stampConditions(csr, old *certificatesv1.CertificateSigningRequest) {
	now := metav1.Now()
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, o := range old.Status.Conditions {
			if o.Type == c.Type && o.Status == c.Status && !o.LastTransitionTime.IsZero() {
				c.LastTransitionTime = o.LastTransitionTime
				break
			}
		}
	}
}
