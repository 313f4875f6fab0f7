package openapi

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// DefinitionName is the definition name kube gives a kind that has no Go
// type, such as a custom resource's: the group with its labels reversed,
// the version and the kind. stable.example.com/v1 CronTab is
// com.example.stable.v1.CronTab.
func DefinitionName(gvk schema.GroupVersionKind) string {
	labels := strings.Split(gvk.Group, ".")
	slices.Reverse(labels)
	return strings.Join(labels, ".") + "." + gvk.Version + "." + gvk.Kind
}

// KindDefinition is the published schema of one kind, in both forms.
type KindDefinition struct {
	GVK schema.GroupVersionKind
	// V2 and V3 are the schemas, with references written for their form
	// (#/definitions/... and #/components/schemas/...). Defaults are
	// dropped from V2, as from every swagger 2.0 definition.
	V2, V3 spec.Schema
	// Dependencies are the names of the definitions the schemas refer to,
	// such as ObjectMeta's, which the documents must carry along.
	Dependencies []string
}

// DynamicCatalog holds definitions that come and go while the server
// runs: those of the custom resources of CRDs. Each owner (a CRD) sets
// and removes its kinds as a whole. Only kinds of group versions that
// hold a definition here are documented as custom resources.
//
// Its zero value is not usable: see NewDynamicCatalog.
type DynamicCatalog struct {
	mu     sync.RWMutex
	owners map[string][]*dynamicDef // by owner
	byName map[string]*dynamicDef   // by definition name
	byGVK  map[schema.GroupVersionKind]*dynamicDef
	// gvs are the group versions with kinds here.
	gvs map[schema.GroupVersion]*gvKinds
	// gen counts the changes, and is the source of stamps.
	gen uint64

	snaps [2]snapshot // of Definitions, by Form
}

// gvKinds is what the catalog knows of one group version.
type gvKinds struct {
	kinds int // in byGVK
	// stamp identifies what the group version's definitions are: a new
	// stamp, never used before, with every change of one of them.
	stamp uint64
}

// dynamicDef is one kind as published.
type dynamicDef struct {
	owner string
	gvk   schema.GroupVersionKind
	name  string
	defs  [2]common.OpenAPIDefinition // by Form
}

// snapshot is a definitions map made at one generation.
type snapshot struct {
	mu   sync.Mutex
	gen  uint64
	defs map[string]common.OpenAPIDefinition
}

var _ Catalog = (*DynamicCatalog)(nil)

// NewDynamicCatalog returns an empty DynamicCatalog.
func NewDynamicCatalog() *DynamicCatalog {
	return &DynamicCatalog{
		owners: map[string][]*dynamicDef{},
		byName: map[string]*dynamicDef{},
		byGVK:  map[schema.GroupVersionKind]*dynamicDef{},
		gvs:    map[schema.GroupVersion]*gvKinds{},
	}
}

// Set publishes the kinds of owner, replacing those it published before.
// Setting the same kinds again changes nothing, so documents are not
// rebuilt. The schemas become the catalog's: the caller must not modify
// them afterwards.
func (c *DynamicCatalog) Set(owner string, kinds []KindDefinition) {
	defs := make([]*dynamicDef, len(kinds))
	for i, k := range kinds {
		d := &dynamicDef{owner: owner, gvk: k.GVK, name: DefinitionName(k.GVK)}
		deps := slices.Clone(k.Dependencies)
		d.defs[V2] = common.OpenAPIDefinition{Schema: v2Schema(k.V2), Dependencies: deps}
		d.defs[V3] = common.OpenAPIDefinition{Schema: k.V3, Dependencies: deps}
		defs[i] = d
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.owners[owner]; ok && sameDefs(old, defs) {
		return
	}
	c.gen++
	c.removeLocked(owner)
	c.owners[owner] = defs
	for _, d := range defs {
		c.byName[d.name] = d
		gv := c.gvs[d.gvk.GroupVersion()]
		if gv == nil {
			gv = &gvKinds{}
			c.gvs[d.gvk.GroupVersion()] = gv
		}
		if _, ok := c.byGVK[d.gvk]; !ok {
			gv.kinds++
		}
		c.byGVK[d.gvk] = d
		gv.stamp = c.gen
	}
}

// Remove withdraws the kinds of owner.
func (c *DynamicCatalog) Remove(owner string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.owners[owner]; !ok {
		return
	}
	c.gen++
	c.removeLocked(owner)
}

// removeLocked drops owner's kinds (leaving those another owner has set
// since under the same names) and restamps their group versions. c.gen
// is already the new generation.
func (c *DynamicCatalog) removeLocked(owner string) {
	for _, d := range c.owners[owner] {
		if c.byName[d.name] == d {
			delete(c.byName, d.name)
		}
		gv := c.gvs[d.gvk.GroupVersion()]
		if gv == nil {
			continue // an earlier kind of owner took the last of it
		}
		gv.stamp = c.gen
		if c.byGVK[d.gvk] == d {
			delete(c.byGVK, d.gvk)
			gv.kinds--
		}
		if gv.kinds == 0 {
			// Left without kinds, the group version is no longer custom.
			delete(c.gvs, d.gvk.GroupVersion())
		}
	}
	delete(c.owners, owner)
}

func sameDefs(a, b []*dynamicDef) bool {
	return slices.EqualFunc(a, b, func(x, y *dynamicDef) bool {
		return x.gvk == y.gvk && reflect.DeepEqual(x.defs, y.defs)
	})
}

// Name returns the definition name of a published kind.
func (c *DynamicCatalog) Name(gvk schema.GroupVersionKind) (string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if d, ok := c.byGVK[gvk]; ok {
		return d.name, nil
	}
	return "", fmt.Errorf("no OpenAPI definition of %v", gvk)
}

// Definitions returns the published definitions. The map is made again
// only after a change.
func (c *DynamicCatalog) Definitions(form Form) map[string]common.OpenAPIDefinition {
	return c.snaps[form].get(c.Generation, func() (map[string]common.OpenAPIDefinition, uint64) {
		defs := map[string]common.OpenAPIDefinition{}
		return defs, c.addTo(form, defs)
	})
}

// Generation counts the changes of the catalog.
func (c *DynamicCatalog) Generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// addTo adds the definitions of form that defs lacks, and returns the
// generation they are of.
func (c *DynamicCatalog) addTo(form Form, defs map[string]common.OpenAPIDefinition) uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for name, d := range c.byName {
		if _, ok := defs[name]; !ok {
			defs[name] = d.defs[form]
		}
	}
	return c.gen
}

func (c *DynamicCatalog) has(name string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.byName[name]
	return ok
}

// stamp identifies the present definitions of gv's kinds; 0 when the
// catalog holds none.
func (c *DynamicCatalog) stamp(gv schema.GroupVersion) uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if k, ok := c.gvs[gv]; ok {
		return k.stamp
	}
	return 0
}

// get returns the snapshot if it is of the present generation, and makes
// it otherwise.
func (s *snapshot) get(generation func() uint64, build func() (map[string]common.OpenAPIDefinition, uint64)) map[string]common.OpenAPIDefinition {
	gen := generation()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.defs == nil || s.gen != gen {
		s.defs, s.gen = build()
	}
	return s.defs
}

// WithDynamic returns the catalog of static's definitions and dynamic's.
// Where both have a definition of the same name, static's is kept.
func WithDynamic(static Catalog, dynamic *DynamicCatalog) Catalog {
	return &unionCatalog{static: static, dynamic: dynamic}
}

// Dynamic returns the DynamicCatalog of c: c itself or the dynamic part
// of a catalog made by WithDynamic; nil if it has none.
func Dynamic(c Catalog) *DynamicCatalog {
	switch c := c.(type) {
	case *DynamicCatalog:
		return c
	case *unionCatalog:
		return c.dynamic
	}
	return nil
}

type unionCatalog struct {
	static  Catalog
	dynamic *DynamicCatalog
	snaps   [2]snapshot // of Definitions, by Form
}

func (u *unionCatalog) Name(gvk schema.GroupVersionKind) (string, error) {
	name, err := u.static.Name(gvk)
	if err == nil {
		return name, nil
	}
	if name, derr := u.dynamic.Name(gvk); derr == nil {
		return name, nil
	}
	return "", err
}

// Definitions returns static's definitions and dynamic's in one map, made
// again only after the dynamic catalog changed.
func (u *unionCatalog) Definitions(form Form) map[string]common.OpenAPIDefinition {
	return u.snaps[form].get(u.dynamic.Generation, func() (map[string]common.OpenAPIDefinition, uint64) {
		defs := maps.Clone(u.static.Definitions(form))
		if defs == nil {
			defs = map[string]common.OpenAPIDefinition{}
		}
		return defs, u.dynamic.addTo(form, defs)
	})
}

func (u *unionCatalog) has(name string) bool {
	if _, ok := u.static.Definitions(V2)[name]; ok {
		return true
	}
	return u.dynamic.has(name)
}

func (u *unionCatalog) stamp(gv schema.GroupVersion) uint64 { return u.dynamic.stamp(gv) }

// changing is what the service asks of catalogs whose definitions change
// at run time.
type changing interface {
	Generation() uint64
	// stamp identifies the present definitions of the custom kinds of gv;
	// 0 when gv has none.
	stamp(gv schema.GroupVersion) uint64
}

func (u *unionCatalog) Generation() uint64 { return u.dynamic.Generation() }

var (
	_ changing = (*DynamicCatalog)(nil)
	_ changing = (*unionCatalog)(nil)
)

// hasDefinition tells whether c has a definition of the name, without
// making a map of every definition where c can say so directly.
func hasDefinition(c Catalog, name string) bool {
	if h, ok := c.(interface{ has(string) bool }); ok {
		return h.has(name)
	}
	_, ok := c.Definitions(V2)[name]
	return ok
}
