// Package fieldtest compares validation errors in table tests by type and
// field path, the parts of a field.Error that kubectl users see.
package fieldtest

import (
	"cmp"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Want is an expected validation error: its type and field path.
type Want struct {
	Type  field.ErrorType
	Field string
}

// Constructors of the usual expectations.
func Invalid(f string) Want      { return Want{field.ErrorTypeInvalid, f} }
func Required(f string) Want     { return Want{field.ErrorTypeRequired, f} }
func Forbidden(f string) Want    { return Want{field.ErrorTypeForbidden, f} }
func NotSupported(f string) Want { return Want{field.ErrorTypeNotSupported, f} }
func Duplicate(f string) Want    { return Want{field.ErrorTypeDuplicate, f} }

// Check compares got with want by type and path, ignoring order.
func Check(t testing.TB, got field.ErrorList, want ...Want) {
	t.Helper()
	g := make([]Want, 0, len(got))
	for _, e := range got {
		g = append(g, Want{e.Type, e.Field})
	}
	order := func(a, b Want) int { return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Type, b.Type)) }
	slices.SortFunc(g, order)
	want = slices.Clone(want)
	slices.SortFunc(want, order)
	if !slices.Equal(g, want) {
		t.Errorf("errors = %v\nwant %v\n(full: %v)", g, want, got)
	}
}
