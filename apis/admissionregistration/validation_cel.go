package admissionregistration

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/google/cel-go/cel"
	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservercel "k8s.io/apiserver/pkg/cel"

	"github.com/capstan-io/capstan/admission/policy/expr"
)

// storedExpressions are the expressions the old object held: they compile
// in the environment of stored expressions, so that an update does not
// fail on what was accepted before.
type storedExpressions struct {
	matchConditions, validations, messages, auditValues, mutations sets.Set[string]
}

// maxMatchConditions is kube's limit per webhook or policy.
const maxMatchConditions = 64

func validateMatchConditions(conds []arv1.MatchCondition, opts options, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(conds) > maxMatchConditions {
		errs = append(errs, field.TooMany(path, len(conds), maxMatchConditions))
	}
	names := sets.New[string]()
	// Match conditions never see variables: a compiler of their own.
	c := expr.NewCompiler(false)
	for i, mc := range conds {
		p := path.Index(i)
		if e := strings.TrimSpace(mc.Expression); e == "" {
			errs = append(errs, field.Required(p.Child("expression"), ""))
		} else {
			d := expr.Decls{Params: opts.paramsInMatchConditions, Authorizer: true}
			r := c.Compile(e, d, opts.stored.matchConditions.Has(e), cel.BoolType)
			errs = appendCELError(errs, p.Child("expression"), e, r.Err)
		}
		if mc.Name == "" {
			errs = append(errs, field.Required(p.Child("name"), ""))
		} else {
			for _, msg := range validation.IsQualifiedName(mc.Name) {
				errs = append(errs, field.Invalid(p.Child("name"), mc.Name, msg))
			}
			if names.Has(mc.Name) {
				errs = append(errs, field.Duplicate(p.Child("name"), mc.Name))
			}
			names.Insert(mc.Name)
		}
	}
	return errs
}

// appendCELError adds a compile error as kube reports it.
func appendCELError(errs field.ErrorList, path *field.Path, expression string, err *apiservercel.Error) field.ErrorList {
	if err == nil {
		return errs
	}
	switch err.Type {
	case apiservercel.ErrorTypeRequired:
		return append(errs, field.Required(path, err.Detail))
	case apiservercel.ErrorTypeInvalid:
		return append(errs, field.Invalid(path, expression, err.Detail))
	case apiservercel.ErrorTypeInternal:
		return append(errs, field.InternalError(path, err))
	}
	return append(errs, field.InternalError(path, fmt.Errorf("unsupported error type: %w", err)))
}

var (
	celIdentifier = regexp.MustCompile(`^[_a-zA-Z][_a-zA-Z0-9]*$`)
	celReserved   = sets.New("true", "false", "null", "in", "as", "break", "const", "continue", "else",
		"for", "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while")
)

func validateVariables(c *expr.Compiler, vars []arv1.Variable, params bool, opts options, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, v := range vars {
		p := path.Index(i)
		if strings.TrimSpace(v.Name) == "" {
			errs = append(errs, field.Required(p.Child("name"), "name is not specified"))
		} else if !celIdentifier.MatchString(v.Name) || celReserved.Has(v.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), v.Name, "must be a valid CEL identifier"))
		}
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, field.Required(p.Child("expression"), "expression is not specified"))
			continue
		}
		r := c.AddVariable(v.Name, v.Expression, expr.Decls{Params: params, Authorizer: true}, opts.stored.validations.Has(v.Expression))
		errs = appendCELError(errs, p.Child("expression"), v.Expression, r.Err)
	}
	return errs
}

var newlines = regexp.MustCompile(`[\n\r]+`)

func validateValidation(c *expr.Compiler, v *arv1.Validation, params bool, opts options, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if strings.TrimSpace(v.Expression) == "" {
		errs = append(errs, field.Required(path.Child("expression"), "expression is not specified"))
	} else {
		r := c.Compile(v.Expression, expr.Decls{Params: params, Authorizer: true}, opts.stored.validations.Has(v.Expression), cel.BoolType)
		errs = appendCELError(errs, path.Child("expression"), v.Expression, r.Err)
	}
	if v.MessageExpression != "" && strings.TrimSpace(v.MessageExpression) == "" {
		errs = append(errs, field.Invalid(path.Child("messageExpression"), v.MessageExpression, "must be non-empty if specified"))
	} else if v.MessageExpression != "" {
		// Message expressions see params only where match conditions do,
		// and never the authorizer, as in kube.
		d := expr.Decls{Params: opts.paramsInMatchConditions}
		r := c.Compile(v.MessageExpression, d, opts.stored.messages.Has(v.MessageExpression), cel.StringType)
		errs = appendCELError(errs, path.Child("messageExpression"), v.MessageExpression, r.Err)
	}
	msg := strings.TrimSpace(v.Message)
	if v.Message != "" && msg == "" {
		errs = append(errs, field.Invalid(path.Child("message"), v.Message, "must be non-empty if specified"))
	} else if newlines.MatchString(msg) {
		errs = append(errs, field.Invalid(path.Child("message"), v.Message, "must not contain line breaks"))
	}
	if v.Reason != nil && !containsString(policyReasons, string(*v.Reason)) {
		errs = append(errs, notSupported(path.Child("reason"), *v.Reason, policyReasons))
	}
	return errs
}

// maxAuditAnnotationValueExpressionLength is kube's: below the 10 KiB of
// an annotation's value, since concatenations grow.
const (
	maxAuditAnnotations                     = 20
	maxAuditAnnotationValueExpressionLength = 5 * 1024
)

func validateAuditAnnotation(c *expr.Compiler, policy string, a *arv1.AuditAnnotation, params bool, opts options, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if policy == "" {
		errs = append(errs, field.Invalid(path.Child("key"), a.Key, "requires metadata.name be non-empty"))
	} else {
		for _, msg := range validation.IsQualifiedName(policy + "/" + a.Key) {
			errs = append(errs, field.Invalid(path.Child("key"), policy+"/"+a.Key, msg))
		}
	}
	ve := path.Child("valueExpression")
	switch e := strings.TrimSpace(a.ValueExpression); {
	case e == "":
		errs = append(errs, field.Required(ve, "valueExpression is not specified"))
	case len(e) > maxAuditAnnotationValueExpressionLength:
		errs = append(errs, field.Required(ve, fmt.Sprintf("must not exceed %d bytes in length", maxAuditAnnotationValueExpressionLength)))
	default:
		r := c.Compile(e, expr.Decls{Params: params, Authorizer: true}, opts.stored.auditValues.Has(a.ValueExpression), cel.StringType, cel.NullType)
		errs = appendCELError(errs, ve, a.ValueExpression, r.Err)
	}
	return errs
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
