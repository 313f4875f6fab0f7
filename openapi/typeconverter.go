package openapi

import (
	"fmt"
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
		l.tc, l.err = managedfields.NewTypeConverter(schemas, false)
		if l.err != nil {
			l.err = fmt.Errorf("building types for managed fields: %w", l.err)
		}
	})
	return l.tc, l.err
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
