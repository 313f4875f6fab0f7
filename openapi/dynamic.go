package openapi

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"weak"

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

// dynamicDef is one kind as published: its definitions, or how to make
// them.
type dynamicDef struct {
	owner string
	gvk   schema.GroupVersionKind
	name  string
	defs  [2]common.OpenAPIDefinition // by Form; unset while lazy
	// lazy makes the definitions of the owner's kinds on demand: they are
	// not kept, but made again for each document built (see SetLazy).
	lazy *lazyOwner
}

// lazyOwner is the kinds of one owner set with SetLazy.
type lazyOwner struct {
	key   string
	build func() []KindDefinition
}

// definitions returns d's definitions of form, made now if d is lazy.
// made caches what lazy owners made during one call of a caller.
func (d *dynamicDef) definition(form Form, made map[*lazyOwner]map[string][2]common.OpenAPIDefinition) (common.OpenAPIDefinition, bool) {
	if d.lazy == nil {
		return d.defs[form], true
	}
	defs, ok := made[d.lazy]
	if !ok {
		defs = map[string][2]common.OpenAPIDefinition{}
		for _, k := range d.lazy.build() {
			defs[DefinitionName(k.GVK)] = kindDefinitions(k)
		}
		made[d.lazy] = defs
	}
	def, ok := defs[d.name]
	return def[form], ok
}

// kindDefinitions are the definitions of k, in both forms.
func kindDefinitions(k KindDefinition) [2]common.OpenAPIDefinition {
	deps := slices.Clone(k.Dependencies)
	var out [2]common.OpenAPIDefinition
	out[V2] = common.OpenAPIDefinition{Schema: v2Schema(k.V2), Dependencies: deps}
	out[V3] = common.OpenAPIDefinition{Schema: k.V3, Dependencies: deps}
	return out
}

// snapshot is a definitions map made at one generation. It is held
// weakly: documents are built rarely and kept by the service, so the map
// (which holds every custom kind's definitions, made on demand) lives
// only while documents are being built, and is made again after a
// garbage collection.
type snapshot struct {
	mu   sync.Mutex
	gen  uint64
	defs weak.Pointer[definitionMap]
}

type definitionMap struct {
	m map[string]common.OpenAPIDefinition
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
		defs[i] = &dynamicDef{owner: owner, gvk: k.GVK, name: DefinitionName(k.GVK), defs: kindDefinitions(k)}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.owners[owner]; ok && sameDefs(old, defs) {
		return
	}
	c.setLocked(owner, defs)
}

// SetLazy publishes the kinds of owner like Set, but makes their
// definitions only when a document needs them, with build, which must
// return the kinds gvks names (others are ignored) and may be called any
// time, concurrently. Nothing of what build makes is kept past the
// building of the documents: a custom resource's definitions, the larger
// part of what an idle CRD would hold, cost nothing until /openapi/v2 or
// the /openapi/v3 document of its group version is built. key identifies
// what build makes: setting the same key again changes nothing.
func (c *DynamicCatalog) SetLazy(owner, key string, gvks []schema.GroupVersionKind, build func() []KindDefinition) {
	lazy := &lazyOwner{key: key, build: build}
	defs := make([]*dynamicDef, len(gvks))
	for i, gvk := range gvks {
		defs[i] = &dynamicDef{owner: owner, gvk: gvk, name: DefinitionName(gvk), lazy: lazy}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.owners[owner]; ok && len(old) > 0 && old[0].lazy != nil && old[0].lazy.key == key &&
		slices.EqualFunc(old, defs, func(x, y *dynamicDef) bool { return x.gvk == y.gvk }) {
		return
	}
	c.setLocked(owner, defs)
}

// setLocked replaces the kinds of owner with defs.
func (c *DynamicCatalog) setLocked(owner string, defs []*dynamicDef) {
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
		return x.gvk == y.gvk && x.lazy == nil && y.lazy == nil && reflect.DeepEqual(x.defs, y.defs)
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
	published := maps.Clone(c.byName)
	gen := c.gen
	c.mu.RUnlock()
	made := map[*lazyOwner]map[string][2]common.OpenAPIDefinition{}
	for name, d := range published {
		if _, ok := defs[name]; ok {
			continue
		}
		if def, ok := d.definition(form, made); ok {
			defs[name] = def
		}
	}
	return gen
}

// addGroupVersionTo adds the definitions of form of gv's kinds that defs
// lacks: all a group version's document needs of the catalog, as custom
// kinds refer to no other custom kind.
func (c *DynamicCatalog) addGroupVersionTo(form Form, gv schema.GroupVersion, defs map[string]common.OpenAPIDefinition) {
	c.mu.RLock()
	var kinds []*dynamicDef
	for gvk, d := range c.byGVK {
		if gvk.GroupVersion() == gv && c.byName[d.name] == d {
			kinds = append(kinds, d)
		}
	}
	c.mu.RUnlock()
	made := map[*lazyOwner]map[string][2]common.OpenAPIDefinition{}
	for _, d := range kinds {
		if _, ok := defs[d.name]; ok {
			continue
		}
		if def, ok := d.definition(form, made); ok {
			defs[d.name] = def
		}
	}
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
	if held := s.defs.Value(); held != nil && s.gen == gen {
		return held.m
	}
	held := &definitionMap{}
	held.m, s.gen = build()
	s.defs = weak.Make(held)
	return held.m
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

// definitionsForOneUse is Definitions made without keeping them, unless
// static keeps its own already.
func (u *unionCatalog) definitionsForOneUse(form Form) map[string]common.OpenAPIDefinition {
	defs := maps.Clone(DefinitionsForOneUse(u.static, form))
	if defs == nil {
		defs = map[string]common.OpenAPIDefinition{}
	}
	u.dynamic.addTo(form, defs)
	return defs
}

// groupVersionDefinitions returns what the document of gv needs: static's
// definitions, and dynamic's of gv's kinds only.
func (u *unionCatalog) groupVersionDefinitions(form Form, gv schema.GroupVersion) map[string]common.OpenAPIDefinition {
	static := u.static.Definitions(form)
	if u.dynamic.stamp(gv) == 0 {
		return static
	}
	defs := maps.Clone(static)
	if defs == nil {
		defs = map[string]common.OpenAPIDefinition{}
	}
	u.dynamic.addGroupVersionTo(form, gv, defs)
	return defs
}

func (c *DynamicCatalog) groupVersionDefinitions(form Form, gv schema.GroupVersion) map[string]common.OpenAPIDefinition {
	defs := map[string]common.OpenAPIDefinition{}
	c.addGroupVersionTo(form, gv, defs)
	return defs
}

// groupVersionCatalog is a catalog that can give the definitions one group
// version's document needs, without making every custom kind's.
type groupVersionCatalog interface {
	groupVersionDefinitions(form Form, gv schema.GroupVersion) map[string]common.OpenAPIDefinition
}

var (
	_ groupVersionCatalog = (*DynamicCatalog)(nil)
	_ groupVersionCatalog = (*unionCatalog)(nil)
)

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
