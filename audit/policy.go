package audit

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

// policyScheme knows only audit.k8s.io/v1, the one version of Policy kube
// reads.
var policyScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := auditv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// LoadPolicy reads and checks an audit.k8s.io/v1 Policy file (YAML or
// JSON). Unknown or duplicate fields are ignored, as kube does after
// warning about them; a policy without rules is refused.
func LoadPolicy(path string) (*auditv1.Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("failed to read file path %q: %w", path, err)
	}
	p, err := decodePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("%w: from file %v", err, path)
	}
	return p, nil
}

func decodePolicy(data []byte) (*auditv1.Policy, error) {
	// No object to decode into: the file must say its apiVersion and kind.
	strict := serializer.NewCodecFactory(policyScheme, serializer.EnableStrict).UniversalDeserializer()
	obj, gvk, err := strict.Decode(data, nil, nil)
	if err != nil && runtime.IsStrictDecodingError(err) {
		lenient := serializer.NewCodecFactory(policyScheme).UniversalDeserializer()
		obj, gvk, err = lenient.Decode(data, nil, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("failed decoding: %w", err)
	}
	p, ok := obj.(*auditv1.Policy)
	if !ok {
		return nil, fmt.Errorf("unknown group version field %v in policy", gvk)
	}
	if errs := validatePolicy(p); len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	if len(p.Rules) == 0 {
		return nil, errors.New("loaded illegal policy with 0 rules")
	}
	return p, nil
}

var (
	validLevels = []string{string(auditv1.LevelNone), string(auditv1.LevelMetadata),
		string(auditv1.LevelRequest), string(auditv1.LevelRequestResponse)}
	validStages = []string{string(auditv1.StageRequestReceived), string(auditv1.StageResponseStarted),
		string(auditv1.StageResponseComplete), string(auditv1.StagePanic)}
)

// validatePolicy reports what kube's policy validation reports, with its
// field paths and messages.
func validatePolicy(p *auditv1.Policy) field.ErrorList {
	errs := validateStages(p.OmitStages, field.NewPath("omitStages"))
	for i, rule := range p.Rules {
		path := field.NewPath("rules").Index(i)
		switch {
		case rule.Level == "":
			errs = append(errs, field.Required(path.Child("level"), ""))
		case !slices.Contains(validLevels, string(rule.Level)):
			errs = append(errs, field.NotSupported(path.Child("level"), rule.Level, validLevels))
		}
		errs = append(errs, validateURLs(rule.NonResourceURLs, path.Child("nonResourceURLs"))...)
		errs = append(errs, validateResources(rule.Resources, path.Child("resources"))...)
		errs = append(errs, validateStages(rule.OmitStages, path.Child("omitStages"))...)
		if len(rule.NonResourceURLs) > 0 && (len(rule.Resources) > 0 || len(rule.Namespaces) > 0) {
			errs = append(errs, field.Invalid(path.Child("nonResourceURLs"), rule.NonResourceURLs,
				"rules cannot apply to both regular resources and non-resource URLs"))
		}
	}
	return errs
}

func validateURLs(urls []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, url := range urls {
		if url == "*" {
			continue
		}
		if !strings.HasPrefix(url, "/") {
			errs = append(errs, field.Invalid(path.Index(i), url, "non-resource URL rules must begin with a '/' character"))
		}
		if url != "" && strings.Contains(url[:len(url)-1], "*") {
			errs = append(errs, field.Invalid(path.Index(i), url, "non-resource URL wildcards '*' must be the final character of the rule"))
		}
	}
	return errs
}

func validateResources(grs []auditv1.GroupResources, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, gr := range grs {
		if gr.Group != "" && gr.Group != "*" {
			if msgs := apivalidation.NameIsDNSSubdomain(gr.Group, false); len(msgs) > 0 {
				errs = append(errs, field.Invalid(path.Child("group"), gr.Group, strings.Join(msgs, ",")))
			}
		}
		if len(gr.ResourceNames) > 0 && len(gr.Resources) == 0 {
			errs = append(errs, field.Invalid(path.Child("resourceNames"), gr.ResourceNames, "using resourceNames requires at least one resource"))
		}
	}
	return errs
}

func validateStages(stages []auditv1.Stage, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, s := range stages {
		if !slices.Contains(validStages, string(s)) {
			errs = append(errs, field.Invalid(path.Index(i), string(s), "allowed stages are "+strings.Join(validStages, ",")))
		}
	}
	return errs
}

// RequestConfig is what the policy says about one request.
type RequestConfig struct {
	Level             auditv1.Level
	OmitStages        []auditv1.Stage
	OmitManagedFields bool
}

// Policy decides the audit level of requests: the first rule that matches
// wins; a request no rule matches is not audited.
type Policy struct {
	rules    []auditv1.PolicyRule
	fallback RequestConfig
}

// NewPolicy compiles p. Each rule's omitted stages include the policy's.
func NewPolicy(p *auditv1.Policy) *Policy {
	out := &Policy{fallback: RequestConfig{Level: auditv1.LevelNone, OmitStages: p.OmitStages, OmitManagedFields: p.OmitManagedFields}}
	for _, r := range p.Rules {
		r = *r.DeepCopy()
		stages := slices.Clone(p.OmitStages)
		for _, s := range r.OmitStages {
			if !slices.Contains(stages, s) {
				stages = append(stages, s)
			}
		}
		r.OmitStages = stages
		if r.OmitManagedFields == nil {
			r.OmitManagedFields = &out.fallback.OmitManagedFields
		}
		out.rules = append(out.rules, r)
	}
	return out
}

// Evaluate returns the audit configuration of a request by user (nil when
// authentication failed) with info.
func (p *Policy) Evaluate(user *authn.User, info *request.Info) RequestConfig {
	for i := range p.rules {
		r := &p.rules[i]
		if ruleMatches(r, user, info) {
			return RequestConfig{Level: r.Level, OmitStages: r.OmitStages, OmitManagedFields: *r.OmitManagedFields}
		}
	}
	return p.fallback
}

func ruleMatches(r *auditv1.PolicyRule, user *authn.User, info *request.Info) bool {
	if len(r.Users) > 0 && (user == nil || !slices.Contains(r.Users, user.Name)) {
		return false
	}
	if len(r.UserGroups) > 0 && (user == nil || !slices.ContainsFunc(user.Groups, func(g string) bool { return slices.Contains(r.UserGroups, g) })) {
		return false
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, info.Verb) {
		return false
	}
	if len(r.Namespaces) > 0 || len(r.Resources) > 0 {
		return resourceMatches(r, info)
	}
	if len(r.NonResourceURLs) > 0 {
		return !info.IsResourceRequest && slices.ContainsFunc(r.NonResourceURLs, func(spec string) bool { return pathMatches(info.Path, spec) })
	}
	return true
}

func pathMatches(path, spec string) bool {
	if spec == "*" || spec == path {
		return true
	}
	return strings.HasSuffix(spec, "*") && strings.HasPrefix(path, strings.TrimRight(spec, "*"))
}

func resourceMatches(r *auditv1.PolicyRule, info *request.Info) bool {
	if !info.IsResourceRequest {
		return false
	}
	// Cluster-scoped resources are in the namespace "".
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, info.Namespace) {
		return false
	}
	if len(r.Resources) == 0 {
		return true
	}
	combined := info.Resource
	if info.Subresource != "" {
		combined += "/" + info.Subresource
	}
	for _, gr := range r.Resources {
		if gr.Group != info.APIGroup && gr.Group != "*" {
			continue
		}
		if len(gr.Resources) == 0 {
			return true
		}
		if len(gr.ResourceNames) > 0 && !slices.Contains(gr.ResourceNames, info.Name) {
			continue
		}
		for _, res := range gr.Resources {
			switch {
			case res == combined || res == "*":
				return true
			case info.Subresource != "" && res == "*/"+info.Subresource:
				return true
			case strings.HasSuffix(res, "/*") && info.Resource == strings.TrimSuffix(res, "/*"):
				return true
			}
		}
	}
	return false
}
