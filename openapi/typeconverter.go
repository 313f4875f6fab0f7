package openapi

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// TypeConverter returns the structured-merge-diff types of the catalog's
// kinds, made from the same OpenAPI v3 definitions the server publishes, so
// that managed fields and server-side apply follow the list types and map
// keys clients see. It is built on first use (a few hundred milliseconds
// for the built-in types), not at start; Warm builds it ahead of time.
func TypeConverter(c Catalog) *LazyTypeConverter {
	return &LazyTypeConverter{catalog: c}
}

// LazyTypeConverter builds a managedfields.TypeConverter on first use.
type LazyTypeConverter struct {
	catalog Catalog
	once    sync.Once
	tc      managedfields.TypeConverter
	meta    map[string]*spec.Schema // ObjectMetaDefinitions
	err     error
}

var _ managedfields.TypeConverter = (*LazyTypeConverter)(nil)

// Warm builds the converter now.
func (l *LazyTypeConverter) Warm() error {
	_, err := l.get()
	return err
}

func (l *LazyTypeConverter) get() (managedfields.TypeConverter, error) {
	l.once.Do(func() {
		defs := DefinitionsForOneUse(l.catalog, V3)
		schemas := make(map[string]*spec.Schema, len(defs))
		for name, d := range defs {
			s := d.Schema
			schemas[name] = &s
		}
		l.meta = Closure(schemas, objectMetaName)
		l.tc, l.err = managedfields.NewTypeConverter(schemas, false)
		if l.err != nil {
			l.err = fmt.Errorf("building types for managed fields: %w", l.err)
		}
	})
	return l.tc, l.err
}

// ObjectMetaDefinitions returns ObjectMeta's definition and those it refers
// to, in OpenAPI v3 form: what a custom resource's schema needs besides
// its own. They come from the pass that builds the converter, so custom
// resources do not pay for a second pass over every definition. Shared:
// read only.
func (l *LazyTypeConverter) ObjectMetaDefinitions() (map[string]*spec.Schema, error) {
	_, err := l.get()
	return l.meta, err
}

// objectMetaName is the definition name of metadata.
const objectMetaName = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// Closure returns the schemas named roots and those they refer to, from
// schemas, by name.
func Closure(schemas map[string]*spec.Schema, roots ...string) map[string]*spec.Schema {
	out := map[string]*spec.Schema{}
	var visit func(name string)
	visit = func(name string) {
		if _, seen := out[name]; seen {
			return
		}
		s, ok := schemas[name]
		if !ok {
			return
		}
		out[name] = s
		for _, ref := range refsOf(s) {
			visit(ref)
		}
	}
	for _, r := range roots {
		visit(r)
	}
	return out
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

// ObjectToTyped types obj by its kind's schema.
func (l *LazyTypeConverter) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	tc, err := l.get()
	if err != nil {
		return nil, err
	}
	return tc.ObjectToTyped(obj, opts...)
}

// TypedToObject turns a typed value back into an object.
func (l *LazyTypeConverter) TypedToObject(v *typed.TypedValue) (runtime.Object, error) {
	tc, err := l.get()
	if err != nil {
		return nil, err
	}
	return tc.TypedToObject(v)
}
