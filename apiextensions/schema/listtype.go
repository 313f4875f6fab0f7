package schema

import (
	"k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateListSetsAndMaps reports duplicates in the x-kubernetes-list-type
// set and map lists of obj, as kube does: for a set, each repeated value
// (from its second occurrence, once per value) is a Duplicate; for a map,
// each item repeating the key values of an earlier one (an item without a
// key field counts as having it unspecified). Items of map lists must be
// objects (or null). obj itself is an object; lists directly in it and
// below are checked.
func ValidateListSetsAndMaps(fldPath *field.Path, s *Structural, obj map[string]any) field.ErrorList {
	if s == nil || obj == nil {
		return nil
	}
	var errs field.ErrorList
	keys := sortedKeys(obj)
	// As in kube, additionalProperties apply to every key here, even to
	// the ones with properties (which valid schemas do not combine).
	if s.AdditionalProperties != nil {
		for _, k := range keys {
			errs = append(errs, listsIn(fldPath.Key(k), s.AdditionalProperties, obj[k])...)
		}
	}
	for _, k := range keys {
		if p, ok := s.Properties[k]; ok {
			errs = append(errs, listsIn(fldPath.Child(k), &p, obj[k])...)
		}
	}
	return errs
}

func listsIn(fldPath *field.Path, s *Structural, x any) field.ErrorList {
	switch x := x.(type) {
	case []any:
		return listsInArray(fldPath, s, x)
	case map[string]any:
		return ValidateListSetsAndMaps(fldPath, s, x)
	}
	return nil
}

func listsInArray(fldPath *field.Path, s *Structural, list []any) field.ErrorList {
	var errs field.ErrorList
	switch s.XListType {
	case "set":
		dups, err := duplicates(fldPath, list)
		if err != nil {
			errs = append(errs, err)
		}
		for _, i := range dups {
			errs = append(errs, field.Duplicate(fldPath.Index(i), list[i]))
		}
	case "map":
		errs = append(errs, mapListDuplicates(fldPath, s, list)...)
	}
	if s.Items != nil {
		for i := range list {
			errs = append(errs, listsIn(fldPath.Index(i), s.Items, list[i])...)
		}
	}
	return errs
}

// duplicates returns the index of the second occurrence of each repeated
// value.
func duplicates(fldPath *field.Path, list []any) ([]int, *field.Error) {
	if len(list) <= 1 {
		return nil, nil
	}
	scalars := map[any]int{}
	compounds := map[string]int{}
	var dups []int
	for i, x := range list {
		switch x.(type) {
		case map[string]any, []any:
			b, err := json.Marshal(x)
			if err != nil {
				return nil, field.Invalid(fldPath.Index(i), x, "internal error")
			}
			compounds[string(b)]++
			if compounds[string(b)] == 2 {
				dups = append(dups, i)
			}
		default:
			scalars[x]++
			if scalars[x] == 2 {
				dups = append(dups, i)
			}
		}
	}
	return dups, nil
}

// noKey stands for a missing key field of a single-key map list.
type noKey struct{}

func mapListDuplicates(fldPath *field.Path, s *Structural, list []any) field.ErrorList {
	for i, x := range list {
		if _, ok := x.(map[string]any); x != nil && !ok {
			return field.ErrorList{field.Invalid(fldPath.Index(i), x, "must be an object for an array of list-type map")}
		}
	}
	if len(list) <= 1 {
		return nil
	}

	if len(s.XListMapKeys) == 1 {
		keyField := s.XListMapKeys[0]
		keys := make([]any, 0, len(list))
		for _, x := range list {
			m, _ := x.(map[string]any)
			if k, ok := m[keyField]; ok {
				keys = append(keys, k)
			} else {
				keys = append(keys, noKey{})
			}
		}
		dups, err := duplicates(fldPath, keys)
		if err != nil {
			return field.ErrorList{err}
		}
		var errs field.ErrorList
		for _, i := range dups {
			if keys[i] == (noKey{}) {
				errs = append(errs, field.Duplicate(fldPath.Index(i), map[string]any{}))
			} else {
				errs = append(errs, field.Duplicate(fldPath.Index(i), map[string]any{keyField: keys[i]}))
			}
		}
		return errs
	}

	keys := make([]any, 0, len(list))
	for _, x := range list {
		key := map[string]any{}
		m, _ := x.(map[string]any)
		for _, kf := range s.XListMapKeys {
			if k, ok := m[kf]; ok {
				key[kf] = k
			}
		}
		keys = append(keys, key)
	}
	dups, err := duplicates(fldPath, keys)
	if err != nil {
		return field.ErrorList{err}
	}
	var errs field.ErrorList
	for _, i := range dups {
		errs = append(errs, field.Duplicate(fldPath.Index(i), keys[i]))
	}
	return errs
}
