package storage

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// AttrFunc returns the labels and the selectable fields of an object.
type AttrFunc func(obj runtime.Object) (labels.Set, fields.Set, error)

// SelectionPredicate selects objects by label and field, and pages a list.
type SelectionPredicate struct {
	Label    labels.Selector // nil selects everything
	Field    fields.Selector // nil selects everything
	GetAttrs AttrFunc        // required when Label or Field is not empty
	Limit    int64           // 0: no limit
	Continue string          // a continue token from a previous page
	// ResourceAttrs says that GetAttrs is the resource's own attribute
	// function, the one its storage was configured with: a storage that
	// keeps each object's attributes (the watch cache) may then match on
	// those instead of calling GetAttrs. A caller with an attribute
	// function of its own leaves it false.
	ResourceAttrs bool
}

// Empty reports whether the predicate selects every object.
func (p SelectionPredicate) Empty() bool {
	return (p.Label == nil || p.Label.Empty()) && (p.Field == nil || p.Field.Empty())
}

// Matches reports whether obj is selected.
func (p SelectionPredicate) Matches(obj runtime.Object) (bool, error) {
	if p.Empty() {
		return true, nil
	}
	ls, fs, err := p.GetAttrs(obj)
	if err != nil {
		return false, err
	}
	return p.MatchesAttrs(ls, fs), nil
}

// MatchesAttrs reports whether an object of labels ls and fields fs is
// selected.
func (p SelectionPredicate) MatchesAttrs(ls labels.Labels, fs fields.Fields) bool {
	return (p.Label == nil || p.Label.Matches(ls)) && (p.Field == nil || p.Field.Matches(fs))
}
