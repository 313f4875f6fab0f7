package apiextensions

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"

	crschema "github.com/capstan-io/capstan/apiextensions/schema"
	"github.com/capstan-io/capstan/openapi"
)

// costCRD is the CRD of capstan-load's crds workload (loadtest/crdobjects.go),
// established: one namespaced version with the status subresource and a
// schema of ten spec and four status fields. %[1]d numbers it.
const costCRD = `
metadata:
  name: widget%04[1]ds.g%04[1]d.bench.example.com
spec:
  group: g%04[1]d.bench.example.com
  scope: Namespaced
  names: {kind: Widget%04[1]d, listKind: Widget%04[1]dList, plural: widget%04[1]ds, singular: widget%04[1]d, categories: [capstan-load]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Image, type: string, jsonPath: .spec.image}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        description: A Widget%04[1]d of group g%04[1]d.bench.example.com, made by capstan-load.
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            description: Widget%04[1]dSpec is the desired state of a Widget%04[1]d.
            required: [image]
            properties:
              image: {type: string, minLength: 1, description: The container image to run.}
              replicas: {type: integer, format: int32, minimum: 0, default: 1}
              paused: {type: boolean}
              mode: {type: string, enum: [Auto, Manual], default: Auto}
              schedule: {type: string, maxLength: 64}
              timeoutSeconds: {type: integer, format: int64, minimum: 1}
              command: {type: array, items: {type: string}}
              env:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties: {name: {type: string}, value: {type: string}}
              resources:
                type: object
                properties: {cpu: {type: string}, memory: {type: string}}
              nodeSelector: {type: object, additionalProperties: {type: string}}
          status:
            type: object
            properties:
              phase: {type: string, enum: [Pending, Running, Failed]}
              readyReplicas: {type: integer, format: int32}
              observedGeneration: {type: integer, format: int64}
              conditions:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [type]
                items:
                  type: object
                  required: [type, status]
                  properties:
                    type: {type: string}
                    status: {type: string, enum: ["True", "False", Unknown]}
                    reason: {type: string}
                    message: {type: string}
                    lastTransitionTime: {type: string, format: date-time}
status:
  acceptedNames: {kind: Widget%04[1]d, listKind: Widget%04[1]dList, plural: widget%04[1]ds, singular: widget%04[1]d, categories: [capstan-load]}
  conditions:
  - {type: NamesAccepted, status: "True", reason: NoConflicts}
  - {type: Established, status: "True", reason: InitialNamesAccepted}
`

func costCRDs(b *testing.B, n int) []*apiextv1.CustomResourceDefinition {
	b.Helper()
	out := make([]*apiextv1.CustomResourceDefinition, n)
	for i := range out {
		out[i] = &apiextv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(fmt.Appendf(nil, costCRD, i), out[i]); err != nil {
			b.Fatal(err)
		}
	}
	return out
}

// retained is the live heap that keep holds after f built it, per item:
// what the server keeps per CRD, not what building it allocated.
func retained(f func() any, items int) float64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	keep := f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(items)
}

// byName finds the CRD of a name among crds, as the handler finds the
// served one.
func byName(crds []*apiextv1.CustomResourceDefinition) func(string) *apiextv1.CustomResourceDefinition {
	return func(name string) *apiextv1.CustomResourceDefinition {
		for _, crd := range crds {
			if crd.Name == name {
				return crd
			}
		}
		return nil
	}
}

// BenchmarkCRDOpenAPI is what publishing a CRD's OpenAPI definitions
// costs: the time and allocations of one update, and the heap the dynamic
// catalog keeps per CRD (retained-B/crd, over 200 CRDs).
func BenchmarkCRDOpenAPI(b *testing.B) {
	const n = 200
	crds := costCRDs(b, n)
	b.Run("retained", func(b *testing.B) {
		var per float64
		for b.Loop() {
			per = retained(func() any {
				o := newCRDOpenAPI(openapi.NewDynamicCatalog(), byName(crds))
				for _, crd := range crds {
					o.update(crd)
				}
				return o
			}, n)
		}
		b.ReportMetric(per, "retained-B/crd")
	})
	b.Run("update", func(b *testing.B) {
		o := newCRDOpenAPI(openapi.NewDynamicCatalog(), byName(crds))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			o.update(crds[i%n])
			o.remove(crds[i%n])
			i++
		}
	})
}

// A read-only endpoint's schema is made from the CRD as it is when first
// needed, once.
func TestLazySchema(t *testing.T) {
	crd := &apiextv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(fmt.Appendf(nil, costCRD, 7), crd); err != nil {
		t.Fatal(err)
	}
	calls := 0
	l := &lazySchema{crd: func() *apiextv1.CustomResourceDefinition { calls++; return crd }, version: "v1"}
	s := l.get()
	if s == nil || s.Properties["spec"].Properties["replicas"].Default == nil {
		t.Fatalf("lazy schema = %+v, want the v1 schema with its defaults", s)
	}
	if l.get() != s || calls != 1 || l.crd != nil {
		t.Errorf("the schema was made %d times, or the CRD kept", calls)
	}
	want, err := versionSchema(crd.Spec.Versions[0])
	if err != nil || !reflect.DeepEqual(s, want) {
		t.Errorf("lazy schema differs from versionSchema's: %v", err)
	}
	if loaded := loadedSchema(want); loaded.get() != want {
		t.Error("loadedSchema does not return its schema")
	}
}

// The swagger 2.0 model of a kind shares the property maps it has in
// common with the OpenAPI 3 one, and says the same as it would alone.
func TestShareSubschemas(t *testing.T) {
	crd := &apiextv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(fmt.Appendf(nil, costCRD, 3), crd); err != nil {
		t.Fatal(err)
	}
	kind := crdDefinitions(crd)[0]
	s := versionStructural(crd.Spec.Versions[0])
	gvk := kind.GVK
	alone := map[string]spec.Schema{
		"v2": crschema.KindSchema(s, gvk, true, crschema.V2RefPrefix+crschema.ObjectMetaDefinition),
		"v3": crschema.KindSchema(s, gvk, false, crschema.V3RefPrefix+crschema.ObjectMetaDefinition),
	}
	if !jsonEqual(kind.V2, alone["v2"]) || !jsonEqual(kind.V3, alone["v3"]) {
		t.Fatalf("shared models differ from the models made alone")
	}
	same := func(a, b map[string]spec.Schema) bool {
		return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
	}
	v2, v3 := kind.V2.Properties, kind.V3.Properties
	if !same(v2["status"].Properties, v3["status"].Properties) ||
		!same(v2["spec"].Properties["resources"].Properties, v3["spec"].Properties["resources"].Properties) {
		t.Error("status and spec.resources, the same in both forms, are not shared")
	}
	if same(v2, v3) || same(v2["spec"].Properties, v3["spec"].Properties) {
		t.Error("the root or spec, whose references and defaults differ, are shared")
	}
	if v2["spec"].Properties["replicas"].Default != nil || v3["spec"].Properties["replicas"].Default == nil {
		t.Error("the default of spec.replicas is in v2 or not in v3")
	}
}
