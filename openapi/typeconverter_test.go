package openapi_test

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/openapi"
	"github.com/capstan-io/capstan/openapi/generated"
)

// The containers of a pod are a map keyed by name, as kube's schema says:
// two appliers can own different containers.
func TestTypeConverterKnowsListMapKeys(t *testing.T) {
	tc := openapi.TypeConverter(openapi.NewCatalog(scheme.Scheme, generated.GetOpenAPIDefinitions))
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "x"}, {Name: "b", Image: "y"}}},
	}
	tv, err := tc.ObjectToTyped(pod)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	want := `.spec.containers[name="a"].image`
	found := false
	set.Iterate(func(p fieldpath.Path) {
		if p.String() == want {
			found = true
		}
	})
	if !found {
		t.Fatalf("field set lacks %s:\n%s", want, set.String())
	}
}

func BenchmarkTypeConverterBuild(b *testing.B) {
	catalog := openapi.NewCatalog(scheme.Scheme, generated.GetOpenAPIDefinitions)
	catalog.Definitions(openapi.V3)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := openapi.TypeConverter(catalog).Warm(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestObjectMetaDefinitions: the converter keeps metadata's definitions,
// those a custom resource's schema refers to, and no other.
func TestObjectMetaDefinitions(t *testing.T) {
	tc := openapi.TypeConverter(openapi.NewCatalog(scheme.Scheme, generated.GetOpenAPIDefinitions))
	defs, err := tc.ObjectMetaDefinitions()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range defs {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{
		"io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1", "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
		"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
		"io.k8s.apimachinery.pkg.apis.meta.v1.Time",
	}
	if !slices.Equal(names, want) {
		t.Errorf("definitions %q, want %q", names, want)
	}
}

func TestClosure(t *testing.T) {
	ref := func(name string) spec.Schema { return *spec.RefSchema("#/components/schemas/" + name) }
	schemas := map[string]*spec.Schema{
		"a": {SchemaProps: spec.SchemaProps{Properties: map[string]spec.Schema{"b": ref("b")}}},
		"b": {SchemaProps: spec.SchemaProps{Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{AllOf: []spec.Schema{ref("c")}}}}}},
		"c": {SchemaProps: spec.SchemaProps{AdditionalProperties: &spec.SchemaOrBool{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Properties: map[string]spec.Schema{"self": ref("c"), "gone": ref("missing")}}}}}},
		"d": {SchemaProps: spec.SchemaProps{Properties: map[string]spec.Schema{"a": ref("a")}}},
	}
	for _, tc := range []struct {
		roots []string
		want  []string
	}{
		{[]string{"a"}, []string{"a", "b", "c"}},
		{[]string{"c"}, []string{"c"}},
		{[]string{"d"}, []string{"a", "b", "c", "d"}},
		{[]string{"missing"}, nil},
		{nil, nil},
	} {
		var got []string
		for name := range openapi.Closure(schemas, tc.roots...) {
			got = append(got, name)
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("closure of %q = %q, want %q", tc.roots, got, tc.want)
		}
	}
}
