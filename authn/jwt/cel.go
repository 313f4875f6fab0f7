package jwt

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/cel/lazy"

	"github.com/capstan-io/capstan/authn"
)

// The variables expressions see: the token's claims, or the user the
// mappings made.
const (
	claimsVar = "claims"
	userVar   = "user"
)

// compatibilityVersion is the CEL compatibility version of a 1.37 server:
// the libraries every server of the previous minor version knows. Config
// files are read as stored expressions, so everything this server knows
// compiles.
var compatibilityVersion = version.MajorMinor(1, 36)

// celEnvs are the claims and user environments, built once.
type celEnvs struct {
	claims, user *cel.Env
}

// envs are built on the first compile: most servers have no CEL
// expressions in their authentication configuration, and building the
// environments costs memory and start-up time for nothing.
var envs = sync.OnceValue(mustEnvs)

func mustEnvs() celEnvs {
	base := environment.MustBaseEnvSet(compatibilityVersion)
	build := func(name string, t *apiservercel.DeclType) *cel.Env {
		set, err := base.Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions:        []cel.EnvOption{cel.Variable(name, t.CelType())},
			DeclTypes:         []*apiservercel.DeclType{t},
		})
		if err != nil {
			panic(fmt.Sprintf("authentication CEL environment: %v", err))
		}
		env, err := set.Env(environment.StoredExpressions)
		if err != nil {
			panic(fmt.Sprintf("authentication CEL environment: %v", err))
		}
		return env
	}
	field := func(name string, t *apiservercel.DeclType) *apiservercel.DeclField {
		return apiservercel.NewDeclField(name, t, false, nil, nil)
	}
	stringList := apiservercel.NewListType(apiservercel.StringType, -1)
	userType := apiservercel.NewObjectType("kubernetes.UserInfo", map[string]*apiservercel.DeclField{
		"username": field("username", apiservercel.StringType),
		"uid":      field("uid", apiservercel.StringType),
		"groups":   field("groups", stringList),
		"extra":    field("extra", apiservercel.NewMapType(apiservercel.StringType, stringList, -1)),
	})
	return celEnvs{
		claims: build(claimsVar, apiservercel.NewMapType(apiservercel.StringType, apiservercel.AnyType, -1)),
		user:   build(userVar, userType),
	}
}

// program is one compiled expression.
type program struct {
	expression string
	ast        *cel.Ast
	prog       cel.Program
}

// compile compiles expression in the environment of variable ("claims" or
// "user"); wantBool requires a bool result. The error detail is kube's.
func compile(variable, expression string, wantBool bool) (*program, error) {
	env := envs().claims
	if variable == userVar {
		env = envs().user
	}
	ast, issues := env.Compile(expression)
	if issues != nil {
		return nil, fmt.Errorf("compilation failed: %s", issues.String())
	}
	if wantBool && !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, fmt.Errorf("must evaluate to %v", cel.BoolType.String())
	}
	prog, err := env.Program(ast)
	if err != nil {
		return nil, fmt.Errorf("program instantiation failed: %v", err)
	}
	return &program{expression: expression, ast: ast, prog: prog}, nil
}

// eval runs p with variable bound to value.
func (p *program) eval(ctx context.Context, variable string, value traits.Mapper) (ref.Val, error) {
	out, _, err := p.prog.ContextEval(ctx, activation{name: variable, value: value})
	if err != nil {
		return nil, fmt.Errorf("expression '%s' resulted in error: %w", p.expression, err)
	}
	return out, nil
}

type activation struct {
	name  string
	value traits.Mapper
}

func (a activation) ResolveName(name string) (any, bool) {
	if name != a.name {
		return nil, false
	}
	return a.value, true
}

func (activation) Parent() interpreter.Activation { return nil }

// claimsValue is the claims as CEL sees them: each claim decoded from JSON
// only when an expression reads it.
func claimsValue(c claims) traits.Mapper {
	m := lazy.NewMapValue(types.NewObjectType("kubernetes.claims"))
	for name, raw := range c {
		m.Append(name, func(*lazy.MapValue) ref.Val {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return types.NewErr("claim %q failed to unmarshal: %v", name, err)
			}
			return unescaped(types.DefaultTypeAdapter.NativeToValue(v))
		})
	}
	return m
}

// userValue is u as CEL's user variable.
func userValue(u *authn.User) traits.Mapper {
	m := lazy.NewMapValue(types.NewObjectType("kubernetes.UserInfo"))
	add := func(name string, v any) {
		m.Append(name, func(*lazy.MapValue) ref.Val { return unescaped(types.DefaultTypeAdapter.NativeToValue(v)) })
	}
	groups := u.Groups
	if groups == nil {
		groups = []string{}
	}
	extra := u.Extra
	if extra == nil {
		extra = map[string][]string{}
	}
	add("username", u.Name)
	add("uid", u.UID)
	add("groups", groups)
	add("extra", extra)
	return m
}

// unescaped lets expressions reach keys that are not CEL identifiers by
// their escaped names (claims.foo__dot__bar for "foo.bar"), at any depth.
func unescaped(v ref.Val) ref.Val {
	switch v := v.(type) {
	case traits.Mapper:
		return unescapeMapper{v}
	case traits.Lister:
		return unescapeLister{v}
	}
	return v
}

type unescapeMapper struct{ traits.Mapper }

func (m unescapeMapper) Find(key ref.Val) (ref.Val, bool) {
	if s, ok := key.(types.String); ok {
		if name, ok := apiservercel.Unescape(string(s)); ok && name != string(s) {
			key = types.String(name)
		}
	}
	v, ok := m.Mapper.Find(key)
	return unescaped(v), ok
}

type unescapeLister struct{ traits.Lister }

func (l unescapeLister) Get(index ref.Val) ref.Val { return unescaped(l.Lister.Get(index)) }

// stringList converts a mapping's result: a string or a list of strings,
// with empty strings (and null) meaning nothing.
func stringList(v ref.Val) ([]string, error) {
	bad := fmt.Errorf("expression must return a string or a list of strings")
	switch v.Type().TypeName() {
	case cel.StringType.TypeName():
		if s := v.Value().(string); s != "" {
			return []string{s}, nil
		}
		return nil, nil
	case cel.NullType.TypeName():
		return nil, nil
	case cel.ListType(nil).TypeName():
		var out []string
		switch items := v.Value().(type) {
		case []any:
			for _, item := range items {
				s, ok := item.(string)
				if !ok {
					return nil, bad
				}
				if s != "" {
					out = append(out, s)
				}
			}
		case []ref.Val:
			for _, item := range items {
				s, ok := item.Value().(string)
				if !ok {
					return nil, bad
				}
				if s != "" {
					out = append(out, s)
				}
			}
		default:
			return nil, bad
		}
		return out, nil
	}
	return nil, bad
}
