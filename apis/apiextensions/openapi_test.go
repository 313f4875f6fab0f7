package apiextensions_test

import (
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/openapi"
	"github.com/capstan-io/capstan/openapi/generated"
)

const modelPrefix = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."

// The definitions carry kube's names, so that clients and server-side apply
// find the models they know from kube-apiserver.
func TestOpenAPIDefinitionNames(t *testing.T) {
	defs := generated.GetOpenAPIDefinitions(func(path string) spec.Ref { return spec.MustCreateRef(path) })
	catalog := openapi.NewCatalog(scheme.Scheme, generated.GetOpenAPIDefinitions)
	v3 := catalog.Definitions(openapi.V3)
	for _, kind := range []string{"CustomResourceDefinition", "CustomResourceDefinitionList", "ConversionReview"} {
		gvk := apiextv1.SchemeGroupVersion.WithKind(kind)
		name, err := scheme.Scheme.ToOpenAPIDefinitionName(gvk)
		if err != nil {
			t.Fatal(err)
		}
		if want := modelPrefix + kind; name != want {
			t.Errorf("%s: name %q, want %q", kind, name, want)
		}
		if _, ok := defs[name]; !ok {
			t.Errorf("%s: GetOpenAPIDefinitions has no %s", kind, name)
		}
		gvks, _ := v3[name].Schema.Extensions["x-kubernetes-group-version-kind"].([]any)
		found := false
		for _, g := range gvks {
			if m, _ := g.(map[string]any); m["group"] == gvk.Group && m["version"] == gvk.Version && m["kind"] == gvk.Kind {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: definition's kinds %v lack %v", kind, gvks, gvk)
		}
	}
	// Every type of the package has a definition under kube's name.
	for _, name := range []string{"JSONSchemaProps", "JSON", "JSONSchemaPropsOrArray", "JSONSchemaPropsOrBool",
		"JSONSchemaPropsOrStringArray", "ValidationRule", "WebhookClientConfig", "ServiceReference", "SelectableField"} {
		if _, ok := defs[modelPrefix+name]; !ok {
			t.Errorf("GetOpenAPIDefinitions has no %s", modelPrefix+name)
		}
	}
}

// Server-side apply types a definition by these schemas: conditions are a
// map keyed by type, versions an atomic list, and schemas of any shape
// (values without a single type included) convert.
func TestTypeConverterTypesCRDs(t *testing.T) {
	tc := openapi.TypeConverter(openapi.NewCatalog(scheme.Scheme, generated.GetOpenAPIDefinitions))
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(fullCRD), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tv, err := tc.ObjectToTyped(obj)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	set.Iterate(func(p fieldpath.Path) { paths[p.String()] = true })
	for _, want := range []string{
		`.status.conditions[type="Established"].status`,
		`.spec.versions`,
		`.spec.names.shortNames`,
	} {
		if !paths[want] {
			t.Errorf("field set lacks %s:\n%s", want, set.String())
		}
	}
	for _, unwanted := range []string{`.spec.versions[name="v1"]`, `.spec.versions[0]`} {
		if paths[unwanted] {
			t.Errorf("field set has %s: versions should be atomic", unwanted)
		}
	}

	// The unstructured form converts too, as kube's apply does with it.
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tc.ObjectToTyped(&unstructured.Unstructured{Object: u}); err != nil {
		t.Fatal(err)
	}
}
