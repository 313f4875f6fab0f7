package admissionregistration

import (
	"fmt"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/util/jsonpath"

	"github.com/capstan-io/capstan/admission/policy/expr"
)

// ValidateValidatingAdmissionPolicy validates a policy's spec; old is nil on
// create.
func ValidateValidatingAdmissionPolicy(p, old *arv1.ValidatingAdmissionPolicy) field.ErrorList {
	var opts options
	if old != nil {
		opts.ignoreMatchConditions = equality.Semantic.DeepEqual(p.Spec.ParamKind, old.Spec.ParamKind) &&
			equality.Semantic.DeepEqual(p.Spec.MatchConditions, old.Spec.MatchConditions)
		opts.stored = storedOfValidating(old)
	}
	spec, path := &p.Spec, field.NewPath("spec")
	errs := validatePolicyCommon(spec.FailurePolicy, spec.ParamKind, spec.MatchConstraints, &opts, path)
	if !opts.ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(spec.MatchConditions, opts, path.Child("matchConditions"))...)
	}
	params := spec.ParamKind != nil
	c := expr.NewCompiler(len(spec.Variables) > 0)
	errs = append(errs, validateVariables(c, spec.Variables, params, opts, path.Child("variables"))...)
	if len(spec.Validations) == 0 && len(spec.AuditAnnotations) == 0 {
		const msg = "validations or auditAnnotations must contain at least one item"
		return append(errs, field.Required(path.Child("validations"), msg), field.Required(path.Child("auditAnnotations"), msg))
	}
	for i := range spec.Validations {
		errs = append(errs, validateValidation(c, &spec.Validations[i], params, opts, path.Child("validations").Index(i))...)
	}
	annotations := path.Child("auditAnnotations")
	if len(spec.AuditAnnotations) > maxAuditAnnotations {
		errs = append(errs, field.Invalid(annotations, spec.AuditAnnotations, fmt.Sprintf("must not have more than %d auditAnnotations", maxAuditAnnotations)))
	}
	keys := sets.New[string]()
	for i := range spec.AuditAnnotations {
		a := &spec.AuditAnnotations[i]
		errs = append(errs, validateAuditAnnotation(c, p.Name, a, params, opts, annotations.Index(i))...)
		if keys.Has(a.Key) {
			errs = append(errs, field.Duplicate(annotations.Index(i).Child("key"), a.Key))
		}
		keys.Insert(a.Key)
	}
	return errs
}

// validatePolicyCommon checks what both kinds of policy have: failure
// policy, paramKind (which lets match conditions see params) and match
// constraints, which need at least one resource rule for type information.
func validatePolicyCommon(fp *arv1.FailurePolicyType, pk *arv1.ParamKind, mc *arv1.MatchResources, opts *options, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if fp == nil {
		errs = append(errs, field.Required(path.Child("failurePolicy"), ""))
	} else if !slices.Contains(failurePolicies, string(*fp)) {
		errs = append(errs, notSupported(path.Child("failurePolicy"), *fp, failurePolicies))
	}
	if pk != nil {
		opts.paramsInMatchConditions = true
		errs = append(errs, validateParamKind(pk, path.Child("paramKind"))...)
	}
	if mc == nil {
		return append(errs, field.Required(path.Child("matchConstraints"), ""))
	}
	errs = append(errs, validateMatchResources(mc, path.Child("matchConstraints"))...)
	if len(mc.ResourceRules) == 0 {
		errs = append(errs, field.Required(path.Child("matchConstraints", "resourceRules"), ""))
	}
	return errs
}

func storedOfValidating(p *arv1.ValidatingAdmissionPolicy) storedExpressions {
	s := storedExpressions{matchConditions: sets.New[string](), validations: sets.New[string](),
		messages: sets.New[string](), auditValues: sets.New[string](), mutations: sets.New[string]()}
	for _, mc := range p.Spec.MatchConditions {
		s.matchConditions.Insert(mc.Expression)
	}
	for _, v := range p.Spec.Validations {
		s.validations.Insert(v.Expression)
		if v.MessageExpression != "" {
			s.messages.Insert(v.MessageExpression)
		}
	}
	for _, a := range p.Spec.AuditAnnotations {
		s.auditValues.Insert(a.ValueExpression)
	}
	return s
}

// ValidateValidatingAdmissionPolicyStatus validates a status write.
func ValidateValidatingAdmissionPolicyStatus(p *arv1.ValidatingAdmissionPolicy) field.ErrorList {
	path := field.NewPath("status")
	var errs field.ErrorList
	if tc := p.Status.TypeChecking; tc != nil {
		for i, w := range tc.ExpressionWarnings {
			wp := path.Child("typeChecking", "expressionWarnings").Index(i)
			if w.Warning == "" {
				errs = append(errs, field.Required(wp.Child("warning"), ""))
			}
			errs = append(errs, validateFieldRef(w.FieldRef, wp.Child("fieldRef"))...)
		}
	}
	return append(errs, metav1validation.ValidateConditions(p.Status.Conditions, path.Child("conditions"))...)
}

func validateFieldRef(ref string, path *field.Path) field.ErrorList {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return field.ErrorList{field.Required(path, "")}
	}
	if err := jsonpath.New("spec").Parse("{" + ref + "}"); err != nil {
		return field.ErrorList{field.Invalid(path, ref, fmt.Sprintf("invalid JSONPath: %v", err))}
	}
	return nil
}

// ValidateValidatingAdmissionPolicyBinding validates a binding's spec.
func ValidateValidatingAdmissionPolicyBinding(b *arv1.ValidatingAdmissionPolicyBinding) field.ErrorList {
	path := field.NewPath("spec")
	errs := validatePolicyName(b.Spec.PolicyName, path.Child("policyName"))
	errs = append(errs, validateParamRef(b.Spec.ParamRef, path.Child("paramRef"))...)
	errs = append(errs, validateMatchResources(b.Spec.MatchResources, path.Child("matchResources"))...)
	return append(errs, validateValidationActions(b.Spec.ValidationActions, path.Child("validationActions"))...)
}

// The types mutations must evaluate to, kube's.
var (
	applyConfigurationType = types.NewObjectType("Object")
	jsonPatchListType      = cel.ListType(types.NewObjectType("JSONPatch"))
)

// ValidateMutatingAdmissionPolicy validates a policy's spec; old is nil on
// create.
func ValidateMutatingAdmissionPolicy(p, old *arv1.MutatingAdmissionPolicy) field.ErrorList {
	var opts options
	if old != nil {
		opts.ignoreMatchConditions = equality.Semantic.DeepEqual(p.Spec.ParamKind, old.Spec.ParamKind) &&
			equality.Semantic.DeepEqual(p.Spec.MatchConditions, old.Spec.MatchConditions)
		opts.stored = storedOfMutating(old)
	}
	spec, path := &p.Spec, field.NewPath("spec")
	errs := validatePolicyCommon(spec.FailurePolicy, spec.ParamKind, spec.MatchConstraints, &opts, path)
	if mc := spec.MatchConstraints; mc != nil {
		errs = append(errs, mutatingOperationsOnly(mc.ResourceRules, path.Child("matchConstraints", "resourceRules", "operations"))...)
	}
	if !opts.ignoreMatchConditions {
		errs = append(errs, validateMatchConditions(spec.MatchConditions, opts, path.Child("matchConditions"))...)
	}
	params := spec.ParamKind != nil
	c := expr.NewCompiler(true)
	errs = append(errs, validateVariables(c, spec.Variables, params, opts, path.Child("variables"))...)
	if len(spec.Mutations) == 0 {
		errs = append(errs, field.Required(path.Child("mutations"), "mutations must contain at least one item"))
	}
	for i := range spec.Mutations {
		errs = append(errs, validateMutation(c, &spec.Mutations[i], params, opts, path.Child("mutations").Index(i))...)
	}
	if spec.ReinvocationPolicy == "" {
		errs = append(errs, field.Required(path.Child("reinvocationPolicy"), ""))
	} else if !slices.Contains(reinvocationPolicies, string(spec.ReinvocationPolicy)) {
		errs = append(errs, notSupported(path.Child("reinvocationPolicy"), spec.ReinvocationPolicy, reinvocationPolicies))
	}
	return errs
}

func mutatingOperationsOnly(rules []arv1.NamedRuleWithOperations, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, r := range rules {
		for _, op := range r.Operations {
			if !slices.Contains(mutatingOperations, string(op)) {
				errs = append(errs, notSupported(path, op, mutatingOperations))
			}
		}
	}
	return errs
}

func storedOfMutating(p *arv1.MutatingAdmissionPolicy) storedExpressions {
	s := storedExpressions{matchConditions: sets.New[string](), validations: sets.New[string](), mutations: sets.New[string]()}
	for _, mc := range p.Spec.MatchConditions {
		s.matchConditions.Insert(mc.Expression)
	}
	for _, m := range p.Spec.Mutations {
		if m.ApplyConfiguration != nil {
			s.mutations.Insert(m.ApplyConfiguration.Expression)
		}
		if m.JSONPatch != nil {
			s.mutations.Insert(m.JSONPatch.Expression)
		}
	}
	return s
}

func validateMutation(c *expr.Compiler, m *arv1.Mutation, params bool, opts options, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	compile := func(e string, want *cel.Type, p *field.Path) {
		if t := strings.TrimSpace(e); t == "" {
			errs = append(errs, field.Required(p, ""))
		} else {
			d := expr.Decls{Params: params, Authorizer: true, PatchTypes: true}
			errs = appendCELError(errs, p, t, c.Compile(t, d, opts.stored.mutations.Has(e), want).Err)
		}
	}
	switch m.PatchType {
	case "":
		errs = append(errs, field.Required(path.Child("patchType"), ""))
	case arv1.PatchTypeJSONPatch:
		if m.JSONPatch == nil {
			errs = append(errs, field.Required(path.Child("jsonPatch"), "must be specified when patchType is JSONPatch"))
		} else {
			compile(m.JSONPatch.Expression, jsonPatchListType, path.Child("jsonPatch", "expression"))
		}
		if m.ApplyConfiguration != nil {
			errs = append(errs, field.Invalid(path.Child("applyConfiguration"), "{applyConfiguration}", "must not be specified when patchType is JSONPatch"))
		}
	case arv1.PatchTypeApplyConfiguration:
		if m.ApplyConfiguration == nil {
			errs = append(errs, field.Required(path.Child("applyConfiguration"), "must be specified when patchType is ApplyConfiguration"))
		} else {
			compile(m.ApplyConfiguration.Expression, applyConfigurationType, path.Child("applyConfiguration", "expression"))
		}
		if m.JSONPatch != nil {
			errs = append(errs, field.Invalid(path.Child("jsonPatch"), "{jsonPatch}", "must not be specified when patchType is ApplyConfiguration"))
		}
	default:
		errs = append(errs, notSupported(path.Child("patchType"), m.PatchType, patchTypes))
	}
	return errs
}

// ValidateMutatingAdmissionPolicyBinding validates a binding's spec.
func ValidateMutatingAdmissionPolicyBinding(b *arv1.MutatingAdmissionPolicyBinding) field.ErrorList {
	path := field.NewPath("spec")
	errs := validatePolicyName(b.Spec.PolicyName, path.Child("policyName"))
	errs = append(errs, validateParamRef(b.Spec.ParamRef, path.Child("paramRef"))...)
	errs = append(errs, validateMatchResources(b.Spec.MatchResources, path.Child("matchResources"))...)
	if mr := b.Spec.MatchResources; mr != nil {
		errs = append(errs, mutatingOperationsOnly(mr.ResourceRules, path.Child("matchResources", "resourceRules", "operations"))...)
	}
	return errs
}
