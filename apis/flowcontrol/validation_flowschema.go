package flowcontrol

import (
	"fmt"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/apis/flowcontrol/bootstrap"
)

// maxMatchingPrecedence is the highest matchingPrecedence, catch-all's.
const maxMatchingPrecedence = 10000

// Values kube accepts, listed sorted as its NotSupported errors list them.
var (
	distinguisherMethods = []string{string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType)}
	subjectKinds         = []string{string(flowcontrolv1.SubjectKindGroup), string(flowcontrolv1.SubjectKindServiceAccount), string(flowcontrolv1.SubjectKindUser)}
	ruleVerbs            = []string{"create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"}
)

// namespaceIntro starts the message of an invalid namespace in a rule.
const namespaceIntro = "each member of this list must be '*' or a DNS-1123 label; "

// ValidateFlowSchema returns the errors of a flow schema beyond its
// metadata, in kube's order: the spec, the fixed spec of a mandatory
// schema, the status.
func ValidateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateFlowSchemaSpec(fs.Name, &fs.Spec, specPath)
	for _, mandatory := range bootstrap.MandatoryFlowSchemas() {
		if mandatory.Name == fs.Name && !apiequality.Semantic.DeepEqual(fs.Spec, mandatory.Spec) {
			errs = append(errs, field.Invalid(specPath, goNamed{fs.Spec}, fmt.Sprintf("spec of '%s' must equal the fixed value", fs.Name)))
		}
	}
	return append(errs, validateConditionTypes(flowSchemaConditionTypes(fs.Status.Conditions), field.NewPath("status", "conditions"))...)
}

func flowSchemaConditionTypes(cs []flowcontrolv1.FlowSchemaCondition) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, string(c.Type))
	}
	return out
}

// validateConditionTypes: every condition has a type, and no two the same.
func validateConditionTypes(types []string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, t := range types {
		if seen[t] {
			errs = append(errs, field.Duplicate(path.Index(i).Child("type"), t))
		}
		seen[t] = true
		if t == "" {
			errs = append(errs, field.Required(path.Index(i).Child("type"), ""))
		}
	}
	return errs
}

func validateFlowSchemaSpec(name string, spec *flowcontrolv1.FlowSchemaSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	precedence := path.Child("matchingPrecedence")
	if spec.MatchingPrecedence <= 0 {
		errs = append(errs, field.Invalid(precedence, spec.MatchingPrecedence, "must be a positive value"))
	}
	if spec.MatchingPrecedence > maxMatchingPrecedence {
		errs = append(errs, field.Invalid(precedence, spec.MatchingPrecedence, fmt.Sprintf("must not be greater than %d", maxMatchingPrecedence)))
	}
	if spec.MatchingPrecedence == 1 && name != flowcontrolv1.FlowSchemaNameExempt {
		errs = append(errs, field.Invalid(precedence, spec.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if dm := spec.DistinguisherMethod; dm != nil && !slices.Contains(distinguisherMethods, string(dm.Type)) {
		// kube shows the whole method as the value.
		errs = append(errs, field.NotSupported(path.Child("distinguisherMethod", "type"), goNamed{*dm}, distinguisherMethods))
	}
	levelPath := path.Child("priorityLevelConfiguration", "name")
	if level := spec.PriorityLevelConfiguration.Name; level == "" {
		errs = append(errs, field.Required(levelPath, "must reference a priority level"))
	} else {
		for _, msg := range apivalidation.NameIsDNSSubdomain(level, false) {
			errs = append(errs, field.Invalid(levelPath, level, msg))
		}
	}
	for i := range spec.Rules {
		errs = append(errs, validateRules(&spec.Rules[i], path.Child("rules").Index(i))...)
	}
	return errs
}

func validateRules(rules *flowcontrolv1.PolicyRulesWithSubjects, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(rules.Subjects) == 0 {
		errs = append(errs, field.Required(path.Child("subjects"), "subjects must contain at least one value"))
	}
	for i := range rules.Subjects {
		errs = append(errs, validateSubject(&rules.Subjects[i], path.Child("subjects").Index(i))...)
	}
	if len(rules.ResourceRules) == 0 && len(rules.NonResourceRules) == 0 {
		errs = append(errs, field.Required(path, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i := range rules.ResourceRules {
		errs = append(errs, validateResourceRule(&rules.ResourceRules[i], path.Child("resourceRules").Index(i))...)
	}
	for i := range rules.NonResourceRules {
		errs = append(errs, validateNonResourceRule(&rules.NonResourceRules[i], path.Child("nonResourceRules").Index(i))...)
	}
	return errs
}

// validateSubject: the member named by kind is required, the others
// forbidden.
func validateSubject(s *flowcontrolv1.Subject, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbidUser := func() {
		if s.User != nil {
			errs = append(errs, field.Forbidden(path.Child("user"), "user is forbidden when subject kind is not 'User'"))
		}
	}
	forbidGroup := func() {
		if s.Group != nil {
			errs = append(errs, field.Forbidden(path.Child("group"), "group is forbidden when subject kind is not 'Group'"))
		}
	}
	forbidServiceAccount := func() {
		if s.ServiceAccount != nil {
			errs = append(errs, field.Forbidden(path.Child("serviceAccount"), "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"))
		}
	}
	switch s.Kind {
	case flowcontrolv1.SubjectKindServiceAccount:
		errs = append(errs, validateServiceAccountSubject(s.ServiceAccount, path.Child("serviceAccount"))...)
		forbidUser()
		forbidGroup()
	case flowcontrolv1.SubjectKindUser:
		if s.User == nil {
			errs = append(errs, field.Required(path.Child("user"), "user is required when subject kind is 'User'"))
		} else if s.User.Name == "" {
			errs = append(errs, field.Required(path.Child("user", "name"), ""))
		}
		forbidServiceAccount()
		forbidGroup()
	case flowcontrolv1.SubjectKindGroup:
		if s.Group == nil {
			errs = append(errs, field.Required(path.Child("group"), "group is required when subject kind is 'Group'"))
		} else if s.Group.Name == "" {
			errs = append(errs, field.Required(path.Child("group", "name"), ""))
		}
		forbidServiceAccount()
		forbidUser()
	default:
		errs = append(errs, field.NotSupported(path.Child("kind"), s.Kind, subjectKinds))
	}
	return errs
}

func validateServiceAccountSubject(sa *flowcontrolv1.ServiceAccountSubject, path *field.Path) field.ErrorList {
	if sa == nil {
		return field.ErrorList{field.Required(path, "serviceAccount is required when subject kind is 'ServiceAccount'")}
	}
	var errs field.ErrorList
	switch sa.Name {
	case "":
		errs = append(errs, field.Required(path.Child("name"), ""))
	case flowcontrolv1.NameAll:
	default:
		for _, msg := range apivalidation.ValidateServiceAccountName(sa.Name, false) {
			errs = append(errs, field.Invalid(path.Child("name"), sa.Name, msg))
		}
	}
	if sa.Namespace == "" {
		return append(errs, field.Required(path.Child("namespace"), "must specify namespace for service account"))
	}
	for _, msg := range apivalidation.ValidateNamespaceName(sa.Namespace, false) {
		errs = append(errs, field.Invalid(path.Child("namespace"), sa.Namespace, msg))
	}
	return errs
}

// validateVerbs: at least one, "*" alone, or only the verbs kube knows.
func validateVerbs(verbs []string, path *field.Path) *field.Error {
	switch {
	case len(verbs) == 0:
		return field.Required(path, "verbs must contain at least one value")
	case slices.Contains(verbs, "*"):
		if len(verbs) > 1 {
			return field.Invalid(path, verbs, "if '*' is present, must not specify other verbs")
		}
	default:
		for _, v := range verbs {
			if !slices.Contains(ruleVerbs, v) {
				return field.NotSupported(path, verbs, ruleVerbs)
			}
		}
	}
	return nil
}

// validateWildcardList: at least one member, and "*" only alone.
func validateWildcardList(list []string, path *field.Path, required, others string) *field.Error {
	switch {
	case len(list) == 0:
		return field.Required(path, required)
	case len(list) > 1 && slices.Contains(list, "*"):
		return field.Invalid(path, list, "if '*' is present, must not specify other "+others)
	}
	return nil
}

func validateResourceRule(r *flowcontrolv1.ResourcePolicyRule, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, err := range []*field.Error{
		validateVerbs(r.Verbs, path.Child("verbs")),
		validateWildcardList(r.APIGroups, path.Child("apiGroups"), "resource rules must supply at least one api group", "api groups"),
		validateWildcardList(r.Resources, path.Child("resources"), "resource rules must supply at least one resource", "resources"),
	} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	nsPath := path.Child("namespaces")
	switch {
	case len(r.Namespaces) == 0:
		if !r.ClusterScope {
			errs = append(errs, field.Required(nsPath, "resource rules that are not cluster scoped must supply at least one namespace"))
		}
	case slices.Contains(r.Namespaces, "*"):
		if len(r.Namespaces) > 1 {
			errs = append(errs, field.Invalid(nsPath, r.Namespaces, "if '*' is present, must not specify other namespaces"))
		}
	default:
		for i, ns := range r.Namespaces {
			for _, msg := range apivalidation.ValidateNamespaceName(ns, false) {
				errs = append(errs, field.Invalid(nsPath.Index(i), ns, namespaceIntro+msg))
			}
		}
	}
	return errs
}

func validateNonResourceRule(r *flowcontrolv1.NonResourcePolicyRule, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if err := validateVerbs(r.Verbs, path.Child("verbs")); err != nil {
		errs = append(errs, err)
	}
	urlPath := path.Child("nonResourceURLs")
	if err := validateWildcardList(r.NonResourceURLs, urlPath, "nonResourceURLs must contain at least one value", "non-resource URLs"); err != nil {
		return append(errs, err)
	}
	if slices.Contains(r.NonResourceURLs, "*") {
		return errs
	}
	for i, u := range r.NonResourceURLs {
		if msg := nonResourceURLProblem(u); msg != "" {
			errs = append(errs, field.Invalid(urlPath.Index(i), u, msg))
		}
	}
	return errs
}

// nonResourceURLProblem says what is wrong with a non-resource URL of a
// rule: it is a path, without spaces or empty segments, with at most a
// trailing "/*" for prefix matching.
func nonResourceURLProblem(u string) string {
	switch {
	case u == "":
		return "must not be empty"
	case u == "/":
		return ""
	case !strings.HasPrefix(u, "/"):
		return "must start with slash"
	case strings.Contains(u, " "):
		return "must not contain white-space"
	case strings.Contains(u, "//"):
		return "must not contain double slash"
	}
	if n := strings.Count(u, "*"); n > 1 || (n == 1 && !strings.HasSuffix(u, "/*")) {
		return "wildcard can only do suffix matching"
	}
	return ""
}
