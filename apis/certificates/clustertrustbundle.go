package certificates

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// maxTrustBundleSize is kube's bound on spec.trustBundle.
const maxTrustBundleSize = 1 << 20

// ClusterTrustBundleStrategy is the strategy of the cluster-scoped
// clustertrustbundles resource: PEM bundles of CA certificates, named after
// their signer when they have one.
type ClusterTrustBundleStrategy struct{}

var (
	_ registry.Strategy        = ClusterTrustBundleStrategy{}
	_ registry.NameValidator   = ClusterTrustBundleStrategy{}
	_ registry.FieldSelectable = ClusterTrustBundleStrategy{}
)

// NamespaceScoped is false.
func (ClusterTrustBundleStrategy) NamespaceScoped() bool { return false }

// ValidateName leaves the name to Validate: which names are allowed
// depends on spec.signerName.
func (ClusterTrustBundleStrategy) ValidateName(string, bool) []string { return nil }

// PrepareForCreate does nothing: a bundle has no status.
func (ClusterTrustBundleStrategy) PrepareForCreate(context.Context, runtime.Object) {}

// PrepareForUpdate does nothing: a bundle has no status.
func (ClusterTrustBundleStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}

// Validate validates a new bundle.
func (ClusterTrustBundleStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateClusterTrustBundle(obj.(*certificatesv1.ClusterTrustBundle), true)
}

// ValidateUpdate validates an update: the signer is immutable, and an
// unchanged bundle is not parsed again, as in kube, so that a stricter
// parser never makes a stored bundle unchangeable.
func (ClusterTrustBundleStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	b, oldB := obj.(*certificatesv1.ClusterTrustBundle), old.(*certificatesv1.ClusterTrustBundle)
	errs := validateClusterTrustBundle(b, b.Spec.TrustBundle != oldB.Spec.TrustBundle)
	return append(errs, apivalidation.ValidateImmutableField(b.Spec.SignerName, oldB.Spec.SignerName, field.NewPath("spec", "signerName"))...)
}

// Fields adds spec.signerName, kube's one field selector of bundles.
func (ClusterTrustBundleStrategy) Fields(obj runtime.Object) fields.Set {
	return fields.Set{"spec.signerName": obj.(*certificatesv1.ClusterTrustBundle).Spec.SignerName}
}

func validateClusterTrustBundle(b *certificatesv1.ClusterTrustBundle, parse bool) field.ErrorList {
	var errs field.ErrorList
	// A missing name is the metadata's error alone, as in kube.
	if b.Name != "" {
		for _, msg := range clusterTrustBundleName(b.Name, b.Spec.SignerName) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), b.Name, msg))
		}
	}
	if b.Spec.SignerName != "" {
		errs = append(errs, validateSignerName(field.NewPath("spec", "signerName"), b.Spec.SignerName)...)
	}
	if parse {
		errs = append(errs, validateTrustBundle(field.NewPath("spec", "trustBundle"), b.Spec.TrustBundle)...)
	}
	return errs
}

// clusterTrustBundleName is kube's rule: a bundle of a signer is named
// "<signer with : for />:<DNS subdomain>"; one without a signer has no ":".
func clusterTrustBundleName(name, signerName string) []string {
	if signerName == "" {
		if strings.Contains(name, ":") {
			return []string{`ClusterTrustBundle without signer name must not have ":" in its name`}
		}
		return apivalidation.NameIsDNSSubdomain(name, false)
	}
	prefix := strings.ReplaceAll(signerName, "/", ":") + ":"
	if !strings.HasPrefix(name, prefix) {
		return []string{fmt.Sprintf("ClusterTrustBundle for signerName %s must be named with prefix %s", signerName, prefix)}
	}
	return apivalidation.NameIsDNSSubdomain(strings.TrimPrefix(name, prefix), false)
}

// validateTrustBundle requires CA certificates only, without PEM headers,
// each once, and at least one; the bundle itself is not echoed back.
func validateTrustBundle(path *field.Path, in string) field.ErrorList {
	if len(in) > maxTrustBundleSize {
		return field.ErrorList{field.TooLong(path, "", maxTrustBundleSize)}
	}
	const omitted = "<value omitted>"
	var errs field.ErrorList
	seen := map[string][]int{}
	rest := []byte(in)
	for i := 0; ; i++ {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if msg := trustAnchorProblem(b); msg != "" {
			errs = append(errs, field.Invalid(path, omitted, fmt.Sprintf("entry %d %s", i, msg)))
			continue
		}
		seen[string(b.Bytes)] = append(seen[string(b.Bytes)], i)
	}
	// A bad entry says enough; duplicates or emptiness would repeat it.
	if len(errs) != 0 {
		return errs
	}
	if len(seen) == 0 {
		errs = append(errs, field.Invalid(path, omitted, "at least one trust anchor must be provided"))
	}
	for _, indices := range seen {
		if len(indices) > 1 {
			errs = append(errs, field.Invalid(path, omitted, fmt.Sprintf("duplicate trust anchor (indices %v)", indices)))
		}
	}
	return errs
}

// trustAnchorProblem is what disqualifies a PEM block as a trust anchor, in
// kube's words, or "".
func trustAnchorProblem(b *pem.Block) string {
	if b.Type != "CERTIFICATE" {
		return "has bad block type: " + b.Type
	}
	if len(b.Headers) != 0 {
		return "has PEM block headers"
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	switch {
	case err != nil:
		return "does not parse as X.509"
	case !cert.IsCA:
		return "does not have the CA bit set"
	case !cert.BasicConstraintsValid:
		return "has invalid basic constraints"
	}
	return ""
}
