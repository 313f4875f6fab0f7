// Package openapi serves the OpenAPI documents of the server chain: the
// swagger 2.0 document at /openapi/v2, and at /openapi/v3 the OpenAPI 3.0
// documents of each group version with the discovery root that lists them.
// The documents are built from what the discovery Registry lists and the
// definitions a Catalog holds, lazily on the first request, and rebuilt
// only where the Registry changed.
package openapi

import (
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/schemamutation"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Form is the OpenAPI version a document is written in; the two refer to
// definitions differently.
type Form int

const (
	// V2 is swagger 2.0: references are #/definitions/<name>.
	V2 Form = iota
	// V3 is OpenAPI 3.0: references are #/components/schemas/<name>.
	V3
)

// extensionGVK lists the kinds a definition is the schema of.
const extensionGVK = "x-kubernetes-group-version-kind"

// A Catalog knows the OpenAPI definitions of the kinds a server serves.
type Catalog interface {
	// Name returns the definition name of a kind's type, such as
	// io.k8s.api.core.v1.ConfigMap for core/v1 ConfigMap.
	Name(gvk schema.GroupVersionKind) (string, error)
	// Definitions returns every definition by name, with references
	// written for form. The map and its schemas are shared and read
	// concurrently: never modify them.
	Definitions(form Form) map[string]common.OpenAPIDefinition
}

// NewCatalog returns the Catalog of the Go types in scheme, whose
// definitions openapi-gen wrote into defs. Each definition of a type the
// scheme knows is marked with its kinds, as kube marks them.
func NewCatalog(scheme *runtime.Scheme, defs common.GetOpenAPIDefinitions) Catalog {
	return &schemeCatalog{scheme: scheme, get: defs}
}

type schemeCatalog struct {
	scheme *runtime.Scheme
	get    common.GetOpenAPIDefinitions

	// by Form: made for the first document that needs them and kept, as
	// documents are made again whenever discovery changes
	mu   [2]sync.Mutex
	defs [2]map[string]common.OpenAPIDefinition
}

func (c *schemeCatalog) Name(gvk schema.GroupVersionKind) (string, error) {
	name, err := c.scheme.ToOpenAPIDefinitionName(gvk)
	if err != nil {
		return "", fmt.Errorf("no OpenAPI definition name for %v: %w", gvk, err)
	}
	return name, nil
}

func (c *schemeCatalog) Definitions(form Form) map[string]common.OpenAPIDefinition {
	c.mu[form].Lock()
	defer c.mu[form].Unlock()
	if c.defs[form] == nil {
		c.defs[form] = c.build(form)
	}
	return c.defs[form]
}

// definitionsForOneUse returns the kept definitions if a document needed
// them already, and otherwise new ones that it does not keep: the several
// megabytes of them are garbage once the caller made what it keeps.
func (c *schemeCatalog) definitionsForOneUse(form Form) map[string]common.OpenAPIDefinition {
	c.mu[form].Lock()
	defs := c.defs[form]
	c.mu[form].Unlock()
	if defs != nil {
		return defs
	}
	return c.build(form)
}

// DefinitionsForOneUse returns c's definitions for a caller that reads
// them once and keeps only what it derives from them (a type converter,
// the few schemas it refers to): a catalog that would otherwise make and
// keep them for good makes them without keeping them. The same rules as
// Definitions' apply: never modify them.
func DefinitionsForOneUse(c Catalog, form Form) map[string]common.OpenAPIDefinition {
	if o, ok := c.(interface {
		definitionsForOneUse(Form) map[string]common.OpenAPIDefinition
	}); ok {
		return o.definitionsForOneUse(form)
	}
	return c.Definitions(form)
}

// build makes the definitions of one form, ready for kube-openapi's
// builders to use as they are: the kinds extension is already set (so the
// builders need not add it to shared maps), v2 schemas are substituted and
// stripped of defaults as kube serves them, and v3 ones lose the embedded
// v2 schema.
func (c *schemeCatalog) build(form Form) map[string]common.OpenAPIDefinition {
	prefix := "#/definitions/"
	if form == V3 {
		prefix = "#/components/schemas/"
	}
	defs := c.get(func(name string) spec.Ref {
		return spec.MustCreateRef(prefix + common.EscapeJsonPointer(name))
	})
	kinds := kindsByName(c.scheme)
	for name, d := range defs {
		if form == V2 {
			d.Schema = v2Schema(d.Schema)
		}
		d.Schema.Extensions = copyExtensions(d.Schema.Extensions)
		delete(d.Schema.Extensions, common.ExtensionV2Schema)
		if gvks, ok := kinds[name]; ok {
			d.Schema.Extensions[extensionGVK] = gvks
		}
		if len(d.Schema.Extensions) == 0 {
			d.Schema.Extensions = nil
		}
		defs[name] = d
	}
	return defs
}

// v2Schema is the schema swagger 2.0 shows: the embedded v2 variant where
// there is one (for types whose v3 schema swagger cannot express), without
// defaults anywhere.
func v2Schema(s spec.Schema) spec.Schema {
	if v, ok := s.Extensions[common.ExtensionV2Schema]; ok {
		if alt, ok := v.(spec.Schema); ok {
			s = alt
		}
	}
	w := schemamutation.Walker{
		SchemaCallback: func(s *spec.Schema) *spec.Schema {
			if s.Default == nil {
				return s
			}
			c := *s
			c.Default = nil
			return &c
		},
		RefCallback: schemamutation.RefCallbackNoop,
	}
	return *w.WalkSchema(&s)
}

func copyExtensions(in spec.Extensions) spec.Extensions {
	out := make(spec.Extensions, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	return out
}

// kindsByName lists the kinds of each definition name the scheme knows, in
// the JSON shape of the extension, sorted by group, version and kind.
func kindsByName(scheme *runtime.Scheme) map[string][]any {
	byName := map[string][]schema.GroupVersionKind{}
	for gvk := range scheme.AllKnownTypes() {
		if gvk.Version == runtime.APIVersionInternal {
			continue
		}
		name, err := scheme.ToOpenAPIDefinitionName(gvk)
		if err != nil {
			continue
		}
		byName[name] = append(byName[name], gvk)
	}
	out := make(map[string][]any, len(byName))
	for name, gvks := range byName {
		sort.Slice(gvks, func(i, j int) bool {
			a, b := gvks[i], gvks[j]
			if a.Group != b.Group {
				return a.Group < b.Group
			}
			if a.Version != b.Version {
				return a.Version < b.Version
			}
			return a.Kind < b.Kind
		})
		list := make([]any, len(gvks))
		for i, gvk := range gvks {
			list[i] = map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind}
		}
		out[name] = list
	}
	return out
}
