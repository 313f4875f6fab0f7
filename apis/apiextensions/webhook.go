package apiextensions

import (
	"fmt"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/transport"
)

// ValidateCABundle accepts what a client's TLS configuration accepts as CA
// data: PEM certificates.
func ValidateCABundle(fldPath *field.Path, caBundle []byte) field.ErrorList {
	if _, err := transport.TLSConfigFor(&transport.Config{TLS: transport.TLSConfig{CAData: caBundle}}); err != nil {
		return field.ErrorList{field.Invalid(fldPath, caBundle, err.Error())}
	}
	return nil
}

// ValidateWebhookURL accepts https://host[/path]: no user, query or
// fragment.
func ValidateWebhookURL(fldPath *field.Path, raw string) field.ErrorList {
	const form = "; desired format: https://host[/path]"
	u, err := url.Parse(raw)
	if err != nil {
		return field.ErrorList{field.Required(fldPath, "url must be a valid URL: "+err.Error()+form)}
	}
	var errs field.ErrorList
	if u.Scheme != "https" {
		errs = append(errs, field.Invalid(fldPath, u.Scheme, "'https' is the only allowed URL scheme"+form))
	}
	if u.Host == "" {
		errs = append(errs, field.Invalid(fldPath, u.Host, "host must be specified"+form))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(fldPath, u.User.String(), "user information is not permitted in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(fldPath, u.Fragment, "fragments are not permitted in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(fldPath, u.RawQuery, "query parameters are not permitted in the URL"))
	}
	return errs
}

// ValidateWebhookService checks a service reference: name, namespace, a
// valid port, and a path of DNS-subdomain segments.
func ValidateWebhookService(fldPath *field.Path, namespace, name string, path *string, port int32) field.ErrorList {
	var errs field.ErrorList
	if name == "" {
		errs = append(errs, field.Required(fldPath.Child("name"), ""))
	}
	if namespace == "" {
		errs = append(errs, field.Required(fldPath.Child("namespace"), ""))
	}
	if msgs := validation.IsValidPortNum(int(port)); msgs != nil {
		errs = append(errs, field.Invalid(fldPath.Child("port"), port, "port is not valid: "+strings.Join(msgs, ", ")))
	}
	if path == nil || *path == "" || *path == "/" {
		return errs
	}
	p := *path
	pathPath := fldPath.Child("path")
	if p == "//" {
		return append(errs, field.Invalid(pathPath, p, "segment[0] may not be empty"))
	}
	if !strings.HasPrefix(p, "/") {
		errs = append(errs, field.Invalid(pathPath, p, "must start with a '/'"))
	}
	// kube drops the first character whatever it is, and one trailing slash.
	rest := strings.TrimSuffix(p[1:], "/")
	for i, segment := range strings.Split(rest, "/") {
		if segment == "" {
			errs = append(errs, field.Invalid(pathPath, p, fmt.Sprintf("segment[%d] may not be empty", i)))
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(segment) {
			errs = append(errs, field.Invalid(pathPath, p, fmt.Sprintf("segment[%d]: %v", i, msg)))
		}
	}
	return errs
}
