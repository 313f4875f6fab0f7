package cel

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// FuzzValidationRules: any x-kubernetes-validations rule, message
// expression and field path either compile or are refused with field
// errors (a CRD write's 422), never a panic; a rule that compiles then
// runs on an object of the schema's shape, old and new,
// with a rule's failure or the budget's end as its errors, not an
// internal error.
func FuzzValidationRules(f *testing.F) {
	for _, seed := range []struct{ rule, msg, path, name string }{
		{"self.size <= 10", "", "", "a"},
		{"self.names.all(n, n.matches('^[a-z]+$'))", `"bad name " + self.name`, ".names", "b"},
		{"self.size == oldSelf.size", "", "", "c"},
		{"isQuantity(self.name) && quantity(self.name).isGreaterThan(quantity('1'))", "", "", "2Gi"},
		{"self.labels.exists(k, self.labels[k] == self.name)", "", ".labels['a.b']", "v"},
		{"self.ports.map(p, p.port).sum() < 100", "", "", ""},
		{"url(self.name).getHost() == 'x'", "self.name", "", "https://x/"},
		{"[1,2,3].all(x, [1,2,3].all(y, [1,2,3].all(z, x*y*z < 100)))", "", "", ""},
		{"self.name.split('').size() > 0", "", ".ports[0]", "\u00e9"},
		{"cidr(self.name).containsIP('10.0.0.1')", "", "", "10.0.0.0/8"},
	} {
		f.Add(seed.rule, seed.msg, seed.path, seed.name, int64(3))
	}
	f.Fuzz(func(t *testing.T, rule, msgExpr, fieldPath, name string, size int64) {
		s := root(rules(object(map[string]S{
			"size":   intg(),
			"name":   strMax(63),
			"names":  listMax(strMax(63), 16),
			"labels": mapOf(strMax(63)),
			"ports":  mapList(object(map[string]S{"name": strMax(15), "port": intg()}), "name"),
		}), apiextv1.ValidationRule{Rule: rule, MessageExpression: msgExpr, FieldPath: fieldPath}))
		if errs := ValidateRules(s, field.NewPath("openAPIV3Schema"), CompileOptions{}); len(errs) > 0 {
			for _, e := range errs {
				if e.Type == field.ErrorTypeInternal {
					t.Fatalf("rule %q: internal error %v", rule, e)
				}
			}
			return
		}
		spec := func(size int64) map[string]any {
			return map[string]any{"size": size, "name": name, "names": []any{name, "x"}, "labels": map[string]any{"a.b": name},
				"ports": []any{map[string]any{"name": "p", "port": size}}}
		}
		obj := map[string]any{"apiVersion": "v1", "kind": "K", "metadata": map[string]any{"name": "n"}, "spec": spec(size)}
		old := map[string]any{"apiVersion": "v1", "kind": "K", "metadata": map[string]any{"name": "n"}, "spec": spec(size + 1)}
		v := NewValidator(s, true, PerCallLimit)
		errs, _ := v.Validate(context.Background(), nil, obj, old, RuntimeCELCostBudget)
		for _, e := range errs {
			if e.Type == field.ErrorTypeInternal {
				t.Fatalf("rule %q on %v: internal error %v", rule, obj, e)
			}
		}
	})
}
