package generic

import (
	"context"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	arv1 "k8s.io/api/admissionregistration/v1"

	"github.com/capstan-io/capstan/admission/policy/expr"
)

// FuzzPolicyExpressions: an admission policy's variable, match condition
// and validation expression (the CEL a ValidatingAdmissionPolicy or
// MutatingAdmissionPolicy carries) compile or are refused with an error,
// and what compiles runs on an admission request within the budget,
// never a panic.
func FuzzPolicyExpressions(f *testing.F) {
	for _, seed := range [][3]string{
		{"object.metadata.name", "variables.v.startsWith('a')", "object.spec.replicas <= 5"},
		{"object.spec.containers.map(c, c.image)", "request.operation == 'CREATE'", "variables.v.all(i, !i.endsWith(':latest'))"},
		{"oldObject == null", "has(object.metadata.labels) && 'x' in object.metadata.labels", "variables.v || request.userInfo.username == 'admin'"},
		{"[1,2,3].map(x, [1,2,3].map(y, x*y))", "true", "size(variables.v) > 0"},
		{"quantity('1Gi').isGreaterThan(quantity('1'))", "object.?spec.?replicas.orValue(0) > 1", "variables.v"},
		{"string(object.spec.replicas) + 'x'", "namespaceObject.metadata.name == 'ns'", "variables.v.matches('^[0-9]+x$')"},
		{"variables.v", "variables.v", "variables.w"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	object := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "a", "namespace": "ns", "labels": map[string]any{"x": "y"}},
		"spec":     map[string]any{"replicas": int64(3), "containers": []any{map[string]any{"name": "c", "image": "i:latest"}}}}
	base := map[string]any{
		expr.ObjectVar: object, expr.OldObjectVar: nil,
		expr.NamespaceVar: map[string]any{"metadata": map[string]any{"name": "ns"}},
		expr.RequestVar: map[string]any{"operation": "CREATE", "name": "a", "namespace": "ns",
			"userInfo": map[string]any{"username": "alice", "groups": []any{"g"}}},
	}
	f.Fuzz(func(t *testing.T, variable, condition, validation string) {
		d := expr.Decls{}
		c, err := Compile([]arv1.Variable{{Name: "v", Expression: variable}},
			[]arv1.MatchCondition{{Name: "c", Expression: condition}}, d)
		if err != nil {
			return
		}
		r := c.Compiler.Compile(validation, d, true, cel.BoolType)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		e := c.NewEvaluation(ctx, base, false, nil, 10_000_000)
		_, _ = c.MatchConditions(e)
		if r.Err == nil {
			_, _ = e.Eval(Program{Name: "validation", Expression: validation, Prog: r.Program})
		}
	})
}
