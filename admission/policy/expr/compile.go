package expr

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/traits"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/library"

	capcel "github.com/capstan-io/capstan/apiextensions/cel"
)

// Result is a compiled expression, or why it did not compile.
type Result struct {
	Program    cel.Program
	OutputType *cel.Type
	Err        *apiservercel.Error
}

// Compiler compiles the expressions of one object. With variables, each
// variable it compiles is declared, with its type, for the expressions
// compiled after it, as kube composes a policy's variables.
type Compiler struct {
	variables *apiservercel.DeclType // nil without variables
	envs      map[Decls]*environment.EnvSet
	typed     *Typed // nil: object, oldObject and params are dyn
}

// variablesTypeName is kube's name of the type of variables.
const variablesTypeName = "kubernetes.variables"

// NewCompiler returns a compiler; withVariables declares variables.
func NewCompiler(withVariables bool) *Compiler {
	c := &Compiler{}
	if withVariables {
		c.variables = apiservercel.NewObjectType(variablesTypeName, map[string]*apiservercel.DeclField{})
		c.envs = map[Decls]*environment.EnvSet{}
	}
	return c
}

// NewTypedCompiler returns a compiler with variables whose object,
// oldObject and params have the types of typed, for type checking.
func NewTypedCompiler(typed *Typed) *Compiler {
	c := NewCompiler(true)
	c.typed = typed
	return c
}

// Check type-checks expression, of any type, in the environment of
// stored expressions: the issues found, kube's type checking's error.
func (c *Compiler) Check(expression string, d Decls) *apiservercel.Error {
	env, err := c.env(d, true)
	if err != nil {
		return &apiservercel.Error{Type: apiservercel.ErrorTypeInternal, Detail: "fail to build env: " + err.Error()}
	}
	if _, issues := env.Compile(expression); issues != nil {
		return &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid, Detail: issues.String()}
	}
	return nil
}

func (c *Compiler) env(d Decls, stored bool) (*cel.Env, error) {
	var set *environment.EnvSet
	var err error
	switch {
	case c.variables == nil:
		set, err = baseEnv(d)
	case len(c.variables.Fields) == 0 && c.typed == nil:
		// No variable yet: the environment every such compiler shares.
		set, err = noVariablesEnv(d)
	case c.envs[d] != nil:
		set = c.envs[d]
	default:
		// The variables type is shared by the environments and grows as
		// variables are added: the type provider reads its fields when
		// an expression is checked.
		set, err = extend(capcel.BaseEnvSet(), d, c.variables, c.typed)
		c.envs[d] = set
	}
	if err != nil {
		return nil, err
	}
	if stored {
		return set.Env(environment.StoredExpressions)
	}
	return set.Env(environment.NewExpressions)
}

// Compile compiles expression, which must evaluate to one of want (any
// type when want is empty). stored compiles it in the environment of
// expressions already stored (everything this server knows) rather than
// that of new ones (what the compatibility version knows).
func (c *Compiler) Compile(expression string, d Decls, stored bool, want ...*cel.Type) Result {
	env, err := c.env(d, stored)
	if err != nil {
		return failed(apiservercel.ErrorTypeInternal, "unexpected error loading CEL environment: "+err.Error(), nil)
	}
	ast, issues := env.Compile(expression)
	if issues != nil {
		return failed(apiservercel.ErrorTypeInvalid, "compilation failed: "+issues.String(), apiservercel.NewCompilationError(issues))
	}
	if msg := checkType(ast.OutputType(), want); msg != "" {
		return failed(apiservercel.ErrorTypeInvalid, msg, nil)
	}
	prog, err := env.Program(ast,
		cel.CostLimit(celconfig.PerCallLimit),
		cel.CostTracking(&library.CostEstimator{}),
		cel.InterruptCheckFrequency(celconfig.CheckFrequency))
	if err != nil {
		return failed(apiservercel.ErrorTypeInternal, "program instantiation failed: "+err.Error(), nil)
	}
	return Result{Program: prog, OutputType: ast.OutputType()}
}

// AddVariable compiles a variable's expression and declares it as
// variables.<name> for what is compiled next; a variable that did not
// compile is declared as dyn.
func (c *Compiler) AddVariable(name, expression string, d Decls, stored bool) Result {
	r := c.Compile(expression, d, stored)
	if c.variables != nil {
		c.variables.Fields[name] = apiservercel.NewDeclField(name, declTypeOf(r.OutputType), true, nil, nil)
	}
	return r
}

// VariablesType is the type of variables, nil without variables.
func (c *Compiler) VariablesType() *apiservercel.DeclType { return c.variables }

func failed(t apiservercel.ErrorType, detail string, cause error) Result {
	return Result{Err: &apiservercel.Error{Type: t, Detail: detail, Cause: cause}}
}

func checkType(got *cel.Type, want []*cel.Type) string {
	if len(want) == 0 {
		return ""
	}
	for _, w := range want {
		if got.IsExactType(w) || cel.AnyType.IsExactType(w) {
			return ""
		}
	}
	if len(want) == 1 {
		return fmt.Sprintf("must evaluate to %v but got %v", want[0].String(), got.String())
	}
	return fmt.Sprintf("must evaluate to one of %v but got %v", want, got.String())
}

// declTypeOf is the declared type of a variable of CEL type t: scalars,
// lists and maps keep their types, anything else is dyn.
func declTypeOf(t *cel.Type) *apiservercel.DeclType {
	if t == nil {
		return apiservercel.DynType
	}
	for _, s := range []*apiservercel.DeclType{apiservercel.AnyType, apiservercel.BoolType, apiservercel.BytesType,
		apiservercel.DoubleType, apiservercel.DurationType, apiservercel.IntType, apiservercel.NullType,
		apiservercel.StringType, apiservercel.TimestampType, apiservercel.UintType} {
		if s.CelType().IsExactType(t) {
			return s
		}
	}
	if t.HasTrait(traits.ContainerType) && t.HasTrait(traits.IndexerType) {
		switch p := t.Parameters(); len(p) {
		case 1:
			return apiservercel.NewListType(declTypeOf(p[0]), -1)
		case 2:
			return apiservercel.NewMapType(declTypeOf(p[0]), declTypeOf(p[1]), -1)
		}
	}
	return apiservercel.DynType
}
