package encryptionconfig

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
)

// kube-apiserver's messages, word for word.
const (
	moreThanOneElementErr          = "more than one provider specified in a single element, should split into different list elements"
	noProviderErr                  = "provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity"
	keyLenErrFmt                   = "secret is not of the expected length, got %d, expected one of %v"
	unsupportedSchemeErrFmt        = "unsupported scheme %q for KMS provider, only unix is supported"
	unsupportedKMSAPIVersionErrFmt = "unsupported apiVersion %s for KMS provider, only v1 and v2 are supported"
	atLeastOneRequiredErrFmt       = "at least one %s is required"
	invalidURLErrFmt               = "invalid endpoint for kms provider, error: %v"
	mandatoryFieldErrFmt           = "%s is a mandatory field for a %s"
	base64EncodingErr              = "secrets must be base64 encoded"
	zeroOrNegativeErrFmt           = "%s should be a positive value"
	invalidKMSConfigNameErrFmt     = "invalid KMS provider name %s, must not contain ':'"
	duplicateKMSConfigNameErrFmt   = "duplicate KMS provider name %s, names must be unique"
	eventsGroupErr                 = "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file"
	extensionsGroupErr             = "'extensions' group has been removed and cannot be used for encryption"
	starResourceErr                = "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
	overlapErr                     = "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"
	nonRESTAPIResourceErr          = "resources which do not have REST API/s cannot be encrypted"
	resourceNameErr                = "resource name should not contain capital letters"
	resourceAcrossGroupErr         = "encrypting the same resource across groups is not supported"
	duplicateResourceErr           = "the same resource cannot be specified multiple times"
)

var (
	aesKeySizes       = []int{16, 24, 32}
	secretboxKeySizes = []int{32}
	anyGroupResource  = schema.GroupResource{Group: "*", Resource: "*"}
)

// validate checks c with kube's rules. reload makes KMS names unique for
// every apiVersion, as kube does when the file is reloaded.
func validate(c *apiserverv1.EncryptionConfiguration, reload bool) field.ErrorList {
	root := field.NewPath("resources")
	if len(c.Resources) == 0 {
		return field.ErrorList{field.Required(root, fmt.Sprintf(atLeastOneRequiredErrFmt, root))}
	}
	var errs field.ErrorList
	kmsNames := sets.New[string]()
	for i, rc := range c.Resources {
		r := root.Index(i).Child("resources")
		p := root.Index(i).Child("providers")
		if len(rc.Resources) == 0 {
			errs = append(errs, field.Required(r, fmt.Sprintf(atLeastOneRequiredErrFmt, r)))
		}
		errs = append(errs, validateOverlap(rc.Resources, r)...)
		errs = append(errs, validateResourceNames(rc.Resources, r)...)
		if len(rc.Providers) == 0 {
			errs = append(errs, field.Required(p, fmt.Sprintf(atLeastOneRequiredErrFmt, p)))
		}
		for j, provider := range rc.Providers {
			path := p.Index(j)
			errs = append(errs, validateSingleProvider(provider, path)...)
			switch {
			case provider.KMS != nil:
				errs = append(errs, validateKMS(provider.KMS, path.Child("kms"), kmsNames, reload)...)
				kmsNames.Insert(provider.KMS.Name)
			case provider.AESGCM != nil:
				errs = append(errs, validateKeys(provider.AESGCM.Keys, path.Child("aesgcm").Child("keys"), aesKeySizes)...)
			case provider.AESCBC != nil:
				errs = append(errs, validateKeys(provider.AESCBC.Keys, path.Child("aescbc").Child("keys"), aesKeySizes)...)
			case provider.Secretbox != nil:
				errs = append(errs, validateKeys(provider.Secretbox.Keys, path.Child("secretbox").Child("keys"), secretboxKeySizes)...)
			}
		}
	}
	return errs
}

// validateOverlap refuses a resource named twice and a list where one
// entry masks another ("secrets" and "*.", anything and "*.*").
func validateOverlap(resources []string, path *field.Path) field.ErrorList {
	if len(resources) < 2 {
		return nil
	}
	grs := make([]schema.GroupResource, len(resources))
	for i, r := range resources {
		grs[i] = schema.ParseGroupResource(r)
	}
	var duplicate, overlap bool
	for i, a := range grs {
		for j, b := range grs {
			switch {
			case i == j:
			case a == b && !duplicate:
				duplicate = true
			case overlap:
			case a == anyGroupResource:
				overlap = true
			case a.Group == b.Group && (a.Resource == "*" || b.Resource == "*"):
				overlap = true
			}
		}
	}
	var errs field.ErrorList
	if duplicate {
		errs = append(errs, field.Invalid(path, resources, duplicateResourceErr))
	}
	if overlap {
		errs = append(errs, field.Invalid(path, resources, overlapErr))
	}
	return errs
}

func validateResourceNames(resources []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for j, res := range resources {
		gr := schema.ParseGroupResource(res)
		msg := ""
		switch {
		case strings.ToLower(res) != res:
			msg = resourceNameErr
		case res == "*":
			msg = starResourceErr
		case res == "apiserveripinfo" || res == "serviceipallocations" || res == "servicenodeportallocations":
			msg = nonRESTAPIResourceErr
		case gr.Group == "events.k8s.io":
			msg = eventsGroupErr
		case gr.Group == "extensions":
			msg = extensionsGroupErr
		case gr.Group == "*" && gr.Resource != "*":
			msg = resourceAcrossGroupErr
		}
		if msg != "" {
			errs = append(errs, field.Invalid(path.Index(j), res, msg))
		}
	}
	return errs
}

func validateSingleProvider(p apiserverv1.ProviderConfiguration, path *field.Path) field.ErrorList {
	found := 0
	for _, set := range []bool{p.KMS != nil, p.AESGCM != nil, p.AESCBC != nil, p.Secretbox != nil, p.Identity != nil} {
		if set {
			found++
		}
	}
	switch {
	case found == 0:
		return field.ErrorList{field.Invalid(path, p, noProviderErr)}
	case found > 1:
		return field.ErrorList{field.Invalid(path, p, moreThanOneElementErr)}
	}
	return nil
}

func validateKeys(keys []apiserverv1.Key, path *field.Path, sizes []int) field.ErrorList {
	if len(keys) == 0 {
		return field.ErrorList{field.Required(path, fmt.Sprintf(atLeastOneRequiredErrFmt, "keys"))}
	}
	var errs field.ErrorList
	for i, key := range keys {
		errs = append(errs, validateKey(key, path.Index(i), sizes)...)
	}
	return errs
}

func validateKey(key apiserverv1.Key, path *field.Path, sizes []int) field.ErrorList {
	var errs field.ErrorList
	if key.Name == "" {
		errs = append(errs, field.Required(path.Child("name"), fmt.Sprintf(mandatoryFieldErrFmt, "name", "key")))
	}
	if key.Secret == "" {
		return append(errs, field.Required(path.Child("secret"), fmt.Sprintf(mandatoryFieldErrFmt, "secret", "key")))
	}
	secret, err := base64.StdEncoding.DecodeString(key.Secret)
	if err != nil {
		return append(errs, field.Invalid(path.Child("secret"), "REDACTED", base64EncodingErr))
	}
	if !slices.Contains(sizes, len(secret)) {
		errs = append(errs, field.Invalid(path.Child("secret"), "REDACTED", fmt.Sprintf(keyLenErrFmt, len(secret), sizes)))
	}
	return errs
}

func validateKMS(c *apiserverv1.KMSConfiguration, path *field.Path, names sets.Set[string], reload bool) field.ErrorList {
	var errs field.ErrorList
	namePath := path.Child("name")
	if c.Name == "" {
		errs = append(errs, field.Required(namePath, fmt.Sprintf(mandatoryFieldErrFmt, "name", "provider")))
	}
	if c.APIVersion != "v1" && strings.Contains(c.Name, ":") {
		errs = append(errs, field.Invalid(namePath, c.Name, fmt.Sprintf(invalidKMSConfigNameErrFmt, c.Name)))
	}
	if (reload || c.APIVersion != "v1") && names.Has(c.Name) {
		errs = append(errs, field.Invalid(namePath, c.Name, fmt.Sprintf(duplicateKMSConfigNameErrFmt, c.Name)))
	}
	if c.Timeout == nil || c.Timeout.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("timeout"), c.Timeout, fmt.Sprintf(zeroOrNegativeErrFmt, "timeout")))
	}
	errs = append(errs, validateKMSEndpoint(c.Endpoint, path.Child("endpoint"))...)
	if c.APIVersion != "v1" && c.CacheSize != nil {
		errs = append(errs, field.Invalid(path.Child("cachesize"), *c.CacheSize, "cachesize is not supported in v2"))
	}
	if c.APIVersion == "v1" && c.CacheSize != nil && *c.CacheSize == 0 {
		errs = append(errs, field.Invalid(path.Child("cachesize"), *c.CacheSize, "cachesize should be a positive value, or negative to disable"))
	}
	if c.APIVersion != "v1" && c.APIVersion != "v2" {
		errs = append(errs, field.Invalid(path.Child("apiVersion"), c.APIVersion, fmt.Sprintf(unsupportedKMSAPIVersionErrFmt, "apiVersion")))
	}
	return errs
}

func validateKMSEndpoint(endpoint string, path *field.Path) field.ErrorList {
	if endpoint == "" {
		return field.ErrorList{field.Invalid(path, "", fmt.Sprintf(mandatoryFieldErrFmt, "endpoint", "kms"))}
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return field.ErrorList{field.Invalid(path, endpoint, fmt.Sprintf(invalidURLErrFmt, err))}
	}
	if u.Scheme != "unix" {
		return field.ErrorList{field.Invalid(path, endpoint, fmt.Sprintf(unsupportedSchemeErrFmt, u.Scheme))}
	}
	return nil
}
