package cel

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"

	"github.com/capstan-io/capstan/apiextensions/schema"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// CompileOptions tune ValidateRules.
type CompileOptions struct {
	// Existing are the rules and message expressions of every version of
	// the CRD before an update; nil on create. They compile in the
	// StoredExpressions environment, all other expressions in the
	// NewExpressions environment.
	Existing *Expressions
	// SuppressPerExpressionCost skips the per-expression cost limit, as kube
	// does for a version whose schema the update leaves unchanged (so that a
	// change of cost estimation does not lock existing CRDs). The limit of
	// the whole schema still applies.
	SuppressPerExpressionCost bool
	// EnvSet replaces BaseEnvSet(); for tests.
	EnvSet *environment.EnvSet
	// PerCallLimit replaces PerCallLimit when not zero; for tests.
	PerCallLimit uint64
}

// supportedReasons are the values of x-kubernetes-validations[].reason,
// sorted as kube lists them.
var supportedReasons = []string{
	string(apiextv1.FieldValueDuplicate),
	string(apiextv1.FieldValueForbidden),
	string(apiextv1.FieldValueInvalid),
	string(apiextv1.FieldValueRequired),
}

// ValidateRules checks the x-kubernetes-validations of s, the structural
// openAPIV3Schema at fldPath of a CRD being created or updated, as kube's
// CRD validation does: the fields of each rule (rule, message,
// messageExpression, reason, fieldPath), then, where none of these failed
// at a node or below it, the compilation of its rules and message
// expressions, their estimated cost (per expression and for the whole
// schema), and whether oldSelf is used where old values can be correlated.
//
// Rules inside allOf, anyOf, oneOf and not have their fields checked but,
// as in kube, are not compiled here.
//
// The errors come as kube orders them: the rule field errors of the whole
// schema, then the compilation and cost errors, then the total cost.
// Call it only on a schema that passed structural validation.
func ValidateRules(s *schema.Structural, fldPath *field.Path, opts CompileOptions) field.ErrorList {
	if s == nil {
		return nil
	}
	c := &ruleChecker{opts: opts, envSet: opts.EnvSet, perCallLimit: opts.PerCallLimit}
	if c.envSet == nil {
		c.envSet = BaseEnvSet()
	}
	if c.perCallLimit == 0 {
		c.perCallLimit = PerCallLimit
	}
	c.chooser = envChooser{existing: opts.Existing}
	one := uint64(1)
	root := walkCtx{compile: true, cardinality: &one}
	root.inScope = len(s.XValidations) > 0
	if root.inScope {
		root.setDecl(SchemaDeclType(s, true))
	}
	c.walk(s, fldPath, root)

	errs := append(c.ruleErrs, c.celErrs...)
	if c.total.total > StaticEstimatedCRDCostLimit {
		for _, e := range c.total.mostExpensive {
			errs = append(errs, field.Forbidden(e.path, "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"))
		}
		errs = append(errs, field.Forbidden(fldPath, costErrorMessage("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", c.total.total, StaticEstimatedCRDCostLimit)))
	}
	return errs
}

type ruleChecker struct {
	opts         CompileOptions
	envSet       *environment.EnvSet
	perCallLimit uint64
	chooser      envChooser

	// ruleErrs are the errors of the rules' fields, celErrs those of
	// compilation and cost.
	ruleErrs, celErrs field.ErrorList
	total             totalCost
}

// walkCtx is what a node inherits from the nodes above it.
type walkCtx struct {
	// compile is false under allOf, anyOf, oneOf and not.
	compile bool
	// inScope: the node or one above has rules; only then is the CEL type
	// of a node derived.
	inScope bool
	decl    *apiservercel.DeclType
	declErr error
	// cardinality is how often the node's value may occur in one object,
	// nil when unbounded (under a list or map without maxItems or
	// maxProperties).
	cardinality *uint64
	// uncorrelatable is the highest path above the node below which old
	// values cannot be matched with new ones (oldSelf is forbidden).
	uncorrelatable *field.Path
}

func (w *walkCtx) setDecl(d *apiservercel.DeclType) {
	w.decl = d
	if d == nil {
		w.declErr = fmt.Errorf("unable to convert structural schema to CEL declarations")
	}
}

// child is the context of child, reached from parent through access (which
// finds the child's CEL type in the parent's).
func (w walkCtx) child(parent, child *schema.Structural, access func(*apiservercel.DeclType) *apiservercel.DeclType) walkCtx {
	out := walkCtx{compile: w.compile, uncorrelatable: w.uncorrelatable}
	if !w.compile {
		return out
	}
	out.inScope = w.inScope || len(child.XValidations) > 0
	if out.inScope {
		switch {
		case w.declErr != nil:
			out.declErr = w.declErr
		case w.decl != nil && access(w.decl) != nil:
			out.decl = access(w.decl)
		default:
			out.setDecl(SchemaDeclType(child, child.XEmbeddedResource))
		}
	}
	if w.cardinality != nil {
		if n := maxElements(parent); n != nil {
			c := multiplyWithOverflowGuard(*w.cardinality, *n)
			out.cardinality = &c
		}
	}
	return out
}

func (w walkCtx) forbidOldSelf(path *field.Path) walkCtx {
	if w.uncorrelatable == nil {
		w.uncorrelatable = path
	}
	return w
}

// nested is the context of an allOf, anyOf, oneOf or not schema.
func (w walkCtx) nested() walkCtx {
	return walkCtx{uncorrelatable: w.uncorrelatable}
}

func (c *ruleChecker) walk(s *schema.Structural, path *field.Path, w walkCtx) {
	before := len(c.ruleErrs)

	if s.AdditionalProperties != nil {
		elem := func(d *apiservercel.DeclType) *apiservercel.DeclType { return d.ElemType }
		c.walk(s.AdditionalProperties, path.Child("additionalProperties"), w.child(s, s.AdditionalProperties, elem))
	}
	for _, name := range sortedKeys(s.Properties) {
		prop := s.Properties[name]
		pw := w
		if !mapIsCorrelatable(s.XMapType) {
			pw = pw.forbidOldSelf(path)
		}
		propType := func(d *apiservercel.DeclType) *apiservercel.DeclType {
			if escaped, ok := apiservercel.Escape(name); ok {
				if f, ok := d.Fields[escaped]; ok {
					return f.Type
				}
			}
			return nil
		}
		c.walk(&prop, path.Child("properties").Key(name), pw.child(s, &prop, propType))
	}
	if vv := s.ValueValidation; vv != nil {
		if vv.Not != nil {
			c.walk(nestedToStructural(vv.Not), path.Child("not"), w.nested())
		}
		for i := range vv.AllOf {
			c.walk(nestedToStructural(&vv.AllOf[i]), path.Child("allOf").Index(i), w.nested())
		}
		for i := range vv.OneOf {
			c.walk(nestedToStructural(&vv.OneOf[i]), path.Child("oneOf").Index(i), w.nested())
		}
		for i := range vv.AnyOf {
			c.walk(nestedToStructural(&vv.AnyOf[i]), path.Child("anyOf").Index(i), w.nested())
		}
	}
	if s.Items != nil {
		iw := w
		// only the items of map lists correlate (set items by identity
		// would, but kube does not offer it)
		if s.XListType != "map" {
			iw = iw.forbidOldSelf(path)
		}
		elem := func(d *apiservercel.DeclType) *apiservercel.DeclType { return d.ElemType }
		c.walk(s.Items, path.Child("items"), iw.child(s, s.Items, elem))
	}

	if len(s.XValidations) == 0 {
		return
	}
	rulesPath := path.Child("x-kubernetes-validations")
	for i, rule := range s.XValidations {
		c.checkRuleFields(s, rule, rulesPath.Index(i))
	}
	// a node or a node below with errors in its rules' fields is not
	// compiled: its errors would only confuse
	if len(c.ruleErrs) > before || !w.compile {
		return
	}
	c.compileNode(s, rulesPath, w)
}

func (c *ruleChecker) checkRuleFields(s *schema.Structural, rule apiextv1.ValidationRule, path *field.Path) {
	trimmedRule := strings.TrimSpace(rule.Rule)
	trimmedMsg := strings.TrimSpace(rule.Message)
	switch {
	case trimmedRule == "":
		c.ruleErrs = append(c.ruleErrs, field.Required(path.Child("rule"), "rule is not specified"))
	case rule.Message != "" && trimmedMsg == "":
		c.ruleErrs = append(c.ruleErrs, field.Invalid(path.Child("message"), rule.Message, "must be non-empty if specified"))
	case hasLineBreaks(trimmedMsg):
		c.ruleErrs = append(c.ruleErrs, field.Invalid(path.Child("message"), rule.Message, "must not contain line breaks"))
	case hasLineBreaks(trimmedRule) && trimmedMsg == "":
		c.ruleErrs = append(c.ruleErrs, field.Required(path.Child("message"), "message must be specified if rule contains line breaks"))
	}
	if rule.MessageExpression != "" && strings.TrimSpace(rule.MessageExpression) == "" {
		c.ruleErrs = append(c.ruleErrs, field.Required(path.Child("messageExpression"), "messageExpression must be non-empty if specified"))
	}
	if rule.Reason != nil && !isSupportedReason(*rule.Reason) {
		c.ruleErrs = append(c.ruleErrs, field.NotSupported(path.Child("reason"), *rule.Reason, supportedReasons))
	}
	if rule.FieldPath != "" && strings.TrimSpace(rule.FieldPath) == "" {
		c.ruleErrs = append(c.ruleErrs, field.Invalid(path.Child("fieldPath"), rule.FieldPath, "must be non-empty if specified"))
	}
	if hasLineBreaks(rule.FieldPath) {
		c.ruleErrs = append(c.ruleErrs, field.Invalid(path.Child("fieldPath"), rule.FieldPath, "must not contain line breaks"))
	}
	if rule.FieldPath != "" {
		if _, _, err := ValidFieldPath(rule.FieldPath, s); err != nil {
			c.ruleErrs = append(c.ruleErrs, field.Invalid(path.Child("fieldPath"), rule.FieldPath, "must be a valid path"))
		}
	}
}

func (c *ruleChecker) compileNode(s *schema.Structural, rulesPath *field.Path, w walkCtx) {
	if w.declErr != nil {
		c.celErrs = append(c.celErrs, field.InternalError(rulesPath, fmt.Errorf("internal error: failed to construct type information for x-kubernetes-validations rules: %s", w.declErr)))
		return
	}
	if w.decl == nil {
		c.celErrs = append(c.celErrs, field.InternalError(rulesPath, fmt.Errorf("internal error: failed to retrieve type information for x-kubernetes-validations")))
		return
	}
	results, err := compileRules(s, s.XValidations, w.decl, c.perCallLimit, c.envSet, c.chooser)
	if err != nil {
		c.celErrs = append(c.celErrs, field.InternalError(rulesPath, err))
		return
	}
	for i, cr := range results {
		rule := s.XValidations[i]
		rulePath := rulesPath.Index(i).Child("rule")
		msgPath := rulesPath.Index(i).Child("messageExpression")

		cost := cr.maxCost
		if w.cardinality != nil {
			cost = multiplyWithOverflowGuard(cost, *w.cardinality)
		} else {
			cost = multiplyWithOverflowGuard(cost, cr.maxCardinality)
		}
		if !c.opts.SuppressPerExpressionCost && cost > StaticEstimatedCostLimit {
			c.celErrs = append(c.celErrs, field.Forbidden(rulePath, costErrorMessage("estimated rule cost", cost, StaticEstimatedCostLimit)))
		}
		c.total.observe(rulePath, cost)

		if cr.err != nil {
			if cr.err.Type == apiservercel.ErrorTypeRequired {
				c.celErrs = append(c.celErrs, field.Required(rulePath, cr.err.Detail))
			} else {
				c.celErrs = append(c.celErrs, field.Invalid(rulePath, asKubeRule(rule), cr.err.Detail))
			}
		}
		if cr.messageErr != nil {
			c.celErrs = append(c.celErrs, field.Invalid(msgPath, asKubeRule(rule), cr.messageErr.Detail))
		} else if cr.messageProgram != nil {
			// the message is computed once per failure: no cardinality
			if !c.opts.SuppressPerExpressionCost && cr.messageMaxCost > StaticEstimatedCostLimit {
				c.celErrs = append(c.celErrs, field.Forbidden(msgPath, costErrorMessage("estimated messageExpression cost", cr.messageMaxCost, StaticEstimatedCostLimit)))
			}
			c.total.observe(msgPath, cr.messageMaxCost)
		}
		if cr.usesOldSelf {
			if w.uncorrelatable != nil {
				c.celErrs = append(c.celErrs, field.Invalid(rulePath, rule.Rule, fmt.Sprintf("oldSelf cannot be used on the uncorrelatable portion of the schema within %v", w.uncorrelatable)))
			}
		} else if rule.OptionalOldSelf != nil {
			c.celErrs = append(c.celErrs, field.Invalid(rulesPath.Index(i).Child("optionalOldSelf"), *rule.OptionalOldSelf, "may not be set if oldSelf is not used in rule"))
		}
	}
}

// kubeRule has the field names of kube's internal ValidationRule and no
// JSON tags: errors quoting a rule render it as kube-apiserver does, e.g.
// {"Rule":"self.x > 0","Message":"",...}.
type kubeRule struct {
	Rule              string
	Message           string
	MessageExpression string
	Reason            *apiextv1.FieldValueErrorReason
	FieldPath         string
	OptionalOldSelf   *bool
}

func asKubeRule(r apiextv1.ValidationRule) kubeRule {
	return kubeRule{
		Rule:              r.Rule,
		Message:           r.Message,
		MessageExpression: r.MessageExpression,
		Reason:            r.Reason,
		FieldPath:         r.FieldPath,
		OptionalOldSelf:   r.OptionalOldSelf,
	}
}

func isSupportedReason(r apiextv1.FieldValueErrorReason) bool {
	for _, s := range supportedReasons {
		if string(r) == s {
			return true
		}
	}
	return false
}

// lineBreaks are the line breaks of the CEL grammar.
var lineBreaks = regexp.MustCompile(`[\n\r]+`)

func hasLineBreaks(s string) bool { return lineBreaks.MatchString(s) }

// mapIsCorrelatable says whether the entries of an object with this
// x-kubernetes-map-type can be matched with the old object's by key: for
// granular (the default) and atomic, not for types kube may add later.
func mapIsCorrelatable(mapType string) bool {
	return mapType == "" || mapType == "granular" || mapType == "atomic"
}

// maxElements is how many children a value of s has at most: one for
// structs and scalars, maxItems or maxProperties for lists and maps (nil
// when unbounded).
func maxElements(s *schema.Structural) *uint64 {
	bound := func(p *int64) *uint64 {
		if p == nil {
			return nil
		}
		n := uint64(0)
		if *p > 0 {
			n = uint64(*p)
		}
		return &n
	}
	one := uint64(1)
	switch s.Type {
	case "object":
		if s.HasAdditionalProperties() {
			if s.ValueValidation == nil {
				return nil
			}
			return bound(s.ValueValidation.MaxProperties)
		}
		return &one
	case "array":
		if s.ValueValidation == nil {
			return nil
		}
		return bound(s.ValueValidation.MaxItems)
	default:
		return &one
	}
}

func multiplyWithOverflowGuard(base, factor uint64) uint64 {
	if base == 0 {
		return 0
	}
	if math.MaxUint64/base < factor {
		return math.MaxUint64
	}
	return base * factor
}

// costErrorMessage is kube's message for an estimated cost over its limit.
func costErrorMessage(what string, cost, limit uint64) string {
	f := float64(cost) / float64(limit)
	var factor string
	switch {
	case f > 100:
		// quadratic or worse: the number says nothing more
		factor = "more than 100x"
	case f < 1.5:
		factor = fmt.Sprintf("%fx", f)
	default:
		factor = fmt.Sprintf("%.1fx", f)
	}
	return fmt.Sprintf("%s exceeds budget by factor of %s (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)", what, factor)
}

// totalCost sums the estimated costs of a schema's expressions and keeps
// the (at most four) most expensive, ignoring those below 1% of the limit.
type totalCost struct {
	total         uint64
	mostExpensive []ruleCost
}

type ruleCost struct {
	path *field.Path
	cost uint64
}

func (t *totalCost) observe(path *field.Path, cost uint64) {
	if math.MaxUint64-t.total < cost {
		t.total = math.MaxUint64
	} else {
		t.total += cost
	}
	if cost < StaticEstimatedCRDCostLimit/100 {
		return
	}
	t.mostExpensive = append(t.mostExpensive, ruleCost{path: path, cost: cost})
	sort.SliceStable(t.mostExpensive, func(i, j int) bool { return t.mostExpensive[i].cost > t.mostExpensive[j].cost })
	if len(t.mostExpensive) > 4 {
		t.mostExpensive = t.mostExpensive[:4]
	}
}

func sortedKeys(m map[string]schema.Structural) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
