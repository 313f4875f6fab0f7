package apiextensions

import (
	"fmt"
	"reflect"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/validation/spec"

	crschema "github.com/capstan-io/capstan/apiextensions/schema"
	"github.com/capstan-io/capstan/openapi"
)

// crdOpenAPI publishes the models of the custom resources of established
// CRDs in the dynamic part of the chain's OpenAPI catalog: /openapi/v2
// and the /openapi/v3 document of each served group version then show
// them, and only those documents are rebuilt when a CRD changes. The
// models are made when a document needs them, from the CRD as served
// then, and not kept.
type crdOpenAPI struct {
	catalog *openapi.DynamicCatalog // nil: the chain publishes no OpenAPI
	// current returns the CRD of that name as served now, nil if none.
	current func(name string) *apiextv1.CustomResourceDefinition
}

// newCRDOpenAPI publishes in the dynamic part of c, if it has one.
func newCRDOpenAPI(c openapi.Catalog, current func(name string) *apiextv1.CustomResourceDefinition) *crdOpenAPI {
	return &crdOpenAPI{catalog: openapi.Dynamic(c), current: current}
}

// update publishes the kinds of crd's served versions, replacing those it
// had.
func (o *crdOpenAPI) update(crd *apiextv1.CustomResourceDefinition) {
	if o.catalog == nil {
		return
	}
	key, name := openAPIKey(crd), crd.Name
	var gvks []schema.GroupVersionKind
	names := crd.Status.AcceptedNames
	for _, v := range crd.Spec.Versions {
		if v.Served {
			gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
			gvks = append(gvks, gv.WithKind(names.Kind), gv.WithKind(names.ListKind))
		}
	}
	o.catalog.SetLazy(name, key, gvks, func() []openapi.KindDefinition {
		// A CRD served now with the same key has the same models; one
		// changed since is published again under its own key.
		crd := o.current(name)
		if crd == nil || openAPIKey(crd) != key {
			return nil
		}
		return crdDefinitions(crd)
	})
}

// openAPIKey identifies what the models of crd are made from: its spec
// (which its generation counts) and accepted names.
func openAPIKey(crd *apiextv1.CustomResourceDefinition) string {
	return fmt.Sprintf("%s/%d/%v", crd.UID, crd.Generation, crd.Status.AcceptedNames)
}

// remove withdraws the definitions of crd.
func (o *crdOpenAPI) remove(crd *apiextv1.CustomResourceDefinition) {
	if o.catalog == nil {
		return
	}
	o.catalog.Remove(crd.Name)
}

// crdDefinitions are the models of the kind and the list kind of each
// served version of crd, under the accepted names the CRD is served with,
// in both forms, as kube publishes them:
//
//   - the kind: the version's schema with apiVersion, kind and metadata
//     (a reference to ObjectMeta), kube's swagger 2.0 stripping for v2,
//     or just an object where the schema is not structural (and, in v2,
//     where the root keeps unknown fields);
//   - the list kind: items of the kind and ListMeta metadata;
//   - both marked with their kinds and with the version's selectable
//     fields.
func crdDefinitions(crd *apiextv1.CustomResourceDefinition) []openapi.KindDefinition {
	names := crd.Status.AcceptedNames
	var out []openapi.KindDefinition
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: names.Kind}
		s := versionStructural(v)
		v2Struct := s
		if crd.Spec.PreserveUnknownFields {
			v2Struct = nil // an object of anything, for swagger 2.0 clients
		}
		kind := openapi.KindDefinition{
			GVK:          gvk,
			V2:           crschema.KindSchema(v2Struct, gvk, true, crschema.V2RefPrefix+crschema.ObjectMetaDefinition),
			V3:           crschema.KindSchema(s, gvk, false, crschema.V3RefPrefix+crschema.ObjectMetaDefinition),
			Dependencies: []string{crschema.ObjectMetaDefinition},
		}
		list := openapi.KindDefinition{
			GVK:          gvk.GroupVersion().WithKind(names.ListKind),
			V2:           crschema.ListSchema(gvk, names.ListKind, names.Plural, crschema.V2RefPrefix),
			V3:           crschema.ListSchema(gvk, names.ListKind, names.Plural, crschema.V3RefPrefix),
			Dependencies: []string{crschema.ListMetaDefinition, openapi.DefinitionName(gvk)},
		}
		if fields := selectableFields(v); fields != nil {
			for _, m := range []*spec.Schema{&kind.V2, &kind.V3, &list.V2, &list.V3} {
				m.AddExtension("x-kubernetes-selectable-fields", fields)
			}
		}
		shareSubschemas(&kind.V2, &kind.V3)
		out = append(out, kind, list)
	}
	return out
}

// versionStructural is the structural schema of a version; nil without a
// schema or with one that is not structural, which publish as objects of
// anything.
func versionStructural(v apiextv1.CustomResourceDefinitionVersion) *crschema.Structural {
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return nil
	}
	s, err := crschema.NewStructural(v.Schema.OpenAPIV3Schema)
	if err != nil {
		return nil
	}
	return s
}

// selectableFields is the x-kubernetes-selectable-fields extension of a
// version: the field paths without their leading dot; nil without any.
func selectableFields(v apiextv1.CustomResourceDefinitionVersion) []any {
	if len(v.SelectableFields) == 0 {
		return nil
	}
	out := make([]any, len(v.SelectableFields))
	for i, f := range v.SelectableFields {
		out[i] = map[string]any{"fieldPath": strings.TrimPrefix(f.JSONPath, ".")}
	}
	return out
}

// shareSubschemas makes the parts of a that equal those of b be b's: the
// swagger 2.0 and OpenAPI 3 models of a kind differ only where swagger
// cannot say what OpenAPI 3 does (defaults, nullable, anyOf, ...) and in
// their references, so most of their property maps, held once, serve both.
// A property map holds its schemas by value, a few KiB per map even for
// two properties: sharing them saves a good part of what the catalog
// keeps per CRD (BenchmarkCRDOpenAPI measures it). The schemas are read only once
// published, so sharing is safe; what differs stays a's own.
func shareSubschemas(a, b *spec.Schema) {
	if a == nil || b == nil {
		return
	}
	if a.Properties != nil && b.Properties != nil {
		if reflect.DeepEqual(a.Properties, b.Properties) {
			a.Properties = b.Properties
		} else {
			for k, ap := range a.Properties {
				if bp, ok := b.Properties[k]; ok {
					shareSubschemas(&ap, &bp)
					a.Properties[k] = ap
				}
			}
		}
	}
	if a.Items != nil && b.Items != nil {
		if reflect.DeepEqual(a.Items, b.Items) {
			a.Items = b.Items
		} else {
			shareSubschemas(a.Items.Schema, b.Items.Schema)
		}
	}
	if a.AdditionalProperties != nil && b.AdditionalProperties != nil {
		if reflect.DeepEqual(a.AdditionalProperties, b.AdditionalProperties) {
			a.AdditionalProperties = b.AdditionalProperties
		} else {
			shareSubschemas(a.AdditionalProperties.Schema, b.AdditionalProperties.Schema)
		}
	}
	if a.Extensions != nil && reflect.DeepEqual(a.Extensions, b.Extensions) {
		a.Extensions = b.Extensions
	}
}
