package schema

import (
	"sort"
	"strconv"
	"strings"
)

// metaFields are kept at a resource root, where the server knows them.
var metaFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// Prune drops, in place, the fields of obj that s does not specify, as kube
// does when it decodes a custom resource, and returns their paths sorted,
// in the form kube puts into `unknown field "spec.foo"` warnings and
// strict-decoding errors (spec.foo, spec.list[0].bar).
//
// With isResourceRoot, obj is a whole resource: apiVersion, kind and
// metadata are kept whatever s says (metadata is pruned apart, against
// ObjectMeta, by CoerceEmbeddedMeta or by the caller's decoding). The same
// holds inside every x-kubernetes-embedded-resource node.
// x-kubernetes-preserve-unknown-fields keeps unknown fields but prunes
// again below the properties and additionalProperties it specifies.
// Under additionalProperties: true (no schema), objects keep no fields,
// as in kube.
func Prune(obj any, s *Structural, isResourceRoot bool) (pruned []string) {
	if isResourceRoot {
		s = asResourceRoot(s)
	}
	p := pruner{}
	p.prune(obj, s)
	sort.Strings(p.unknown)
	return p.unknown
}

// asResourceRoot returns s, or a shallow copy of it, marked as an
// embedded resource, which is what a resource root is.
func asResourceRoot(s *Structural) *Structural {
	if s == nil {
		return &Structural{XEmbeddedResource: true}
	}
	if s.XEmbeddedResource {
		return s
	}
	c := *s
	c.XEmbeddedResource = true
	return &c
}

// pruner records the paths of the fields it drops. path is the current
// path as pieces that join into kube's notation.
type pruner struct {
	path    []string
	unknown []string
}

func (p *pruner) pushKey(k string) int {
	n := len(p.path)
	if n > 0 {
		p.path = append(p.path, ".")
	}
	p.path = append(p.path, k)
	return n
}

func (p *pruner) pushIndex(i int) int {
	n := len(p.path)
	p.path = append(p.path, "[", strconv.Itoa(i), "]")
	return n
}

func (p *pruner) record(k string) {
	n := p.pushKey(k)
	p.unknown = append(p.unknown, strings.Join(p.path, ""))
	p.path = p.path[:n]
}

func (p *pruner) prune(x any, s *Structural) {
	if s != nil && s.XPreserveUnknownFields {
		p.keep(x, s)
		return
	}
	switch x := x.(type) {
	case map[string]any:
		if s == nil {
			for k := range x {
				p.record(k)
				delete(x, k)
			}
			return
		}
		for k, v := range x {
			if s.XEmbeddedResource && metaFields[k] {
				continue
			}
			if prop, ok := s.Properties[k]; ok {
				n := p.pushKey(k)
				p.prune(v, &prop)
				p.path = p.path[:n]
			} else if s.HasAdditionalProperties() {
				n := p.pushKey(k)
				p.prune(v, s.AdditionalProperties)
				p.path = p.path[:n]
			} else {
				// A stray apiVersion, kind or metadata at the very top is
				// not reported: the caller's decoder has its own say there.
				if !metaFields[k] || len(p.path) > 0 {
					p.record(k)
				}
				delete(x, k)
			}
		}
	case []any:
		var items *Structural
		if s != nil {
			items = s.Items
		}
		for i, v := range x {
			n := p.pushIndex(i)
			p.prune(v, items)
			p.path = p.path[:n]
		}
	}
}

// keep walks a value whose unknown fields are preserved, pruning only
// below the properties and additionalProperties the schema specifies.
func (p *pruner) keep(x any, s *Structural) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if s.XEmbeddedResource && metaFields[k] {
				continue
			}
			if prop, ok := s.Properties[k]; ok {
				n := p.pushKey(k)
				p.prune(v, &prop)
				p.path = p.path[:n]
			} else if s.HasAdditionalProperties() {
				n := p.pushKey(k)
				p.prune(v, s.AdditionalProperties)
				p.path = p.path[:n]
			}
		}
	case []any:
		for i, v := range x {
			n := p.pushIndex(i)
			p.keep(v, s.Items)
			p.path = p.path[:n]
		}
	}
}
