package certificates

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/mail"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	statusPath       = field.NewPath("status")
	certChainPath    = statusPath.Child("certificateChain")
	notBeforePath    = statusPath.Child("notBefore")
	notAfterPath     = statusPath.Child("notAfter")
	beginRefreshPath = statusPath.Child("beginRefreshAt")
)

var terminalConditions = []string{certificatesv1.PodCertificateRequestConditionTypeIssued,
	certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed}

// validatePCRStatusUpdate is kube's status rule: at most one of the terminal
// conditions, True; a request that reached one never changes again; a
// denial or failure carries only conditions; an issue carries a chain whose
// leaf is for the requested key and whose times agree with the status.
func validatePCRStatusUpdate(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	errs := apivalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if len(errs) != 0 {
		return errs
	}
	if errs = validatePCRConditions(r.Status.Conditions); len(errs) != 0 {
		return errs
	}
	switch {
	case pcrIs(old, terminalConditions...):
		return unchanged(r.Status, old.Status, "immutable after PodCertificateRequest is issued, denied, or failed")
	case pcrIs(r, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed):
		return unchanged(r.Status, certificatesv1.PodCertificateRequestStatus{Conditions: r.Status.Conditions},
			"non-condition status fields must be empty when denying or failing the PodCertificateRequest")
	case pcrIs(r, certificatesv1.PodCertificateRequestConditionTypeIssued):
		return validateIssued(r, old, now)
	}
	return unchanged(r.Status, old.Status, `status is immutable unless transitioning to "Issued", "Denied", or "Failed"`)
}

func validatePCRConditions(conditions []metav1.Condition) field.ErrorList {
	var errs field.ErrorList
	known := 0
	for i, c := range conditions {
		path := statusPath.Child("conditions").Index(i)
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied,
			certificatesv1.PodCertificateRequestConditionTypeFailed:
			if known++; known > 1 {
				errs = append(errs, field.Invalid(path.Child("type"), c.Type, `There may be at most one condition with type "Issued", "Denied", or "Failed"`))
			}
			if c.Status != metav1.ConditionTrue {
				errs = append(errs, field.NotSupported(path.Child("status"), c.Status, []metav1.ConditionStatus{metav1.ConditionTrue}))
			}
		default:
			errs = append(errs, field.NotSupported(path.Child("type"), c.Type, terminalConditions))
		}
	}
	return append(errs, metavalidation.ValidateConditions(conditions, statusPath.Child("conditions"))...)
}

func pcrIs(r *certificatesv1.PodCertificateRequest, types ...string) bool {
	for _, c := range r.Status.Conditions {
		for _, t := range types {
			if c.Type == t && c.Status == metav1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

func unchanged(status, want certificatesv1.PodCertificateRequestStatus, detail string) field.ErrorList {
	if apiequality.Semantic.DeepEqual(status, want) {
		return nil
	}
	return field.ErrorList{field.Invalid(statusPath, field.OmitValueType{}, detail)}
}

// validateIssued checks an issued chain: its leaf, the requested key, the
// three times, and that the rest are certificates.
func validateIssued(r, old *certificatesv1.PodCertificateRequest, now time.Time) field.ErrorList {
	chain := r.Status.CertificateChain
	if len(chain) > maxCertificateChainSize {
		return field.ErrorList{field.TooLong(certChainPath, chain, maxCertificateChainSize)}
	}
	leafBlock, rest := pem.Decode([]byte(chain))
	if leafBlock == nil {
		return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must contain at least one certificate")}
	}
	if leafBlock.Type != "CERTIFICATE" {
		return field.ErrorList{field.Invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTIFICATE PEM blocks")}
	}
	leaf, err := x509.ParseCertificate(leafBlock.Bytes)
	if err != nil {
		return field.ErrorList{field.Invalid(certChainPath, chain, "leaf certificate does not parse as valid X.509")}
	}
	errs := validateLeafNames(leaf)
	if keyErrs := validateLeafKey(leaf, old, chain); len(keyErrs) != 0 {
		return append(errs, keyErrs...)
	}
	if timeErrs := validateIssuedTimes(r, leaf, now); len(timeErrs) != 0 {
		return append(errs, timeErrs...)
	}
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return errs
		}
		if b.Type != "CERTIFICATE" {
			// kube's message, misspelling included.
			return append(errs, field.Invalid(certChainPath, chain, "issued certificate chain must consist entirely of CERTFICATE PEM blocks"))
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return append(errs, field.Invalid(certChainPath, chain, "intermediate certificate does not parse as valid X.509"))
		}
	}
}

func validateLeafNames(leaf *x509.Certificate) field.ErrorList {
	var errs field.ErrorList
	for _, name := range leaf.DNSNames {
		if name == "" {
			errs = append(errs, field.Invalid(certChainPath, name, "leaf certificate should not contain empty DNSName"))
		}
		if strings.Contains(name, "..") {
			errs = append(errs, field.Invalid(certChainPath, name, "leaf certificate's DNSName should not contain '..'"))
		}
		if strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
			errs = append(errs, field.Invalid(certChainPath, name, "leaf certificate's DNSName should not start or end with '.'"))
		}
	}
	for _, addr := range leaf.EmailAddresses {
		if _, err := mail.ParseAddress(addr); err != nil {
			errs = append(errs, field.Invalid(certChainPath, addr, "leaf certificate should not contain invalid EmailAddress"))
		}
	}
	return errs
}

// validateLeafKey requires the leaf to be issued to the key of the request.
func validateLeafKey(leaf *x509.Certificate, old *certificatesv1.PodCertificateRequest, chain string) field.ErrorList {
	req, err := x509.ParseCertificateRequest(old.Spec.StubPKCS10Request)
	if err != nil {
		return field.ErrorList{field.Invalid(pkcs10ReqPath, field.OmitValueType{}, "must be a valid PKCS#10 CSR")}
	}
	if k, ok := req.PublicKey.(interface{ Equal(crypto.PublicKey) bool }); ok && !k.Equal(leaf.PublicKey) {
		return field.ErrorList{field.Invalid(certChainPath, chain, "leaf certificate was not issued to the requested public key")}
	}
	return nil
}

// validateIssuedTimes requires notBefore, notAfter and beginRefreshAt, the
// first two as in the leaf, notBefore near now, a lifetime between an hour
// and spec.maxExpirationSeconds, and a refresh ten minutes inside it.
func validateIssuedTimes(r *certificatesv1.PodCertificateRequest, leaf *x509.Certificate, now time.Time) field.ErrorList {
	s := r.Status
	var errs field.ErrorList
	if s.NotBefore == nil {
		errs = append(errs, field.Required(notBeforePath, "must be present and consistent with the issued certificate"))
	}
	if s.NotAfter == nil {
		errs = append(errs, field.Required(notAfterPath, "must be present and consistent with the issued certificate"))
	}
	if s.BeginRefreshAt == nil {
		errs = append(errs, field.Required(beginRefreshPath, "must be present and in the range [notbefore+10min, notafter-10min]"))
	}
	if len(errs) != 0 {
		return errs
	}
	const skew, margin = 5 * time.Minute, 10 * time.Minute
	lifetime := leaf.NotAfter.Sub(leaf.NotBefore)
	switch {
	case !s.NotBefore.Time.Equal(leaf.NotBefore):
		return field.ErrorList{field.Invalid(notBeforePath, s.NotBefore.Time, "must be set to the NotBefore time encoded in the leaf certificate")}
	case !(s.NotBefore.Time.After(now.Add(-skew)) && s.NotBefore.Time.Before(now.Add(skew))):
		return field.ErrorList{field.Invalid(notBeforePath, s.NotBefore.Time, "must be set to within 5 minutes of kube-apiserver's current time")}
	case !s.NotAfter.Time.Equal(leaf.NotAfter):
		return field.ErrorList{field.Invalid(notAfterPath, s.NotAfter.Time, "must be set to the NotAfter time encoded in the leaf certificate")}
	case lifetime < time.Hour:
		return field.ErrorList{field.Invalid(certChainPath, lifetime, "leaf certificate lifetime must be >= 1 hour")}
	case lifetime > time.Duration(*r.Spec.MaxExpirationSeconds)*time.Second:
		return field.ErrorList{field.Invalid(certChainPath, lifetime,
			fmt.Sprintf("leaf certificate lifetime must be <= spec.maxExpirationSeconds (%v)", *r.Spec.MaxExpirationSeconds))}
	case s.BeginRefreshAt.Time.Before(s.NotBefore.Add(margin)):
		return field.ErrorList{field.Invalid(beginRefreshPath, s.BeginRefreshAt.Time, "must be at least 10 minutes after status.notBefore")}
	case s.BeginRefreshAt.Time.After(s.NotAfter.Add(-margin)):
		return field.ErrorList{field.Invalid(beginRefreshPath, s.BeginRefreshAt.Time, "must be at least 10 minutes before status.notAfter")}
	}
	return nil
}
