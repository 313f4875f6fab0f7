package schema

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// correlation pairs a value of an update with the value at the same place
// in the old object, as far as the schema lets them be matched: object
// fields by name, items of list-type map lists by their keys.
type correlation struct {
	value, old any
	s          *Structural

	equal    *bool
	children map[any]*correlation
	oldByKey map[string]any // list-type map: old items by key, built lazily
	keyed    bool           // oldByKey was built
}

func newCorrelation(value, old any, s *Structural) *correlation {
	return &correlation{value: value, old: old, s: s}
}

// key is the correlation of the object field k, or nil when k is not in
// both values or has no schema of its own.
func (c *correlation) key(k string) *correlation {
	if c == nil || c.s == nil {
		return nil
	}
	if child, ok := c.children[k]; ok {
		return child
	}
	newMap, ok1 := c.value.(map[string]any)
	oldMap, ok2 := c.old.(map[string]any)
	if !ok1 || !ok2 {
		return nil
	}
	nv, ok1 := newMap[k]
	ov, ok2 := oldMap[k]
	if !ok1 || !ok2 {
		return nil
	}
	var fs *Structural
	if p, ok := c.s.Properties[k]; ok {
		fs = &p
	} else if c.s.AdditionalProperties != nil {
		fs = c.s.AdditionalProperties
	} else {
		return nil
	}
	return c.remember(k, &correlation{value: nv, old: ov, s: fs})
}

// index is the correlation of item i, or nil unless the list is a
// list-type map list and old has an item with the same keys.
func (c *correlation) index(i int) *correlation {
	if c == nil || c.s == nil {
		return nil
	}
	if child, ok := c.children[i]; ok {
		return child
	}
	list, ok := c.value.([]any)
	if !ok || i >= len(list) {
		return nil
	}
	ov := c.oldItem(list[i])
	if ov == nil || c.s.Items == nil {
		return nil
	}
	return c.remember(i, &correlation{value: list[i], old: ov, s: c.s.Items})
}

func (c *correlation) remember(k any, child *correlation) *correlation {
	if c.children == nil {
		c.children = map[any]*correlation{}
	}
	c.children[k] = child
	return child
}

// oldItem finds the item of the old list-type map list with the keys of
// item; the first such item counts.
func (c *correlation) oldItem(item any) any {
	oldList, ok := c.old.([]any)
	if !ok || c.s.XListType != "map" {
		return nil
	}
	if !c.keyed {
		// Even without usable keys, a map list counts as keyed: its
		// unmatched items make it changed.
		c.keyed = true
		c.oldByKey = map[string]any{}
		if c.s.Type != "array" || len(c.s.XListMapKeys) == 0 {
			return nil
		}
		for _, o := range oldList {
			if k, ok := listMapKey(o, c.s.XListMapKeys); ok {
				if _, seen := c.oldByKey[k]; !seen {
					c.oldByKey[k] = o
				}
			}
		}
	}
	k, ok := listMapKey(item, c.s.XListMapKeys)
	if !ok {
		return nil
	}
	return c.oldByKey[k]
}

// listMapKey renders the key values of a list-type map item; false when a
// key is missing or not a scalar.
func listMapKey(item any, keys []string) (string, bool) {
	m, ok := item.(map[string]any)
	if !ok {
		return "", false
	}
	var b strings.Builder
	for _, k := range keys {
		v, ok := m[k]
		if !ok {
			return "", false
		}
		switch v := v.(type) {
		case bool, int64, float64:
			fmt.Fprintf(&b, "\x00%T:%v", v, v)
		case string:
			fmt.Fprintf(&b, "\x00%q", v)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unchanged tells whether value equals old, memoized through the tree.
func (c *correlation) unchanged() (res bool) {
	if c == nil {
		return false
	}
	if c.equal != nil {
		return *c.equal
	}
	defer func() { c.equal = &res }()

	if c.value == nil || c.old == nil {
		return c.value == nil && c.old == nil
	}
	switch nv := c.value.(type) {
	case []any:
		ov, ok := c.old.([]any)
		if !ok || len(ov) != len(nv) {
			return false
		}
		for i := range nv {
			child := c.index(i)
			if child == nil {
				if c.keyed {
					return false
				}
				return reflect.DeepEqual(ov, nv)
			}
			if !child.unchanged() {
				return false
			}
		}
		return true
	case map[string]any:
		ov, ok := c.old.(map[string]any)
		if !ok || len(ov) != len(nv) {
			return false
		}
		for k := range nv {
			child := c.key(k)
			if child == nil || !child.unchanged() {
				return false
			}
		}
		return true
	default:
		if _, ok := c.old.([]any); ok {
			return false
		}
		if _, ok := c.old.(map[string]any); ok {
			return false
		}
		return reflect.DeepEqual(c.old, c.value)
	}
}

// ratchetValidator is a kube-openapi value validator that turns the
// errors about an unchanged value into warnings, and hands correlated
// children to ratcheting validators of their own.
type ratchetValidator struct {
	schema *spec.Schema
	root   any
	path   string
	node   *correlation
}

var _ validate.ValueValidator = &ratchetValidator{}

func (r *ratchetValidator) SetPath(string) {}

func (r *ratchetValidator) Applies(any, reflect.Kind) bool { return true }

func (r *ratchetValidator) Validate(any) *validate.Result {
	opt := func(o *validate.SchemaValidatorOptions) {
		o.NewValidatorForField = r.forField
		o.NewValidatorForIndex = r.forIndex
	}
	res := validate.NewSchemaValidator(r.schema, r.root, r.path, strfmt.Default, opt).Validate(r.node.value)
	if res.IsValid() {
		return res
	}
	if r.node.unchanged() {
		out := &validate.Result{}
		out.MergeAsWarnings(res)
		return out
	}
	return res
}

func (r *ratchetValidator) forField(name string, s *spec.Schema, root any, path string, formats strfmt.Registry, opts ...validate.Option) validate.ValueValidator {
	child := r.node.key(name)
	// apiVersion and kind of the object itself never ratchet.
	if child == nil || (r.path == "" && (name == "kind" || name == "apiVersion")) {
		return validate.NewSchemaValidator(s, root, path, formats, opts...)
	}
	return &ratchetValidator{schema: s, root: root, path: path, node: child}
}

func (r *ratchetValidator) forIndex(i int, s *spec.Schema, root any, path string, formats strfmt.Registry, opts ...validate.Option) validate.ValueValidator {
	child := r.node.index(i)
	if child == nil {
		return validate.NewSchemaValidator(s, root, path, formats, opts...)
	}
	return &ratchetValidator{schema: s, root: root, path: path, node: child}
}
