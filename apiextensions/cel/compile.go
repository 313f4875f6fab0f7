package cel

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/version"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"

	"github.com/capstan-io/capstan/apiextensions/schema"
	"github.com/capstan-io/capstan/metrics"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

const (
	// ScopedVarName is the variable holding the value a rule applies to.
	ScopedVarName = "self"
	// OldScopedVarName is the variable holding the value before the update
	// (transition rules).
	OldScopedVarName = "oldSelf"

	// PerCallLimit is kube's cost limit of one evaluation of one expression.
	PerCallLimit = celconfig.PerCallLimit
	// RuntimeCELCostBudget is kube's cost budget for all the rules run on one
	// custom resource write.
	RuntimeCELCostBudget = celconfig.RuntimeCELCostBudget
	// StaticEstimatedCostLimit is kube's limit of the estimated cost of one
	// expression (times the number of values it may run on).
	StaticEstimatedCostLimit = 10000000
	// StaticEstimatedCRDCostLimit is kube's limit of the estimated cost of all
	// the expressions of one OpenAPI schema.
	StaticEstimatedCRDCostLimit = 100000000
)

// CompatibilityVersion is the CEL compatibility version of a 1.37 API
// server: new expressions may use the libraries and features every server
// of the previous minor version knows.
var CompatibilityVersion = version.MajorMinor(1, 36)

// BaseEnvSet is kube's base CEL environment at CompatibilityVersion.
// It is built once and shared.
func BaseEnvSet() *environment.EnvSet {
	return environment.MustBaseEnvSet(CompatibilityVersion)
}

// Expressions are the rules and message expressions a CRD held before an
// update. They compile in the StoredExpressions environment (everything the
// server knows), all others in the NewExpressions environment (only what
// the compatibility version knows), so that an update does not fail on
// rules that were already accepted.
type Expressions struct {
	Rules              sets.Set[string]
	MessageExpressions sets.Set[string]
}

// Add records rules.
func (e *Expressions) Add(rules apiextv1.ValidationRules) {
	if e.Rules == nil {
		e.Rules = sets.New[string]()
	}
	if e.MessageExpressions == nil {
		e.MessageExpressions = sets.New[string]()
	}
	for _, r := range rules {
		e.Rules.Insert(r.Rule)
		if r.MessageExpression != "" {
			e.MessageExpressions.Insert(r.MessageExpression)
		}
	}
}

// AddSchema records every rule of s, including those of its allOf, anyOf,
// oneOf and not value validations.
func (e *Expressions) AddSchema(s *schema.Structural) {
	if s == nil {
		return
	}
	e.Add(s.XValidations)
	e.AddSchema(s.Items)
	e.AddSchema(s.AdditionalProperties)
	for k := range s.Properties {
		p := s.Properties[k]
		e.AddSchema(&p)
	}
	if vv := s.ValueValidation; vv != nil {
		for i := range vv.AllOf {
			e.AddSchema(nestedToStructural(&vv.AllOf[i]))
		}
		for i := range vv.AnyOf {
			e.AddSchema(nestedToStructural(&vv.AnyOf[i]))
		}
		for i := range vv.OneOf {
			e.AddSchema(nestedToStructural(&vv.OneOf[i]))
		}
		if vv.Not != nil {
			e.AddSchema(nestedToStructural(vv.Not))
		}
	}
}

// AddJSONSchemaProps records every rule of p and of all the schemas inside
// it (items, properties, additionalProperties, allOf, anyOf, oneOf, not,
// and the rest), as kube collects them from the old CRD: its schemas need
// not be structural.
func (e *Expressions) AddJSONSchemaProps(p *apiextv1.JSONSchemaProps) {
	if p == nil {
		return
	}
	e.Add(p.XValidations)
	if p.Items != nil {
		e.AddJSONSchemaProps(p.Items.Schema)
		for i := range p.Items.JSONSchemas {
			e.AddJSONSchemaProps(&p.Items.JSONSchemas[i])
		}
	}
	for _, list := range [][]apiextv1.JSONSchemaProps{p.AllOf, p.AnyOf, p.OneOf} {
		for i := range list {
			e.AddJSONSchemaProps(&list[i])
		}
	}
	e.AddJSONSchemaProps(p.Not)
	for _, m := range []map[string]apiextv1.JSONSchemaProps{p.Properties, p.PatternProperties, p.Definitions} {
		for k := range m {
			s := m[k]
			e.AddJSONSchemaProps(&s)
		}
	}
	if p.AdditionalProperties != nil {
		e.AddJSONSchemaProps(p.AdditionalProperties.Schema)
	}
	if p.AdditionalItems != nil {
		e.AddJSONSchemaProps(p.AdditionalItems.Schema)
	}
	for _, d := range p.Dependencies {
		e.AddJSONSchemaProps(d.Schema)
	}
}

// ExistingExpressions are the expressions of every version of crd, for
// CompileOptions.Existing when crd is updated.
func ExistingExpressions(crd *apiextv1.CustomResourceDefinition) *Expressions {
	e := &Expressions{}
	e.Add(nil)
	for _, v := range crd.Spec.Versions {
		if v.Schema != nil {
			e.AddJSONSchemaProps(v.Schema.OpenAPIV3Schema)
		}
	}
	return e
}

// envChooser picks the environment of each expression.
type envChooser struct {
	// stored compiles everything in the StoredExpressions environment (as
	// the runtime validator does).
	stored bool
	// existing, when not stored, are the expressions that compile in the
	// StoredExpressions environment.
	existing *Expressions
}

func (c envChooser) ruleEnv(set *environment.EnvSet, expr string) *cel.Env {
	if c.stored || (c.existing != nil && c.existing.Rules.Has(expr)) {
		return set.StoredExpressionsEnv()
	}
	return set.NewExpressionsEnv()
}

func (c envChooser) messageEnv(set *environment.EnvSet, expr string) *cel.Env {
	if c.stored || (c.existing != nil && c.existing.MessageExpressions.Has(expr)) {
		return set.StoredExpressionsEnv()
	}
	return set.NewExpressionsEnv()
}

// compiledRule is the outcome of compiling one rule. program and err are
// both nil for an empty rule.
type compiledRule struct {
	program cel.Program
	err     *apiservercel.Error
	// usesOldSelf marks a transition rule.
	usesOldSelf bool
	// maxCost is the estimated worst-case cost of one evaluation.
	maxCost uint64
	// maxCardinality is how often the rule may run at most under
	// unbounded lists and maps, estimated from the request size limit.
	maxCardinality uint64

	messageProgram cel.Program
	messageErr     *apiservercel.Error
	messageMaxCost uint64

	// fieldPath is the rule's fieldPath, normalized, when it is valid.
	fieldPath string
}

var selfTypeCounter atomic.Uint64

// selfTypeName names the object type of self. It changes with every
// compilation so that no rule can come to depend on it.
func selfTypeName() string {
	return fmt.Sprintf("selfType%d", selfTypeCounter.Add(1))
}

// compileRules compiles the rules of one node whose CEL type is declType.
// The error is for the node as a whole (no type, no environment).
func compileRules(node *schema.Structural, rules apiextv1.ValidationRules, declType *apiservercel.DeclType, perCallLimit uint64, base *environment.EnvSet, chooser envChooser) ([]compiledRule, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	defer metrics.CELCompilation(time.Now())
	if declType == nil {
		return nil, fmt.Errorf("failed to convert to declType for CEL validation rules")
	}
	envs, optionalEnvs, err := ruleEnvSets(base, declType)
	if err != nil {
		return nil, err
	}
	estimator := &library.CostEstimator{SizeEstimator: &sizeEstimator{root: declType}}
	cardinality := maxCardinality(declType.MinSerializedSize)
	out := make([]compiledRule, len(rules))
	for i, rule := range rules {
		set := envs
		if rule.OptionalOldSelf != nil && *rule.OptionalOldSelf {
			set = optionalEnvs
		}
		out[i] = compileRule(node, rule, set, chooser, estimator, cardinality, perCallLimit)
	}
	return out, nil
}

// ruleEnvSets extends base with self and oldSelf of the node's type; in the
// second set oldSelf is an optional.
func ruleEnvSets(base *environment.EnvSet, declType *apiservercel.DeclType) (*environment.EnvSet, *environment.EnvSet, error) {
	selfType := declType.MaybeAssignTypeName(selfTypeName())
	extend := func(oldSelfType *cel.Type) (*environment.EnvSet, error) {
		return base.Extend(
			environment.VersionedOptions{
				// always present, whatever the compatibility version
				IntroducedVersion: version.MajorMinor(1, 0),
				EnvOptions:        []cel.EnvOption{cel.Variable(ScopedVarName, selfType.CelType())},
				DeclTypes:         []*apiservercel.DeclType{selfType},
			},
			environment.VersionedOptions{
				IntroducedVersion: version.MajorMinor(1, 24),
				EnvOptions:        []cel.EnvOption{cel.Variable(OldScopedVarName, oldSelfType)},
			},
		)
	}
	plain, err := extend(selfType.CelType())
	if err != nil {
		return nil, nil, err
	}
	optional, err := extend(types.NewOptionalType(selfType.CelType()))
	if err != nil {
		return nil, nil, err
	}
	return plain, optional, nil
}

func compileRule(node *schema.Structural, rule apiextv1.ValidationRule, set *environment.EnvSet, chooser envChooser, estimator *library.CostEstimator, cardinality, perCallLimit uint64) (res compiledRule) {
	if strings.TrimSpace(rule.Rule) == "" {
		return res
	}
	env := chooser.ruleEnv(set, rule.Rule)
	ast, issues := env.Compile(rule.Rule)
	if issues != nil {
		res.err = &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid, Detail: "compilation failed: " + issues.String()}
		return res
	}
	if ast.OutputType() != cel.BoolType {
		res.err = &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid, Detail: "cel expression must evaluate to a bool"}
		return res
	}
	checked, err := cel.AstToCheckedExpr(ast)
	if err != nil {
		res.err = &apiservercel.Error{Type: apiservercel.ErrorTypeInternal, Detail: "unexpected compilation error: " + err.Error()}
		return res
	}
	for _, ref := range checked.ReferenceMap {
		if ref.Name == OldScopedVarName {
			res.usesOldSelf = true
			break
		}
	}
	prog, err := env.Program(ast,
		cel.CostLimit(perCallLimit),
		cel.CostTracking(estimator),
		cel.InterruptCheckFrequency(celconfig.CheckFrequency),
	)
	if err != nil {
		res.err = &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid, Detail: "program instantiation failed: " + err.Error()}
		return res
	}
	est, err := env.EstimateCost(ast, estimator)
	if err != nil {
		res.err = &apiservercel.Error{Type: apiservercel.ErrorTypeInternal, Detail: "cost estimation failed: " + err.Error()}
		return res
	}
	res.maxCost = est.Max
	res.maxCardinality = cardinality
	res.program = prog

	if rule.MessageExpression != "" {
		res.messageProgram, res.messageMaxCost, res.messageErr = compileMessage(rule.MessageExpression, set, chooser, estimator, perCallLimit)
		if res.messageErr != nil {
			return res
		}
	}
	if rule.FieldPath != "" {
		if p, _, err := ValidFieldPath(rule.FieldPath, node); err == nil {
			res.fieldPath = p.String()
		}
	}
	return res
}

// compileMessage compiles a rule's messageExpression, which must yield a
// string, and estimates its cost.
func compileMessage(expr string, set *environment.EnvSet, chooser envChooser, estimator *library.CostEstimator, perCallLimit uint64) (cel.Program, uint64, *apiservercel.Error) {
	menv := chooser.messageEnv(set, expr)
	mast, issues := menv.Compile(expr)
	if issues != nil {
		return nil, 0, &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid, Detail: "messageExpression compilation failed: " + issues.String()}
	}
	if mast.OutputType() != cel.StringType {
		return nil, 0, &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid, Detail: "messageExpression must evaluate to a string"}
	}
	if _, err := cel.AstToCheckedExpr(mast); err != nil {
		return nil, 0, &apiservercel.Error{Type: apiservercel.ErrorTypeInternal, Detail: "unexpected messageExpression compilation error: " + err.Error()}
	}
	mprog, err := menv.Program(mast,
		cel.CostLimit(perCallLimit),
		cel.CostTracking(estimator),
		cel.InterruptCheckFrequency(celconfig.CheckFrequency),
	)
	if err != nil {
		return nil, 0, &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid, Detail: "messageExpression instantiation failed: " + err.Error()}
	}
	mest, err := menv.EstimateCost(mast, estimator)
	if err != nil {
		return nil, 0, &apiservercel.Error{Type: apiservercel.ErrorTypeInternal, Detail: "cost estimation failed for messageExpression: " + err.Error()}
	}
	return mprog, mest.Max, nil
}

// sizeEstimator bounds the size of the values an expression reaches from
// self (or oldSelf) by the maxLength, maxItems and maxProperties of the
// schema, or by what fits in a request.
type sizeEstimator struct {
	root *apiservercel.DeclType
}

func (e *sizeEstimator) EstimateSize(node checker.AstNode) *checker.SizeEstimate {
	path := node.Path()
	if len(path) == 0 {
		return nil
	}
	t := e.root
	// path[0] is the variable: self and oldSelf share the type
	for _, step := range path[1:] {
		switch step {
		case "@items", "@values":
			if t.ElemType == nil {
				return nil
			}
			t = t.ElemType
		case "@keys":
			if t.KeyType == nil {
				return nil
			}
			t = t.KeyType
		default:
			f, ok := t.Fields[step]
			if !ok || f.Type == nil {
				return nil
			}
			t = f.Type
		}
	}
	return &checker.SizeEstimate{Min: 0, Max: uint64(t.MaxElements)}
}

func (e *sizeEstimator) EstimateCallCost(function, overloadID string, target *checker.AstNode, args []checker.AstNode) *checker.CallEstimate {
	return nil
}

// maxCardinality is how many values of serialized size minSize fit in one
// request, one separator each: the worst case of how often a rule under
// unbounded lists or maps runs.
func maxCardinality(minSize int64) uint64 {
	return uint64(celconfig.MaxRequestSizeBytes / (minSize + 1))
}
