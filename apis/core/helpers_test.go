package core

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// wantErr is an expected validation error: its type and field path.
type wantErr struct {
	typ   field.ErrorType
	field string
}

func inv(f string) wantErr  { return wantErr{field.ErrorTypeInvalid, f} }
func req(f string) wantErr  { return wantErr{field.ErrorTypeRequired, f} }
func forb(f string) wantErr { return wantErr{field.ErrorTypeForbidden, f} }
func long(f string) wantErr { return wantErr{field.ErrorTypeTooLong, f} }

// checkErrs compares errors by type and path, ignoring order: several
// validators walk maps.
func checkErrs(t *testing.T, got field.ErrorList, want ...wantErr) {
	t.Helper()
	var g []wantErr
	for _, e := range got {
		g = append(g, wantErr{e.Type, e.Field})
	}
	cmp := func(a, b wantErr) int {
		if a.field != b.field {
			if a.field < b.field {
				return -1
			}
			return 1
		}
		if a.typ < b.typ {
			return -1
		} else if a.typ > b.typ {
			return 1
		}
		return 0
	}
	slices.SortFunc(g, cmp)
	want = slices.Clone(want)
	slices.SortFunc(want, cmp)
	if !slices.Equal(g, want) {
		t.Errorf("errors = %v\nwant %v\n(full: %v)", g, want, got)
	}
}

// checkDetail requires the first error to carry detail.
func checkDetail(t *testing.T, got field.ErrorList, detail string) {
	t.Helper()
	if len(got) == 0 || got[0].Detail != detail {
		t.Errorf("detail = %v, want %q", got, detail)
	}
}
