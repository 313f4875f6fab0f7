// Package authzconfig is the authorizer chain as kube-apiserver configures
// it: an AuthorizationConfiguration (apiserver.config.k8s.io/v1), read from
// --authorization-config or built from the legacy --authorization-mode and
// --authorization-webhook-* flags, and validated with kube's rules.
package authzconfig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/authz/webhook"
)

// The apiserver.config.k8s.io versions kube-apiserver 1.37 reads an
// AuthorizationConfiguration in; all are the same shape.
var versions = []string{"apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1beta1", "apiserver.config.k8s.io/v1alpha1"}

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme, serializer.EnableStrict)
)

func init() {
	if err := apiserverv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
}

// LoadFile reads, defaults and validates an AuthorizationConfiguration.
func LoadFile(path string) (*apiserverv1.AuthorizationConfiguration, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	c, err := Load(data)
	return c, data, err
}

// Load reads, defaults and validates an AuthorizationConfiguration in YAML
// or JSON.
func Load(data []byte) (*apiserverv1.AuthorizationConfiguration, error) {
	c, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("failed to load AuthorizationConfiguration from file: %w", err)
	}
	if err := Validate(c); err != nil {
		return nil, err
	}
	return c, nil
}

func decode(data []byte) (*apiserverv1.AuthorizationConfiguration, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal(js, &obj); err != nil {
		return nil, err
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if !slices.Contains(versions, apiVersion) || kind != "AuthorizationConfiguration" {
		return nil, fmt.Errorf("no kind %q is registered for version %q", kind, apiVersion)
	}
	obj["apiVersion"] = apiserverv1.SchemeGroupVersion.String()
	if js, err = json.Marshal(obj); err != nil {
		return nil, err
	}
	out, _, err := codecs.UniversalDeserializer().Decode(js, nil, &apiserverv1.AuthorizationConfiguration{})
	if err != nil {
		return nil, err
	}
	c, ok := out.(*apiserverv1.AuthorizationConfiguration)
	if !ok {
		return nil, fmt.Errorf("expected AuthorizationConfiguration, got %T", out)
	}
	scheme.Default(c)
	return c, nil
}

// Validate checks c with kube's rules: known types, Node and RBAC once,
// names (those of built-in types must be their lower-case type), and each
// webhook's fields and match conditions.
func Validate(c *apiserverv1.AuthorizationConfiguration) error {
	var errs field.ErrorList
	fld := field.NewPath("authorizers")
	if len(c.Authorizers) == 0 {
		errs = append(errs, field.Required(fld, "at least one authorization mode must be defined"))
	}
	types, names := map[string]bool{}, map[string]bool{}
	for i, a := range c.Authorizers {
		p := fld.Index(i)
		t := a.Type
		switch {
		case t == "":
			errs = append(errs, field.Required(p.Child("type"), ""))
			continue
		case !slices.Contains(authz.ModeChoices, t):
			known := slices.Clone(authz.ModeChoices)
			slices.Sort(known)
			errs = append(errs, field.NotSupported(p.Child("type"), t, known))
			continue
		case types[t] && t != authz.ModeWebhook:
			errs = append(errs, field.Duplicate(p.Child("type"), t))
			continue
		}
		types[t] = true
		switch {
		case a.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case names[a.Name]:
			errs = append(errs, field.Duplicate(p.Child("name"), a.Name))
		default:
			if e := validation.IsDNS1123Subdomain(a.Name); len(e) > 0 {
				errs = append(errs, field.Invalid(p.Child("name"), a.Name, "authorizer name is invalid: "+strings.Join(e, ", ")))
			}
		}
		names[a.Name] = true
		if a.Type == string(apiserverv1.TypeWebhook) {
			if a.Webhook == nil {
				errs = append(errs, field.Required(p.Child("webhook"), "required when type=Webhook"))
				continue
			}
			errs = append(errs, validateWebhook(p, a.Webhook)...)
		} else if a.Webhook != nil {
			errs = append(errs, field.Invalid(p.Child("webhook"), "non-null", "may only be specified when type=Webhook"))
		}
	}
	if err := errs.ToAggregate(); err != nil {
		return err
	}
	var nameErrs []error
	for _, a := range c.Authorizers {
		if a.Type != string(apiserverv1.TypeWebhook) && a.Name != strings.ToLower(a.Type) {
			nameErrs = append(nameErrs, fmt.Errorf("expected name %s for authorizer %s instead of %s", strings.ToLower(a.Type), a.Type, a.Name))
		}
	}
	return joinAggregate(nameErrs)
}

func validateWebhook(p *field.Path, w *apiserverv1.WebhookConfiguration) field.ErrorList {
	var errs field.ErrorList
	if d := w.Timeout.Duration; d == 0 {
		errs = append(errs, field.Required(p.Child("timeout"), ""))
	} else if d < 0 || d > 30*time.Second {
		errs = append(errs, field.Invalid(p.Child("timeout"), d.String(), "must be > 0s and <= 30s"))
	}
	for name, d := range map[string]time.Duration{"authorizedTTL": w.AuthorizedTTL.Duration, "unauthorizedTTL": w.UnauthorizedTTL.Duration} {
		if d < 0 {
			errs = append(errs, field.Invalid(p.Child(name), d.String(), "must be > 0s"))
		}
	}
	switch w.SubjectAccessReviewVersion {
	case "":
		errs = append(errs, field.Required(p.Child("subjectAccessReviewVersion"), ""))
	case "v1", "v1beta1":
	default:
		errs = append(errs, field.NotSupported(p.Child("subjectAccessReviewVersion"), w.SubjectAccessReviewVersion, []string{"v1", "v1beta1"}))
	}
	switch w.MatchConditionSubjectAccessReviewVersion {
	case "":
		if len(w.MatchConditions) > 0 {
			errs = append(errs, field.Required(p.Child("matchConditionSubjectAccessReviewVersion"), "required if match conditions are specified"))
		}
	case "v1":
	default:
		errs = append(errs, field.NotSupported(p.Child("matchConditionSubjectAccessReviewVersion"), w.MatchConditionSubjectAccessReviewVersion, []string{"v1"}))
	}
	switch w.FailurePolicy {
	case "":
		errs = append(errs, field.Required(p.Child("failurePolicy"), ""))
	case apiserverv1.FailurePolicyNoOpinion, apiserverv1.FailurePolicyDeny:
	default:
		errs = append(errs, field.NotSupported(p.Child("failurePolicy"), w.FailurePolicy, []string{"NoOpinion", "Deny"}))
	}
	ci := p.Child("connectionInfo")
	switch w.ConnectionInfo.Type {
	case "":
		errs = append(errs, field.Required(ci.Child("type"), ""))
	case apiserverv1.AuthorizationWebhookConnectionInfoTypeInCluster:
		if w.ConnectionInfo.KubeConfigFile != nil {
			errs = append(errs, field.Invalid(ci.Child("kubeConfigFile"), *w.ConnectionInfo.KubeConfigFile, "can only be set when type=KubeConfigFile"))
		}
	case apiserverv1.AuthorizationWebhookConnectionInfoTypeKubeConfigFile:
		f := w.ConnectionInfo.KubeConfigFile
		switch {
		case f == nil || *f == "":
			errs = append(errs, field.Required(ci.Child("kubeConfigFile"), ""))
		case !filepath.IsAbs(*f):
			errs = append(errs, field.Invalid(ci.Child("kubeConfigFile"), *f, "must be an absolute path"))
		default:
			if info, err := os.Stat(*f); err != nil {
				errs = append(errs, field.Invalid(ci.Child("kubeConfigFile"), *f, fmt.Sprintf("error loading file: %v", err)))
			} else if !info.Mode().IsRegular() {
				errs = append(errs, field.Invalid(ci.Child("kubeConfigFile"), *f, "must be a regular file"))
			}
		}
	default:
		errs = append(errs, field.NotSupported(ci.Child("type"), w.ConnectionInfo.Type, []string{apiserverv1.AuthorizationWebhookConnectionInfoTypeInCluster, apiserverv1.AuthorizationWebhookConnectionInfoTypeKubeConfigFile}))
	}
	var exprs []string
	for _, m := range w.MatchConditions {
		exprs = append(exprs, m.Expression)
	}
	if _, err := webhook.CompileMatchConditions(exprs); err != nil {
		errs = append(errs, field.Invalid(p.Child("matchConditions"), len(exprs), err.Error()))
	}
	return errs
}

// Legacy are the flags kube had before --authorization-config.
type Legacy struct {
	Modes                                  []string
	WebhookConfigFile, WebhookVersion      string
	WebhookAuthorizedTTL, WebhookUnauthTTL time.Duration
}

// FromLegacy is the configuration the legacy flags mean, as kube builds
// it: each mode named in lower case; the webhook "webhook", with a 30s
// timeout, failure policy NoOpinion, caching only with a TTL.
func FromLegacy(l Legacy) *apiserverv1.AuthorizationConfiguration {
	c := &apiserverv1.AuthorizationConfiguration{}
	for _, m := range l.Modes {
		a := apiserverv1.AuthorizerConfiguration{Type: m, Name: strings.ToLower(m)}
		if m == authz.ModeWebhook {
			file := l.WebhookConfigFile
			a.Name = "webhook"
			a.Webhook = &apiserverv1.WebhookConfiguration{
				AuthorizedTTL: metav1.Duration{Duration: l.WebhookAuthorizedTTL}, CacheAuthorizedRequests: ptr(l.WebhookAuthorizedTTL != 0),
				UnauthorizedTTL: metav1.Duration{Duration: l.WebhookUnauthTTL}, CacheUnauthorizedRequests: ptr(l.WebhookUnauthTTL != 0),
				Timeout: metav1.Duration{Duration: 30 * time.Second}, FailurePolicy: apiserverv1.FailurePolicyNoOpinion,
				SubjectAccessReviewVersion: l.WebhookVersion,
				ConnectionInfo: apiserverv1.WebhookConnectionInfo{
					Type: apiserverv1.AuthorizationWebhookConnectionInfoTypeKubeConfigFile, KubeConfigFile: &file,
				},
			}
		}
		c.Authorizers = append(c.Authorizers, a)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

func joinAggregate(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	if len(msgs) == 1 {
		return errs[0]
	}
	return fmt.Errorf("[%s]", strings.Join(msgs, ", "))
}
