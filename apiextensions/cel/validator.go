package cel

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"

	"github.com/capstan-io/capstan/apiextensions/schema"
	"github.com/capstan-io/capstan/metrics"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Validator evaluates the x-kubernetes-validations rules of one structural
// schema (one version of a CRD, or an embedded resource) on objects.
//
// Building it is cheap: the tree of rules and the CEL types are derived on
// the first Validate, and each node's rules are compiled the first time a
// value reaches that node, then kept. Keep one Validator per CRD version and
// share it; it is safe for concurrent use.
type Validator struct {
	schema         *schema.Structural
	isResourceRoot bool
	perCallLimit   uint64

	once sync.Once
	root *ruleNode
}

// NewValidator returns the validator of the rules of s, nil when s has none
// (Validate on a nil Validator does nothing). isResourceRoot is true for the
// schema of a whole custom resource: self.apiVersion, self.kind and
// self.metadata.name/generateName are visible to its root rules.
// perCallLimit bounds the cost of one evaluation of one expression; use
// PerCallLimit.
//
// As in kube, rules that sit only inside allOf (with none elsewhere) are
// not run.
func NewValidator(s *schema.Structural, isResourceRoot bool, perCallLimit uint64) *Validator {
	if !hasRules(s) {
		return nil
	}
	return &Validator{schema: s, isResourceRoot: isResourceRoot, perCallLimit: perCallLimit}
}

func hasRules(s *schema.Structural) bool {
	if s == nil {
		return false
	}
	if len(s.XValidations) > 0 || hasRules(s.Items) || hasRules(s.AdditionalProperties) {
		return true
	}
	for k := range s.Properties {
		p := s.Properties[k]
		if hasRules(&p) {
			return true
		}
	}
	return false
}

// ruleNode holds the rules of one schema node and the nodes below that
// have rules.
type ruleNode struct {
	// node is the schema of the values; rules may come from an allOf item of
	// it instead of the node itself.
	node           *schema.Structural
	rules          apiextv1.ValidationRules
	declType       *apiservercel.DeclType
	isResourceRoot bool
	perCallLimit   uint64

	// activationSchema reads values for the rules: the node, as a resource
	// root when it is one.
	activationSchema *Schema
	// listSchema correlates old list items by their map keys.
	listSchema *Schema

	compileOnce sync.Once
	compiled    []compiledRule
	compileErr  error
	usesOldSelf bool

	items      *ruleNode
	properties map[string]*ruleNode
	additional *ruleNode
	allOf      []*ruleNode
}

// newRuleNode mirrors the schema below node, keeping only the parts with
// rules. rules is the schema the rules are read from: node itself, or an
// allOf item of it.
func newRuleNode(rules, node *schema.Structural, isResourceRoot bool, declType *apiservercel.DeclType, perCallLimit uint64) *ruleNode {
	n := &ruleNode{
		node:           node,
		rules:          rules.XValidations,
		declType:       declType,
		isResourceRoot: isResourceRoot,
		perCallLimit:   perCallLimit,
	}
	var elemType *apiservercel.DeclType
	if declType != nil {
		elemType = declType.ElemType
	}
	if rules.Items != nil && node.Items != nil {
		n.items = newRuleNode(rules.Items, node.Items, node.Items.XEmbeddedResource, elemType, perCallLimit)
	}
	for name := range rules.Properties {
		rprop := rules.Properties[name]
		nprop, ok := node.Properties[name]
		if !ok {
			// rules only apply to the declared shape
			continue
		}
		var propType *apiservercel.DeclType
		if escaped, ok := apiservercel.Escape(name); ok {
			if declType == nil {
				continue
			}
			f, ok := declType.Fields[escaped]
			if !ok {
				// a field without CEL type is not validated at all
				continue
			}
			propType = f.Type
		} else {
			// names CEL cannot spell are not fields of the parent type, but
			// their values have types of their own
			propType = SchemaDeclType(&nprop, nprop.XEmbeddedResource)
			if propType == nil {
				continue
			}
		}
		if p := newRuleNode(&rprop, &nprop, nprop.XEmbeddedResource, propType, perCallLimit); p != nil {
			if n.properties == nil {
				n.properties = map[string]*ruleNode{}
			}
			n.properties[name] = p
		}
	}
	if rules.AdditionalProperties != nil && node.AdditionalProperties != nil {
		n.additional = newRuleNode(rules.AdditionalProperties, node.AdditionalProperties, node.AdditionalProperties.XEmbeddedResource, elemType, perCallLimit)
	}
	if vv := rules.ValueValidation; vv != nil {
		for i := range vv.AllOf {
			if a := newRuleNode(nestedToStructural(&vv.AllOf[i]), node, isResourceRoot, declType, perCallLimit); a != nil {
				n.allOf = append(n.allOf, a)
			}
		}
	}
	if len(n.rules) == 0 && n.items == nil && n.additional == nil && len(n.properties) == 0 && len(n.allOf) == 0 {
		return nil
	}
	n.activationSchema = NewSchema(node)
	n.listSchema = n.activationSchema
	if isResourceRoot {
		n.activationSchema = n.activationSchema.withTypeAndObjectMeta()
	}
	return n
}

// compile compiles the node's rules, once, in the StoredExpressions
// environment: they were accepted when the CRD was written.
func (n *ruleNode) compile() {
	n.compileOnce.Do(func() {
		if len(n.rules) == 0 {
			return
		}
		s := *n.node
		s.XValidations = n.rules
		n.compiled, n.compileErr = compileRules(&s, n.rules, n.declType, n.perCallLimit, BaseEnvSet(), envChooser{stored: true})
		for _, c := range n.compiled {
			if c.usesOldSelf {
				n.usesOldSelf = true
			}
		}
	})
}

// Option tunes one Validate call.
type Option func(*options)

type options struct {
	ratchet ratchet
	warn    func(string)
}

// WithRatcheting turns on kube's validation ratcheting: a rule that does
// not use oldSelf and fails on a value equal to its old value (or, where the
// value cannot be matched with an old one, inside an unchanged ancestor)
// does not fail the write; its error is passed to warn (which may be nil)
// instead. correlation is NewCorrelatedObject of the new and old object.
func WithRatcheting(correlation *common.CorrelatedObject, warn func(string)) Option {
	return func(o *options) {
		o.ratchet = ratchet{current: correlation}
		o.warn = warn
	}
}

// NewCorrelatedObject pairs obj with old, its previous version, for
// WithRatcheting (and for ratcheting of the other schema validations).
func NewCorrelatedObject(obj, old any, s *schema.Structural) *common.CorrelatedObject {
	return common.NewCorrelatedObject(obj, old, NewSchema(s))
}

// Validate evaluates every rule on every value of obj (the object, at
// fldPath; oldObj is its previous version on update, else nil) and returns
// the failures and what is left of costBudget. Transition rules (using
// oldSelf) run only where an old value correlates: same property, same map
// key, same map-list keys; not in atomic lists or sets. Once the budget runs
// out, an error says so, no further rule runs and the remaining budget is
// negative.
func (v *Validator) Validate(ctx context.Context, fldPath *field.Path, obj, oldObj any, costBudget int64, opts ...Option) (field.ErrorList, int64) {
	if v == nil {
		return nil, costBudget
	}
	defer metrics.CELEvaluation(time.Now())
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	v.once.Do(func() {
		v.root = newRuleNode(v.schema, v.schema, v.isResourceRoot, SchemaDeclType(v.schema, v.isResourceRoot), v.perCallLimit)
	})
	e := evaluation{ctx: ctx, warn: o.warn}
	return e.validate(v.root, fldPath, obj, oldObj, o.ratchet, costBudget)
}

type evaluation struct {
	ctx  context.Context
	warn func(string)
}

// ratchet follows the correlation of new and old values down the tree.
// current is nil where values do not correlate; parent is then the nearest
// correlated ancestor.
type ratchet struct {
	current, parent *common.CorrelatedObject
}

// ratchets says whether errors of rules without oldSelf at this node are
// warnings: the value (or its nearest correlated ancestor) is unchanged.
func (r ratchet) ratchets() bool {
	if r.current != nil {
		return r.current.CachedDeepEqual()
	}
	return r.parent.CachedDeepEqual()
}

func (r ratchet) key(name string) ratchet {
	if r.current == nil {
		return r
	}
	if r.parent == nil && (name == "apiVersion" || name == "kind") {
		// both versions were converted to the same apiVersion and kind:
		// their changes cannot be seen, so never ratchet them
		return ratchet{}
	}
	return ratchet{current: r.current.Key(name), parent: r.current}
}

func (r ratchet) index(i int) ratchet {
	if r.current == nil {
		return r
	}
	return ratchet{current: r.current.Index(i), parent: r.current}
}

func (e evaluation) validate(n *ruleNode, fldPath *field.Path, obj, oldObj any, r ratchet, budget int64) (field.ErrorList, int64) {
	if n == nil || obj == nil {
		return nil, budget
	}
	errs, budget := e.validateRules(n, fldPath, obj, oldObj, r, budget)
	if budget < 0 {
		return errs, budget
	}
	for _, a := range n.allOf {
		// allOf errors never ratchet on their own node, as with the other
		// allOf validations
		var aerrs field.ErrorList
		aerrs, budget = e.validate(a, fldPath, obj, oldObj, ratchet{parent: r.parent}, budget)
		errs = append(errs, aerrs...)
		if budget < 0 {
			return errs, budget
		}
	}
	switch obj := obj.(type) {
	case []any:
		old, _ := oldObj.([]any)
		var lerrs field.ErrorList
		lerrs, budget = e.validateList(n, fldPath, obj, old, r, budget)
		errs = append(errs, lerrs...)
	case map[string]any:
		old, _ := oldObj.(map[string]any)
		var merrs field.ErrorList
		merrs, budget = e.validateMap(n, fldPath, obj, old, r, budget)
		errs = append(errs, merrs...)
	}
	return errs, budget
}

func (e evaluation) validateMap(n *ruleNode, fldPath *field.Path, obj, old map[string]any, r ratchet, budget int64) (field.ErrorList, int64) {
	if budget < 0 || obj == nil {
		return nil, budget
	}
	var errs field.ErrorList
	correlatable := mapIsCorrelatable(n.node.XMapType)
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	oldValue := func(k string) any {
		if correlatable && old != nil {
			return old[k]
		}
		return nil
	}
	if n.additional != nil {
		for _, k := range keys {
			var kerrs field.ErrorList
			kerrs, budget = e.validate(n.additional, fldPath.Key(k), obj[k], oldValue(k), r.key(k), budget)
			errs = append(errs, kerrs...)
			if budget < 0 {
				return errs, budget
			}
		}
	}
	if n.properties != nil {
		for _, k := range keys {
			p, ok := n.properties[k]
			if !ok {
				continue
			}
			var perrs field.ErrorList
			perrs, budget = e.validate(p, fldPath.Child(k), obj[k], oldValue(k), r.key(k), budget)
			errs = append(errs, perrs...)
			if budget < 0 {
				return errs, budget
			}
		}
	}
	return errs, budget
}

func (e evaluation) validateList(n *ruleNode, fldPath *field.Path, obj, old []any, r ratchet, budget int64) (field.ErrorList, int64) {
	if budget < 0 || n.items == nil {
		return nil, budget
	}
	var errs field.ErrorList
	// only the items of map lists correlate, by their keys; MakeMapList of
	// any other list finds nothing
	oldItems := common.MakeMapList(n.listSchema, old)
	for i := range obj {
		var ierrs field.ErrorList
		ierrs, budget = e.validate(n.items, fldPath.Index(i), obj[i], oldItems.Get(obj[i]), r.index(i), budget)
		errs = append(errs, ierrs...)
		if budget < 0 {
			return errs, budget
		}
	}
	return errs, budget
}

const costLimitExceeded = "operation cancelled: actual cost limit exceeded"

func (e evaluation) validateRules(n *ruleNode, fldPath *field.Path, obj, oldObj any, r ratchet, budget int64) (field.ErrorList, int64) {
	if isNil(oldObj) {
		oldObj = nil
	}
	// null values are not validated: rules about nulls or absent fields
	// belong to the enclosing object
	if obj == nil {
		return nil, budget
	}
	n.compile()
	typ := n.node.Type
	var errs field.ErrorList
	if n.compileErr != nil {
		return append(errs, field.Invalid(fldPath, typ, fmt.Sprintf("rule compiler initialization error: %v", n.compileErr))), budget
	}
	if len(n.compiled) == 0 {
		return nil, budget
	}
	if budget <= 0 {
		return append(errs, field.Invalid(fldPath, typ, "validation failed due to running out of cost budget, no further validation rules will be run")), -1
	}
	act, optAct := n.activations(obj, oldObj)
	for i, c := range n.compiled {
		rule := n.rules[i]
		if c.err != nil {
			errs = append(errs, field.Invalid(fldPath, typ, fmt.Sprintf("rule compile error: %v", c.err)))
			continue
		}
		if c.program == nil {
			continue // empty rule
		}
		optionalOldSelf := rule.OptionalOldSelf != nil && *rule.OptionalOldSelf
		if c.usesOldSelf && oldObj == nil && !optionalOldSelf {
			// a transition rule needs an old value
			continue
		}
		ruleAct := act
		if optionalOldSelf {
			ruleAct = optAct
		}
		result, details, err := c.program.ContextEval(e.ctx, ruleAct)
		if details == nil {
			return append(errs, field.InternalError(fldPath, fmt.Errorf("runtime cost could not be calculated for validation rule: %v, no further validation rules will be run", ruleErrorString(rule)))), -1
		}
		cost := details.ActualCost()
		if cost == nil {
			return append(errs, field.Invalid(fldPath, typ, fmt.Sprintf("runtime cost could not be calculated for validation rule: %v, no further validation rules will be run", ruleErrorString(rule)))), -1
		}
		if *cost > math.MaxInt64 || int64(*cost) > budget {
			return append(errs, field.Invalid(fldPath, typ, "validation failed due to running out of cost budget, no further validation rules will be run")), -1
		}
		budget -= int64(*cost)
		if err != nil {
			fe, stop := evalError(err, fldPath, typ, rule)
			errs = append(errs, fe)
			if stop {
				return errs, -1
			}
			continue
		}
		if result == types.True {
			continue
		}
		var failed field.ErrorList
		failed, budget = e.ruleFailed(c, rule, fldPath, typ, obj, act, r, budget)
		errs = append(errs, failed...)
		if budget < 0 {
			return errs, -1
		}
	}
	return errs, budget
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map, reflect.Pointer, reflect.Interface, reflect.Slice:
		return rv.IsNil()
	}
	return false
}

// activations are the variables of the node's rules: self, and oldSelf when
// a rule uses it (plain, and as an optional for optionalOldSelf rules).
func (n *ruleNode) activations(obj, oldObj any) (interpreter.Activation, interpreter.Activation) {
	self := common.UnstructuredToVal(obj, n.activationSchema)
	if !n.usesOldSelf {
		a := &activation{self: self}
		return a, a
	}
	plain := &activation{self: self}
	optional := &activation{self: self, hasOldSelf: true, oldSelf: types.OptionalNone}
	if oldObj != nil {
		old := common.UnstructuredToVal(oldObj, n.activationSchema)
		plain.oldSelf, plain.hasOldSelf = old, true
		optional.oldSelf = types.OptionalOf(old)
	}
	return plain, optional
}

type activation struct {
	self, oldSelf ref.Val
	hasOldSelf    bool
}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case ScopedVarName:
		return a.self, true
	case OldScopedVarName:
		return a.oldSelf, a.hasOldSelf
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

// evalMessageExpression computes a failure message. Errors of type Internal
// or Invalid end the validation; others only mean the message falls back
// to the rule's message.
func evalMessageExpression(ctx context.Context, prog celgo.Program, src string, act interpreter.Activation, budget int64) (string, int64, *apiservercel.Error) {
	result, details, err := prog.ContextEval(ctx, act)
	if details == nil || details.ActualCost() == nil {
		return "", -1, &apiservercel.Error{
			Type:   apiservercel.ErrorTypeInternal,
			Detail: fmt.Sprintf("runtime cost could not be calculated for messageExpression: %q", src),
		}
	}
	cost := *details.ActualCost()
	if cost > math.MaxInt64 || int64(cost) > budget {
		return "", -1, &apiservercel.Error{
			Type:   apiservercel.ErrorTypeInvalid,
			Detail: "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run",
		}
	}
	left := budget - int64(cost)
	if err != nil {
		if strings.HasPrefix(err.Error(), costLimitExceeded) {
			return "", -1, &apiservercel.Error{
				Type:   apiservercel.ErrorTypeInvalid,
				Detail: fmt.Sprintf("no further validation rules will be run due to call cost exceeds limit for messageExpression: %q", src),
			}
		}
		return "", left, &apiservercel.Error{Detail: fmt.Sprintf("messageExpression evaluation failed due to: %v", err.Error())}
	}
	msg, ok := result.Value().(string)
	if !ok {
		return "", left, &apiservercel.Error{Detail: "messageExpression failed to convert to string"}
	}
	msg = strings.TrimSpace(msg)
	switch {
	case len(msg) > celconfig.MaxEvaluatedMessageExpressionSizeBytes:
		return "", left, &apiservercel.Error{Detail: fmt.Sprintf("messageExpression beyond allowable length of %d", celconfig.MaxEvaluatedMessageExpressionSizeBytes)}
	case strings.Contains(msg, "\n"):
		return "", left, &apiservercel.Error{Detail: "messageExpression should not contain line breaks"}
	case msg == "":
		return "", left, &apiservercel.Error{Detail: "messageExpression should evaluate to a non-empty string"}
	}
	return msg, left, nil
}

func ruleMessageOrDefault(r apiextv1.ValidationRule) string {
	if r.Message == "" {
		return "failed rule: " + ruleErrorString(r)
	}
	return strings.TrimSpace(r.Message)
}

// ruleErrorString names a rule in errors: its message, or its expression.
func ruleErrorString(r apiextv1.ValidationRule) string {
	if r.Message != "" {
		return strings.TrimSpace(r.Message)
	}
	return strings.TrimSpace(r.Rule)
}

// fieldErrorForReason makes the error of a failed rule of the rule's reason
// (Invalid by default).
func fieldErrorForReason(path *field.Path, value any, detail string, reason *apiextv1.FieldValueErrorReason) *field.Error {
	if reason == nil {
		return field.Invalid(path, value, detail)
	}
	switch *reason {
	case apiextv1.FieldValueForbidden:
		return field.Forbidden(path, detail)
	case apiextv1.FieldValueRequired:
		return field.Required(path, detail)
	case apiextv1.FieldValueDuplicate:
		return field.Duplicate(path, value)
	default:
		return field.Invalid(path, value, detail)
	}
}

// evalError is the error of a rule whose evaluation failed, and whether no
// further rule may run.
func evalError(err error, fldPath *field.Path, typ string, rule apiextv1.ValidationRule) (*field.Error, bool) {
	switch {
	case strings.HasPrefix(err.Error(), "no such overload"):
		// only values typed dyn (int-or-string) get past the type
		// checker to fail here
		return field.Invalid(fldPath, typ, fmt.Sprintf("'%v': call arguments did not match a supported operator, function or macro signature for rule: %v", err, ruleErrorString(rule))), false
	case strings.HasPrefix(err.Error(), costLimitExceeded):
		return field.Invalid(fldPath, typ, fmt.Sprintf("'%v': no further validation rules will be run due to call cost exceeds limit for rule: %v", err, ruleErrorString(rule))), true
	default:
		// no such key, index out of bounds, overflow, division by zero...
		return field.Invalid(fldPath, typ, fmt.Sprintf("%v evaluating rule: %v", err, ruleErrorString(rule))), false
	}
}

// ruleFailed reports a rule that evaluated to false: its message (or
// messageExpression's, which costs budget) as an error, or as a warning
// where ratcheting lets the unchanged value pass. A budget of -1 stops
// the validation.
func (e evaluation) ruleFailed(c compiledRule, rule apiextv1.ValidationRule, fldPath *field.Path, typ string, obj any, act interpreter.Activation, r ratchet, budget int64) (field.ErrorList, int64) {
	var errs field.ErrorList
	path := fldPath
	if c.fieldPath != "" {
		path = path.Child(c.fieldPath)
	}
	ratcheted := !c.usesOldSelf && r.ratchets()
	add := func(fe *field.Error) {
		if ratcheted {
			if e.warn != nil {
				e.warn(fe.Error())
			}
			return
		}
		errs = append(errs, fe)
	}
	detail, ok := "", false
	if c.messageProgram != nil {
		// kube evaluates messages with the plain oldSelf even for
		// optionalOldSelf rules: a message that reads the optional
		// oldSelf fails there and falls back to message
		msg, left, merr := evalMessageExpression(e.ctx, c.messageProgram, rule.MessageExpression, act, budget)
		switch {
		case merr == nil:
			detail, ok = msg, true
			budget = left
		case merr.Type == apiservercel.ErrorTypeInternal:
			add(field.InternalError(path, merr))
			return errs, -1
		case merr.Type == apiservercel.ErrorTypeInvalid:
			add(field.Invalid(path, typ, merr.Error()))
			return errs, -1
		default:
			// the message could not be made: fall back to message
			budget = left
		}
	}
	if !ok {
		detail = ruleMessageOrDefault(rule)
	}
	var value any = obj
	if typ == "object" || typ == "array" {
		value = field.OmitValueType{}
	}
	add(fieldErrorForReason(path, value, detail, rule.Reason))
	return errs, budget
}
