package certificates

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/admission/certificates"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/registry"
)

// kube's bounds on a PodCertificateRequest.
const (
	maxKeyMaterialSize       = 10 * 1024 // stubPKCS10Request
	maxCertificateChainSize  = 100 * 1024
	minMaxExpirationSeconds  = 60 * 60
	maxMaxExpirationSeconds  = 91 * 24 * 60 * 60
	kubeMaxExpirationSeconds = 24 * 60 * 60 // for kubernetes.io signers
	maxUIDLength             = 128
)

var (
	pkcs10ReqPath = field.NewPath("spec", "stubPKCS10Request")
)

// PodCertificateRequestStrategy is the strategy of the namespaced
// podcertificaterequests resource: a kubelet asks a signer for a pod's
// certificate; the spec never changes after creation.
type PodCertificateRequestStrategy struct{}

var (
	_ registry.Strategy             = PodCertificateRequestStrategy{}
	_ registry.UnconditionalUpdater = PodCertificateRequestStrategy{}
	_ registry.FieldSelectable      = PodCertificateRequestStrategy{}
	_ registry.Defaulter            = PodCertificateRequestStrategy{}
)

// defaultMaxExpirationSeconds is kube's default of spec.maxExpirationSeconds:
// a day.
const defaultMaxExpirationSeconds = 86400

// Default sets kube's default of spec.maxExpirationSeconds.
func (PodCertificateRequestStrategy) Default(obj runtime.Object) {
	if r := obj.(*certificatesv1.PodCertificateRequest); r.Spec.MaxExpirationSeconds == nil {
		r.Spec.MaxExpirationSeconds = ptr.To[int32](defaultMaxExpirationSeconds)
	}
}

// NamespaceScoped is true.
func (PodCertificateRequestStrategy) NamespaceScoped() bool { return true }

// AllowUnconditionalUpdate is false, as in kube.
func (PodCertificateRequestStrategy) AllowUnconditionalUpdate() bool { return false }

// PrepareForCreate clears the status.
func (PodCertificateRequestStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*certificatesv1.PodCertificateRequest).Status = certificatesv1.PodCertificateRequestStatus{}
}

// PrepareForUpdate keeps the status.
func (PodCertificateRequestStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*certificatesv1.PodCertificateRequest).Status = old.(*certificatesv1.PodCertificateRequest).Status
}

// Validate validates a new request.
func (PodCertificateRequestStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validatePodCertificateRequest(obj.(*certificatesv1.PodCertificateRequest))
}

// ValidateUpdate refuses any change of the spec.
func (PodCertificateRequestStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	r, oldR := obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest)
	return apivalidation.ValidateImmutableField(r.Spec, oldR.Spec, field.NewPath("spec"))
}

// Fields adds kube's field selectors of requests: the signer, the pod and
// the node.
func (PodCertificateRequestStrategy) Fields(obj runtime.Object) fields.Set {
	r := obj.(*certificatesv1.PodCertificateRequest)
	return fields.Set{"spec.signerName": r.Spec.SignerName, "spec.podName": r.Spec.PodName, "spec.nodeName": string(r.Spec.NodeName)}
}

// PodCertificateRequestStatusStrategy is the strategy of
// podcertificaterequests/status, where a signer issues, denies or fails a
// request; only a user who may "sign" for the request's signer changes it.
type PodCertificateRequestStatusStrategy struct {
	PodCertificateRequestStrategy
	Authorizer authz.Authorizer
	// Now is the clock status.notBefore is checked against.
	Now func() metav1.Time
}

// PrepareForUpdate keeps the spec and the metadata of old.
func (PodCertificateRequestStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	r, oldR := obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest)
	r.Spec = oldR.Spec
	metav1.ResetObjectMetaForStatus(&r.ObjectMeta, &oldR.ObjectMeta)
}

// ValidateUpdate validates the status and then that the user may sign for
// the signer, when the status changes.
func (s PodCertificateRequestStatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	r, oldR := obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest)
	if errs := validatePCRStatusUpdate(r, oldR, s.Now().Time); len(errs) != 0 {
		return errs
	}
	if apiequality.Semantic.DeepEqual(r.Status, oldR.Status) {
		return nil
	}
	u, ok := authn.UserFrom(ctx)
	signer := field.NewPath("spec", "signerName")
	if !ok {
		return field.ErrorList{field.InternalError(signer, fmt.Errorf("cannot determine calling user to perform \"sign\" check"))}
	}
	if s.Authorizer == nil || !certificates.MayActForSigner(ctx, s.Authorizer, "sign", oldR.Spec.SignerName) {
		return field.ErrorList{field.Forbidden(signer,
			fmt.Sprintf("User %q is not permitted to \"sign\" for signer %q", u.Name, oldR.Spec.SignerName))}
	}
	return nil
}

// validatePodCertificateRequest is kube's create validation: the signer,
// the pod, account and node it is for, the lifetime, and the key of a stub
// PKCS#10 request.
func validatePodCertificateRequest(r *certificatesv1.PodCertificateRequest) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateSignerName(spec.Child("signerName"), r.Spec.SignerName)
	if r.Spec.UnverifiedUserAnnotations != nil {
		errs = append(errs, validateUserAnnotations(r.Spec.UnverifiedUserAnnotations, spec.Child("unverifiedUserAnnotations"))...)
	}
	errs = append(errs, subdomain(spec.Child("podName"), r.Spec.PodName)...)
	errs = append(errs, uid(spec.Child("podUID"), string(r.Spec.PodUID))...)
	errs = append(errs, subdomain(spec.Child("serviceAccountName"), r.Spec.ServiceAccountName)...)
	errs = append(errs, uid(spec.Child("serviceAccountUID"), string(r.Spec.ServiceAccountUID))...)
	errs = append(errs, subdomain(spec.Child("nodeName"), string(r.Spec.NodeName))...)
	errs = append(errs, uid(spec.Child("nodeUID"), string(r.Spec.NodeUID))...)
	if r.Spec.MaxExpirationSeconds == nil {
		return append(errs, field.Required(spec.Child("maxExpirationSeconds"), "must be set"))
	}
	maxSeconds := int32(maxMaxExpirationSeconds)
	if isKubernetesSigner(r.Spec.SignerName) {
		maxSeconds = kubeMaxExpirationSeconds
	}
	if s := *r.Spec.MaxExpirationSeconds; s < minMaxExpirationSeconds || s > maxSeconds {
		errs = append(errs, field.Invalid(spec.Child("maxExpirationSeconds"), s,
			fmt.Sprintf("must be in the range [%d, %d]", minMaxExpirationSeconds, maxSeconds)))
	}
	// v1 has no pkixPublicKey and proofOfPossession, kube's older form of
	// the key, so the stub request is the only one.
	if len(r.Spec.StubPKCS10Request) != 0 {
		return append(errs, validateStubRequest(r.Spec.StubPKCS10Request)...)
	}
	return append(errs, field.Invalid(spec, field.OmitValueType{}, "exactly one of (stubPKCS10Request) or (pkixPublicKey, proofOfPossession) must be set"))
}

func subdomain(path *field.Path, v string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range apivalidation.NameIsDNSSubdomain(v, false) {
		errs = append(errs, field.Invalid(path, v, msg))
	}
	return errs
}

func uid(path *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Invalid(path, v, "must not be empty")}
	}
	if len(v) > maxUIDLength {
		return field.ErrorList{field.TooLong(path, v, maxUIDLength)}
	}
	return nil
}

// validateUserAnnotations requires domain-prefixed keys, in any case, and
// the size limit of annotations.
func validateUserAnnotations(annotations map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for k := range annotations {
		errs = append(errs, validation.IsDomainPrefixedKey(path, strings.ToLower(k))...)
	}
	if err := apivalidation.ValidateAnnotationsSize(annotations); err != nil {
		errs = append(errs, field.TooLong(path, "", apivalidation.TotalAnnotationSizeLimitB))
	}
	return errs
}

func isKubernetesSigner(signerName string) bool {
	host, _, _ := strings.Cut(signerName, "/")
	return host == "kubernetes.io" || strings.HasSuffix(host, ".kubernetes.io")
}

// validateStubRequest accepts a signed PKCS#10 request of an Ed25519,
// ECDSA (P-256, P-384, P-521) or RSA (3072, 4096 bits) key; its content is
// the signer's business.
func validateStubRequest(der []byte) field.ErrorList {
	if len(der) > maxKeyMaterialSize {
		return field.ErrorList{field.TooLong(pkcs10ReqPath, der, maxKeyMaterialSize)}
	}
	req, err := x509.ParseCertificateRequest(der)
	if err != nil {
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	switch pub := req.PublicKey.(type) {
	case ed25519.PublicKey:
	case *ecdsa.PublicKey:
		if !allowedCurve(pub.Curve) {
			return field.ErrorList{field.Invalid(pkcs10ReqPath, "curve "+pub.Curve.Params().Name, "elliptic public keys must use curve P256, P384, or P521")}
		}
	case *rsa.PublicKey:
		if bits := pub.Size() * 8; bits != 3072 && bits != 4096 {
			return field.ErrorList{field.Invalid(pkcs10ReqPath, fmt.Sprintf("%d-bit modulus", bits), "RSA keys must have modulus size 3072 or 4096")}
		}
	default:
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "unknown public key type; supported types are Ed25519, ECDSA, and RSA")}
	}
	if err := req.CheckSignature(); err != nil {
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "invalid signature")}
	}
	return nil
}

func allowedCurve(c elliptic.Curve) bool {
	return c == elliptic.P256() || c == elliptic.P384() || c == elliptic.P521()
}
