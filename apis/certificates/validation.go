package certificates

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/capstan-io/capstan/apis/internaldiff"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// legacyUnknownSignerName is the signer of requests made through
// certificates.k8s.io/v1beta1 without one; v1 refuses it on create.
const legacyUnknownSignerName = "kubernetes.io/legacy-unknown"

var (
	validUsages = sets.New(certificatesv1.UsageSigning, certificatesv1.UsageDigitalSignature, certificatesv1.UsageContentCommitment,
		certificatesv1.UsageKeyEncipherment, certificatesv1.UsageKeyAgreement, certificatesv1.UsageDataEncipherment,
		certificatesv1.UsageCertSign, certificatesv1.UsageCRLSign, certificatesv1.UsageEncipherOnly, certificatesv1.UsageDecipherOnly,
		certificatesv1.UsageAny, certificatesv1.UsageServerAuth, certificatesv1.UsageClientAuth, certificatesv1.UsageCodeSigning,
		certificatesv1.UsageEmailProtection, certificatesv1.UsageSMIME, certificatesv1.UsageIPsecEndSystem,
		certificatesv1.UsageIPsecTunnel, certificatesv1.UsageIPsecUser, certificatesv1.UsageTimestamping,
		certificatesv1.UsageOCSPSigning, certificatesv1.UsageMicrosoftSGC, certificatesv1.UsageNetscapeSGC)
	// trueOnly are the condition types whose status may only be True.
	trueOnly = sets.New(certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed)
)

// options are what an update path may do, and the faults of stored objects
// that are tolerated when they are already there.
type options struct {
	allowSettingApprovalConditions bool // the approval subresource
	allowSettingCertificate        bool // the status subresource
	allowBothApprovedAndDenied     bool
	allowLegacySignerName          bool
	allowDuplicateConditionTypes   bool
	allowEmptyConditionType        bool
	allowArbitraryCertificate      bool
	allowUnknownUsages             bool
	allowDuplicateUsages           bool
}

// optionsFor tolerates in csr what old already had; old is nil on create.
func optionsFor(csr, old *certificatesv1.CertificateSigningRequest) options {
	if old == nil {
		return options{}
	}
	seenTypes, seenUsages := map[certificatesv1.RequestConditionType]bool{}, map[certificatesv1.KeyUsage]bool{}
	var o options
	for _, c := range old.Status.Conditions {
		o.allowDuplicateConditionTypes = o.allowDuplicateConditionTypes || seenTypes[c.Type]
		o.allowEmptyConditionType = o.allowEmptyConditionType || c.Type == ""
		seenTypes[c.Type] = true
	}
	o.allowBothApprovedAndDenied = seenTypes[certificatesv1.CertificateApproved] && seenTypes[certificatesv1.CertificateDenied]
	for _, u := range old.Spec.Usages {
		o.allowDuplicateUsages = o.allowDuplicateUsages || seenUsages[u]
		o.allowUnknownUsages = o.allowUnknownUsages || !validUsages.Has(u)
		seenUsages[u] = true
	}
	o.allowLegacySignerName = old.Spec.SignerName == legacyUnknownSignerName
	o.allowArbitraryCertificate = bytes.Equal(csr.Status.Certificate, old.Status.Certificate) || validateCertificate(old.Status.Certificate) != nil
	return o
}

// validateCSR validates a request: a signed PKCS#10 request, usages, a
// qualified signer name, a duration of at least ten minutes, conditions
// and certificate.
func validateCSR(csr *certificatesv1.CertificateSigningRequest, o options) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if err := checkRequest(csr.Spec.Request); err != nil {
		errs = append(errs, field.Invalid(spec.Child("request"), csr.Spec.Request, err.Error()))
	}
	errs = append(errs, validateUsages(csr.Spec.Usages, o, spec.Child("usages"))...)
	if !o.allowLegacySignerName && csr.Spec.SignerName == legacyUnknownSignerName {
		errs = append(errs, field.Invalid(spec.Child("signerName"), csr.Spec.SignerName, "the legacy signerName is not allowed via this API version"))
	} else {
		errs = append(errs, validateSignerName(spec.Child("signerName"), csr.Spec.SignerName)...)
	}
	if s := csr.Spec.ExpirationSeconds; s != nil && *s < 600 {
		errs = append(errs, field.Invalid(spec.Child("expirationSeconds"), *s, "may not specify a duration less than 600 seconds (10 minutes)"))
	}
	errs = append(errs, validateConditions(csr.Status.Conditions, o, field.NewPath("status", "conditions"))...)
	if !o.allowArbitraryCertificate {
		if err := validateCertificate(csr.Status.Certificate); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("status", "certificate"), "<certificate data>", err.Error()))
		}
	}
	return errs
}

// checkRequest parses a PEM CERTIFICATE REQUEST and checks its signature.
func checkRequest(pemBytes []byte) error {
	block, _ := pem.Decode(pemBytes)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return err
	}
	return req.CheckSignature()
}

func validateUsages(usages []certificatesv1.KeyUsage, o options, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(usages) == 0 {
		errs = append(errs, field.Required(fldPath, ""))
	}
	seen := map[certificatesv1.KeyUsage]bool{}
	for i, u := range usages {
		if !o.allowUnknownUsages && !validUsages.Has(u) {
			errs = append(errs, field.NotSupported(fldPath.Index(i), u, sets.List(validUsages)))
		}
		if !o.allowDuplicateUsages && seen[u] {
			errs = append(errs, field.Duplicate(fldPath.Index(i), u))
		}
		seen[u] = true
	}
	return errs
}

// validateConditions requires typed conditions with a status (True only
// for Approved, Denied and Failed), each type once, and never both
// Approved and Denied.
func validateConditions(conditions []certificatesv1.CertificateSigningRequestCondition, o options, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[certificatesv1.RequestConditionType]bool{}
	for i, c := range conditions {
		path := fldPath.Index(i)
		if !o.allowEmptyConditionType && c.Type == "" {
			errs = append(errs, field.Required(path.Child("type"), ""))
		}
		allowed := []string{string(corev1.ConditionFalse), string(corev1.ConditionTrue), string(corev1.ConditionUnknown)}
		if trueOnly.Has(c.Type) {
			allowed = []string{string(corev1.ConditionTrue)}
		}
		switch {
		case c.Status == "":
			errs = append(errs, field.Required(path.Child("status"), ""))
		case !sets.New(allowed...).Has(string(c.Status)):
			errs = append(errs, field.NotSupported(path.Child("status"), c.Status, allowed))
		}
		approval := c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied
		other := certificatesv1.CertificateDenied
		if c.Type == certificatesv1.CertificateDenied {
			other = certificatesv1.CertificateApproved
		}
		if !o.allowBothApprovedAndDenied && approval && seen[other] {
			errs = append(errs, field.Invalid(fldPath, c.Type, "Approved and Denied conditions are mutually exclusive"))
		}
		if !o.allowDuplicateConditionTypes && seen[c.Type] {
			errs = append(errs, field.Duplicate(path.Child("type"), c.Type))
		}
		seen[c.Type] = true
	}
	return errs
}

// validateCertificate requires PEM CERTIFICATE blocks without headers, at
// least one; empty data is no certificate yet.
func validateCertificate(data []byte) error {
	if len(data) == 0 {
		return nil
	}
	blocks := 0
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			return fmt.Errorf("only CERTIFICATE PEM blocks are allowed, found %q", block.Type)
		}
		if len(block.Headers) != 0 {
			return errors.New("no PEM block headers are permitted")
		}
		blocks++
		certs, err := x509.ParseCertificates(block.Bytes)
		if err != nil {
			return err
		}
		if len(certs) == 0 {
			return errors.New("found CERTIFICATE PEM block containing 0 certificates")
		}
		data = rest
	}
	if blocks == 0 {
		return errors.New("must contain at least one CERTIFICATE PEM block")
	}
	return nil
}

// validateCSRUpdate adds to validateCSR what an update path may not do:
// remove an Approved, Denied or Failed condition; add or change Approved
// and Denied conditions outside approval; set the certificate outside
// status, or change it once set.
func validateCSRUpdate(csr, old *certificatesv1.CertificateSigningRequest, o options) field.ErrorList {
	errs := validateCSR(csr, o)
	conds := field.NewPath("status", "conditions")
	for _, t := range []certificatesv1.RequestConditionType{certificatesv1.CertificateApproved, certificatesv1.CertificateDenied, certificatesv1.CertificateFailed} {
		oldC, newC := conditionsOf(old, t), conditionsOf(csr, t)
		approval := t != certificatesv1.CertificateFailed
		switch {
		case len(newC) < len(oldC):
			errs = append(errs, field.Forbidden(conds, fmt.Sprintf("updates may not remove a condition of type %q", t)))
		case !approval || o.allowSettingApprovalConditions:
		case len(newC) > len(oldC):
			errs = append(errs, field.Forbidden(conds, fmt.Sprintf("updates may not add a condition of type %q", t)))
		case !equality.Semantic.DeepEqual(oldC, newC):
			errs = append(errs, field.Forbidden(conds, fmt.Sprintf("updates may not modify a condition of type %q\n%v", t, internaldiff.Diff(oldC, newC))))
		}
	}
	if !bytes.Equal(csr.Status.Certificate, old.Status.Certificate) {
		certPath := field.NewPath("status", "certificate")
		if !o.allowSettingCertificate {
			errs = append(errs, field.Forbidden(certPath, "updates may not set certificate content"))
		} else if len(old.Status.Certificate) > 0 {
			errs = append(errs, field.Forbidden(certPath, "updates may not modify existing certificate content"))
		}
	}
	return errs
}

func conditionsOf(csr *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) []certificatesv1.CertificateSigningRequestCondition {
	var out []certificatesv1.CertificateSigningRequestCondition
	for _, c := range csr.Status.Conditions {
		if c.Type == t {
			out = append(out, c)
		}
	}
	return out
}

// validateSignerName requires "<domain>/<path>": a domain of at least two
// DNS labels and a path of DNS subdomains, within kube's lengths.
func validateSignerName(fldPath *field.Path, name string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fldPath, "")}
	}
	domain, path, ok := strings.Cut(name, "/")
	if !ok || strings.Contains(path, "/") {
		return field.ErrorList{field.Invalid(fldPath, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")}
	}
	var errs field.ErrorList
	if len(domain) > validation.DNS1123SubdomainMaxLength {
		errs = append(errs, field.TooLong(fldPath, "", validation.DNS1123SubdomainMaxLength))
	}
	labels := strings.Split(domain, ".")
	errs = append(errs, firstLabelErrs(fldPath, domain, labels, validation.IsDNS1123Label)...)
	if len(labels) < 2 {
		errs = append(errs, field.Invalid(fldPath, domain, "should be a domain with at least two segments separated by dots"))
	}
	errs = append(errs, firstLabelErrs(fldPath, path, strings.Split(path, "."), validation.IsDNS1123Subdomain)...)
	maxLen := validation.DNS1123SubdomainMaxLength + (validation.DNS1123SubdomainMaxLength + validation.DNS1123LabelMaxLength + 1) + 1
	if len(name) > maxLen {
		errs = append(errs, field.TooLong(fldPath, "", maxLen))
	}
	return errs
}

// firstLabelErrs reports the errors of the first bad label only, as kube
// does: the others would repeat them.
func firstLabelErrs(fldPath *field.Path, segment string, labels []string, check func(string) []string) field.ErrorList {
	for _, l := range labels {
		msgs := check(l)
		if len(msgs) == 0 {
			continue
		}
		var errs field.ErrorList
		for _, msg := range msgs {
			errs = append(errs, field.Invalid(fldPath, segment, fmt.Sprintf("validating label %q: %s", l, msg)))
		}
		return errs
	}
	return nil
}
