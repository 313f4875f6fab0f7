package apiextensions

import (
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
// They are the server's type converter's, made in the pass that builds it
// (warmed at start), when it keeps them; else made once from the catalog,
// a pass over every built-in definition.
type metaDefinitions struct {
	types   managedfields.TypeConverter
	catalog openapi.Catalog
	once    sync.Once
	defs    map[string]*spec.Schema
}

func (m *metaDefinitions) get() map[string]*spec.Schema {
	m.once.Do(func() {
		if kept, ok := m.types.(interface {
			ObjectMetaDefinitions() (map[string]*spec.Schema, error)
		}); ok {
			if defs, err := kept.ObjectMetaDefinitions(); err == nil {
				m.defs = defs
				return
			}
		}
		m.defs = map[string]*spec.Schema{}
		if m.catalog == nil {
			return
		}
		all := map[string]*spec.Schema{}
		for name, d := range openapi.DefinitionsForOneUse(m.catalog, openapi.V3) {
			s := d.Schema
			all[name] = &s
		}
		m.defs = openapi.Closure(all, objectMetaName)
	})
	return m.defs
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
