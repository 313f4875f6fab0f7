package storagecodec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// A version may have fields its neighbour lacks: certificates.k8s.io/v1beta1
// PodCertificateRequests keep pkixPublicKey and proofOfPossession, which v1
// dropped. Kube holds every version's fields in its internal types, so an
// object stored at the beta and updated through v1 keeps them. capstan's
// objects in memory are of one external version, so what a trip through it
// loses is found by comparing an object with its round trip, and put back
// into the object written over it.

// Lost is what a conversion lost of an object: its fields set before and
// unset (absent or null) after, as a tree of JSON values.
type Lost map[string]any

// LostFields returns the fields of before, an object, that after, the same
// object converted to another version and back, no longer has. It
// descends into objects, and into lists whose length the trip kept.
func LostFields(before, after any) (Lost, error) {
	b, err := toTree(before)
	if err != nil {
		return nil, err
	}
	a, err := toTree(after)
	if err != nil {
		return nil, err
	}
	lost, _ := lostIn(b, a).(map[string]any)
	return lost, nil
}

// lostIn is what of b (a JSON value) a lacks; nil if nothing.
func lostIn(b, a any) any {
	switch bv := b.(type) {
	case map[string]any:
		av, ok := a.(map[string]any)
		if !ok {
			return nil
		}
		out := map[string]any{}
		for k, v := range bv {
			if v == nil {
				continue
			}
			if av[k] == nil {
				out[k] = v
			} else if l := lostIn(v, av[k]); l != nil {
				out[k] = l
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		av, ok := a.([]any)
		if !ok || len(av) != len(bv) {
			return nil
		}
		out := make([]any, len(bv))
		found := false
		for i := range bv {
			if out[i] = lostIn(bv[i], av[i]); out[i] != nil {
				found = true
			}
		}
		if !found {
			return nil
		}
		return out
	}
	return nil
}

// Restore sets in obj (a pointer to a typed object) the lost fields it
// does not have, where their parents still are (an object of the same
// shape; a list of the same length).
func (l Lost) Restore(obj any) error {
	if len(l) == 0 {
		return nil
	}
	tree, err := toTree(obj)
	if err != nil {
		return err
	}
	restoreIn(tree, map[string]any(l))
	data, err := json.Marshal(tree)
	if err != nil {
		return fmt.Errorf("restoring fields of %T: %w", obj, err)
	}
	v := reflect.ValueOf(obj).Elem()
	v.Set(reflect.Zero(v.Type()))
	if err := json.Unmarshal(data, obj); err != nil {
		return fmt.Errorf("restoring fields of %T: %w", obj, err)
	}
	return nil
}

// restoreIn puts lost (a value lostIn returned) into t.
func restoreIn(t, lost any) {
	switch lv := lost.(type) {
	case map[string]any:
		tv, ok := t.(map[string]any)
		if !ok {
			return
		}
		for k, v := range lv {
			if tv[k] == nil {
				tv[k] = v
			} else {
				restoreIn(tv[k], v)
			}
		}
	case []any:
		tv, ok := t.([]any)
		if !ok || len(tv) != len(lv) {
			return
		}
		for i := range lv {
			if lv[i] != nil {
				restoreIn(tv[i], lv[i])
			}
		}
	}
}

// toTree is v's JSON as maps, lists and json.Numbers.
func toTree(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var t any
	if err := dec.Decode(&t); err != nil {
		return nil, err
	}
	return t, nil
}
