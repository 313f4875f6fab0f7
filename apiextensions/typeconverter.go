package apiextensions

import (
	"strings"
	"sync"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"

	crschema "github.com/capstan-io/capstan/apiextensions/schema"
	"github.com/capstan-io/capstan/openapi"
)

// objectMetaName is the OpenAPI definition of metadata.
const objectMetaName = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// metaDefinitions are ObjectMeta's definition and those it refers to, in
// OpenAPI v3 form: what a custom resource's schema needs besides its own.
type metaDefinitions struct {
	catalog openapi.Catalog
	once    sync.Once
	defs    map[string]*spec.Schema
}

func (m *metaDefinitions) get() map[string]*spec.Schema {
	m.once.Do(func() {
		m.defs = map[string]*spec.Schema{}
		if m.catalog == nil {
			return
		}
		all := openapi.DefinitionsForOneUse(m.catalog, openapi.V3)
		var visit func(name string)
		visit = func(name string) {
			if _, seen := m.defs[name]; seen {
				return
			}
			d, ok := all[name]
			if !ok {
				return
			}
			s := d.Schema
			m.defs[name] = &s
			for _, ref := range refsOf(&s) {
				visit(ref)
			}
		}
		visit(objectMetaName)
	})
	return m.defs
}

// refsOf lists the definition names a schema refers to.
func refsOf(s *spec.Schema) []string {
	var out []string
	var walk func(s *spec.Schema)
	walk = func(s *spec.Schema) {
		if s == nil {
			return
		}
		if ref := s.Ref.String(); ref != "" {
			out = append(out, ref[strings.LastIndex(ref, "/")+1:])
		}
		for _, p := range s.Properties {
			walk(&p)
		}
		if s.Items != nil {
			walk(s.Items.Schema)
			for i := range s.Items.Schemas {
				walk(&s.Items.Schemas[i])
			}
		}
		if s.AdditionalProperties != nil {
			walk(s.AdditionalProperties.Schema)
		}
		for i := range s.AllOf {
			walk(&s.AllOf[i])
		}
	}
	walk(s)
	return out
}

// typeConverter types the custom resources of every served version of crd
// for managed fields and server-side apply, from the same schemas the
// server publishes, so that list types and map keys are the CRD's.
func (h *crdHandler) typeConverter(crd *apiextv1.CustomResourceDefinition, structurals map[string]*crschema.Structural) (managedfields.TypeConverter, error) {
	defs := map[string]*spec.Schema{}
	for name, s := range h.meta.get() {
		defs[name] = s
	}
	names := crd.Status.AcceptedNames
	for version, s := range structurals {
		gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: names.Kind}
		kind := crschema.KindSchema(s, gvk, false, "#/components/schemas/"+objectMetaName)
		defs[openapi.DefinitionName(gvk)] = &kind
	}
	preserve := false
	return managedfields.NewTypeConverter(defs, preserve)
}
