package validating

import (
	"slices"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

func TestRuleResources(t *testing.T) {
	gvr := func(g, v, r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: g, Version: v, Resource: r}
	}
	for _, tc := range []struct {
		name string
		rule arv1.Rule
		want []schema.GroupVersionResource
	}{
		{"one", arv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
			[]schema.GroupVersionResource{gvr("apps", "v1", "deployments")}},
		{"sorted product", arv1.Rule{APIGroups: []string{"b", "a"}, APIVersions: []string{"v1"}, Resources: []string{"y", "x"}},
			[]schema.GroupVersionResource{gvr("a", "v1", "x"), gvr("a", "v1", "y"), gvr("b", "v1", "x"), gvr("b", "v1", "y")}},
		{"wildcard group", arv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}, nil},
		{"wildcard version", arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"*"}, Resources: []string{"pods"}}, nil},
		{"wildcard and subresources left out", arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"*", "pods/status", "pods"}},
			[]schema.GroupVersionResource{gvr("", "v1", "pods")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ruleResources(&tc.rule); !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// countingSchemas answers one object schema for every kind and counts the
// kinds it was asked for.
type countingSchemas map[schema.GroupVersionKind]int

func (c countingSchemas) ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error) {
	c[gvk]++
	return &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"},
		Properties: map[string]spec.Schema{"spec": {SchemaProps: spec.SchemaProps{Type: []string{"string"}}}}}}, nil
}

// TestStaticTypesResolvedOnce: a built-in kind's schema is resolved once
// however many policies are checked against it, and each use as params
// gets a name of its own; a custom resource's is resolved every time.
func TestStaticTypesResolvedOnce(t *testing.T) {
	builtin := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	custom := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	schemas := countingSchemas{}
	tc := &TypeChecker{Schemas: schemas, Static: func(gvk schema.GroupVersionKind) bool { return gvk == builtin }}
	first := tc.objectType(builtin)
	for range 3 {
		if got := tc.objectType(builtin); got != first {
			t.Errorf("a built-in kind's object type was built again")
		}
		if tc.objectType(custom) == nil {
			t.Fatal("no type for the custom kind")
		}
	}
	params := named(tc.schemaType(builtin), builtin)
	if params.TypeName() == first.TypeName() {
		t.Errorf("params of the object's kind share its type name %q", first.TypeName())
	}
	if schemas[builtin] != 1 || schemas[custom] != 3 {
		t.Errorf("resolved %d times the built-in kind (want 1) and %d times the custom one (want 3)", schemas[builtin], schemas[custom])
	}
}
