package apiextensions

import (
	"encoding/json"
	"reflect"
	"runtime"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/openapi"
)

// openAPICRD is a CRD with a served version (with defaults, a nullable
// field, an int-or-string, an embedded resource and a selectable field),
// an unserved one, and accepted names that differ from the spec's.
const openAPICRD = `
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, listKind: CronTabList}
  versions:
  - name: v1
    served: true
    storage: true
    selectableFields:
    - jsonPath: .spec.image
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [image, note]
            properties:
              image: {type: string, default: busybox}
              note: {type: string, nullable: true}
              port: {x-kubernetes-int-or-string: true}
              template:
                type: object
                x-kubernetes-embedded-resource: true
                x-kubernetes-preserve-unknown-fields: true
  - name: v0
    served: false
    storage: false
    schema:
      openAPIV3Schema: {type: object}
status:
  acceptedNames: {plural: crontabs, singular: crontab, kind: CronTab, listKind: CronTabList}
`

func decodeCRD(t *testing.T, doc string) *apiextv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal([]byte(doc), crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

func defsByKind(defs []openapi.KindDefinition) map[string]openapi.KindDefinition {
	out := map[string]openapi.KindDefinition{}
	for _, d := range defs {
		out[d.GVK.Version+"/"+d.GVK.Kind] = d
	}
	return out
}

func TestCRDDefinitions(t *testing.T) {
	crd := decodeCRD(t, openAPICRD)
	defs := defsByKind(crdDefinitions(crd))
	if len(defs) != 2 {
		t.Fatalf("definitions of %v, want v1 CronTab and CronTabList only", reflect.ValueOf(defs).MapKeys())
	}
	kind, list := defs["v1/CronTab"], defs["v1/CronTabList"]

	if got := refOf(kind.V3.Properties["metadata"]); got != "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
		t.Errorf("v3 metadata refers to %q", got)
	}
	if got := refOf(kind.V2.Properties["metadata"]); got != "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" {
		t.Errorf("v2 metadata refers to %q", got)
	}
	if !reflect.DeepEqual(kind.Dependencies, []string{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}) {
		t.Errorf("the kind depends on %v", kind.Dependencies)
	}
	gvk := []any{map[string]any{"group": "stable.example.com", "version": "v1", "kind": "CronTab"}}
	for form, s := range map[string]spec.Schema{"v2": kind.V2, "v3": kind.V3} {
		if !jsonEqual(s.Extensions["x-kubernetes-group-version-kind"], gvk) {
			t.Errorf("%s kinds = %v", form, s.Extensions["x-kubernetes-group-version-kind"])
		}
		if !jsonEqual(s.Extensions["x-kubernetes-selectable-fields"], []any{map[string]any{"fieldPath": "spec.image"}}) {
			t.Errorf("%s selectable fields = %v", form, s.Extensions["x-kubernetes-selectable-fields"])
		}
		if _, ok := s.Properties["apiVersion"]; !ok {
			t.Errorf("%s has no apiVersion", form)
		}
	}

	spec3, spec2 := kind.V3.Properties["spec"], kind.V2.Properties["spec"]
	if spec3.Properties["image"].Default != "busybox" {
		t.Error("v3 lost the default of spec.image")
	}
	if len(spec3.Properties["port"].AnyOf) != 2 {
		t.Errorf("v3 spec.port = %+v, want anyOf integer and string", spec3.Properties["port"].SchemaProps)
	}
	if _, ok := spec3.Properties["template"].Properties["metadata"]; !ok {
		t.Error("v3 embedded resource has no metadata")
	}
	// swagger 2.0 as kube publishes it.
	if spec2.Properties["image"].Default != nil {
		t.Error("v2 keeps the default of spec.image")
	}
	if note := spec2.Properties["note"]; len(note.Type) != 0 {
		t.Errorf("v2 nullable spec.note has type %v", note.Type)
	}
	if !reflect.DeepEqual(spec2.Required, []string{"image"}) {
		t.Errorf("v2 spec requires %v, want the nullable field dropped", spec2.Required)
	}
	if len(spec2.Properties["port"].AnyOf) != 0 {
		t.Error("v2 keeps anyOf")
	}
	if tmpl := spec2.Properties["template"]; len(tmpl.Properties) != 0 || len(tmpl.Type) != 0 {
		t.Errorf("v2 preserve-unknown-fields object = %+v, want untyped without properties", tmpl.SchemaProps)
	}

	if got := list.V3.Properties["items"].Items.Schema.Ref.String(); got != "#/components/schemas/com.example.stable.v1.CronTab" {
		t.Errorf("v3 list items refer to %q", got)
	}
	if got := refOf(list.V2.Properties["metadata"]); got != "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta" {
		t.Errorf("v2 list metadata refers to %q", got)
	}
	if !reflect.DeepEqual(list.Dependencies, []string{"io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", "com.example.stable.v1.CronTab"}) {
		t.Errorf("the list depends on %v", list.Dependencies)
	}
}

// Kinds are published under the accepted names, which discovery lists.
func TestCRDDefinitionsAcceptedNames(t *testing.T) {
	crd := decodeCRD(t, openAPICRD)
	crd.Spec.Names.Kind, crd.Spec.Names.ListKind = "Renamed", "RenamedList"
	defs := defsByKind(crdDefinitions(crd))
	if _, ok := defs["v1/CronTab"]; !ok {
		t.Errorf("not published under the accepted kind: %v", reflect.ValueOf(defs).MapKeys())
	}
}

// A root that keeps unknown fields, and spec.preserveUnknownFields, leave
// swagger 2.0 an object of anything; v3 keeps the schema.
func TestCRDDefinitionsPreserveUnknownFields(t *testing.T) {
	crd := decodeCRD(t, openAPICRD)
	crd.Spec.PreserveUnknownFields = true
	kind := defsByKind(crdDefinitions(crd))["v1/CronTab"]
	if len(kind.V2.Properties) != 0 || !reflect.DeepEqual([]string(kind.V2.Type), []string{"object"}) {
		t.Errorf("v2 = %+v, want an object of anything", kind.V2.SchemaProps)
	}
	if _, ok := kind.V3.Properties["spec"]; !ok {
		t.Error("v3 lost the schema")
	}
	if kind.V2.Extensions["x-kubernetes-group-version-kind"] == nil {
		t.Error("v2 lost the kind")
	}
}

// update and remove publish in the dynamic part of the chain's catalog.
func TestCRDOpenAPIPublishes(t *testing.T) {
	dyn := openapi.NewDynamicCatalog()
	crd := decodeCRD(t, openAPICRD)
	served, made := crd, 0
	o := newCRDOpenAPI(dyn, func(name string) *apiextv1.CustomResourceDefinition {
		made++
		if served == nil || name != served.Name {
			return nil
		}
		return served
	})
	gvk := schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}

	o.update(crd)
	if name, err := dyn.Name(gvk); err != nil || name != "com.example.stable.v1.CronTab" {
		t.Fatalf("Name(%v) = %q, %v", gvk, name, err)
	}
	if made != 0 {
		t.Errorf("models made %d times before any document needed them", made)
	}
	if _, ok := dyn.Definitions(openapi.V3)["com.example.stable.v1.CronTabList"]; !ok {
		t.Error("no list definition")
	}
	if made == 0 {
		t.Error("definitions without the models being made")
	}
	gen := dyn.Generation()
	o.update(decodeCRD(t, openAPICRD))
	if dyn.Generation() != gen {
		t.Error("publishing an unchanged CRD again changed the catalog")
	}
	// A CRD served since with another spec has no models under the key
	// published for the older one: its own update publishes them.
	changed := crd.DeepCopy()
	changed.Generation++
	served = changed
	runtime.GC() // the definitions are held weakly
	if _, ok := dyn.Definitions(openapi.V3)["com.example.stable.v1.CronTab"]; ok {
		t.Error("models of a spec no longer served")
	}
	o.update(changed)
	if _, ok := dyn.Definitions(openapi.V3)["com.example.stable.v1.CronTab"]; !ok {
		t.Error("no models after the update")
	}
	o.remove(crd)
	if len(dyn.Definitions(openapi.V2)) != 0 {
		t.Error("remove left definitions")
	}

	// Without OpenAPI, nothing to do.
	newCRDOpenAPI(nil, nil).update(crd)
	newCRDOpenAPI(nil, nil).remove(crd)
}

func refOf(s spec.Schema) string { return s.Ref.String() }

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
