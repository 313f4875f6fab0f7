package webhook

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	authorizationv1 "k8s.io/api/authorization/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/version"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

// Matcher holds a webhook's compiled match conditions.
type Matcher struct {
	conditions []condition
}

type condition struct {
	expression string
	program    cel.Program
}

// maxMatchConditions is kube's limit on a webhook's match conditions.
const maxMatchConditions = 64

// CompileMatchConditions compiles CEL expressions on `request`, a
// SubjectAccessReviewSpec (user, groups, uid, extra, resourceAttributes,
// nonResourceAttributes), each of which must be a bool.
func CompileMatchConditions(exprs []string) (*Matcher, error) {
	if len(exprs) == 0 {
		return nil, nil
	}
	if len(exprs) > maxMatchConditions {
		return nil, fmt.Errorf("matchConditions: Too many: %d: must have at most %d items", len(exprs), maxMatchConditions)
	}
	env, err := matchEnv()
	if err != nil {
		return nil, err
	}
	m := &Matcher{}
	var errs []error
	seen := map[string]bool{}
	for i, expr := range exprs {
		switch {
		case expr == "":
			errs = append(errs, fmt.Errorf("matchConditions[%d].expression: Required value", i))
			continue
		case seen[expr]:
			errs = append(errs, fmt.Errorf("matchConditions[%d].expression: Duplicate value: %q", i, expr))
			continue
		}
		seen[expr] = true
		ast, issues := env.Compile(expr)
		if issues != nil && issues.Err() != nil {
			errs = append(errs, fmt.Errorf("matchConditions[%d].expression: Invalid value: %q: compilation failed: %v", i, expr, issues.Err()))
			continue
		}
		if ast.OutputType() != cel.BoolType {
			errs = append(errs, fmt.Errorf("matchConditions[%d].expression: Invalid value: %q: must evaluate to bool", i, expr))
			continue
		}
		prg, err := env.Program(ast)
		if err != nil {
			errs = append(errs, fmt.Errorf("matchConditions[%d].expression: Invalid value: %q: program instantiation failed: %v", i, expr, err))
			continue
		}
		m.conditions = append(m.conditions, condition{expression: expr, program: prg})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}

// Matches reports whether every condition holds for spec: a false one ends
// the check with no match; errors, if no condition was false, are returned.
func (m *Matcher) Matches(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (bool, error) {
	if m == nil {
		return true, nil
	}
	vars := map[string]any{"request": requestValue(&spec)}
	var errs []error
	for _, c := range m.conditions {
		out, _, err := c.program.ContextEval(ctx, vars)
		if err != nil {
			errs = append(errs, fmt.Errorf("cel evaluation error: expression '%v' resulted in error: %w", c.expression, err))
			continue
		}
		match, ok := out.Value().(bool)
		if !ok {
			errs = append(errs, fmt.Errorf("cel evaluation error: expression '%v' eval result value should be bool but got %v", c.expression, out.Value()))
			continue
		}
		if !match {
			return false, nil
		}
	}
	if len(errs) > 0 {
		return false, utilerrors.NewAggregate(errs)
	}
	return true, nil
}

// requestValue is spec as CEL sees it: absent attributes are absent
// fields, so has(request.resourceAttributes) tells the kinds apart.
func requestValue(s *authorizationv1.SubjectAccessReviewSpec) map[string]any {
	extra := map[string][]string{}
	for k, v := range s.Extra {
		extra[k] = v
	}
	groups := s.Groups
	if groups == nil {
		groups = []string{}
	}
	out := map[string]any{"user": s.User, "groups": groups, "uid": s.UID, "extra": extra}
	if r := s.ResourceAttributes; r != nil {
		out["resourceAttributes"] = map[string]any{
			"namespace": r.Namespace, "verb": r.Verb, "group": r.Group, "version": r.Version,
			"resource": r.Resource, "subresource": r.Subresource, "name": r.Name,
		}
	}
	if n := s.NonResourceAttributes; n != nil {
		out["nonResourceAttributes"] = map[string]any{"path": n.Path, "verb": n.Verb}
	}
	return out
}

var (
	envOnce sync.Once
	env     *cel.Env
	envErr  error
)

// matchEnv is kube's base CEL environment with `request` typed as a
// SubjectAccessReviewSpec, so that a misspelt field fails to compile.
func matchEnv() (*cel.Env, error) {
	envOnce.Do(func() {
		str := apiservercel.StringType
		strs := apiservercel.NewListType(str, -1)
		object := func(name string, fields map[string]*apiservercel.DeclType) *apiservercel.DeclType {
			decl := map[string]*apiservercel.DeclField{}
			for n, t := range fields {
				decl[n] = apiservercel.NewDeclField(n, t, false, nil, nil)
			}
			return apiservercel.NewObjectType(name, decl)
		}
		resource := object("kubernetes.ResourceAttributes", map[string]*apiservercel.DeclType{
			"namespace": str, "verb": str, "group": str, "version": str, "resource": str, "subresource": str, "name": str,
		})
		nonResource := object("kubernetes.NonResourceAttributes", map[string]*apiservercel.DeclType{"path": str, "verb": str})
		request := object("kubernetes.SubjectAccessReviewSpec", map[string]*apiservercel.DeclType{
			"resourceAttributes": resource, "nonResourceAttributes": nonResource,
			"user": str, "groups": strs, "uid": str, "extra": apiservercel.NewMapType(str, strs, -1),
		})
		set, err := environment.MustBaseEnvSet(version.MajorMinor(1, 36)).Extend(environment.VersionedOptions{
			IntroducedVersion: version.MajorMinor(1, 0),
			EnvOptions:        []cel.EnvOption{cel.Variable("request", request.CelType())},
			DeclTypes:         []*apiservercel.DeclType{request},
		})
		if err != nil {
			envErr = err
			return
		}
		env, envErr = set.Env(environment.NewExpressions)
	})
	return env, envErr
}
