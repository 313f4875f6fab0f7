package validating

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	arv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/openapi"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"

	"github.com/capstan-io/capstan/admission/policy/expr"
)

// maxTypesToCheck is how many kinds kube checks a policy against.
const maxTypesToCheck = 10

// TypeChecker checks a policy's expressions against the schemas of the
// kinds its matchConstraints name, as kube's type-checking status
// controller does: it finds mistakes (a misspelt field, a wrong type)
// that compiling against dyn objects at write cannot.
type TypeChecker struct {
	Schemas resolver.SchemaResolver
	Mapper  meta.ResettableRESTMapper
	// Static tells the kinds whose schema is fixed while the server runs
	// (the built-in ones): their CEL types are resolved once and shared
	// by every policy checked, where a custom resource's schema is read
	// anew each time, as it may have changed. Nil: none is.
	Static func(schema.GroupVersionKind) bool

	mu sync.Mutex // guards static
	// static holds the CEL types of Static kinds: unnamed, and named for
	// use as a policy's object; nil for a kind with no schema.
	static map[schema.GroupVersionKind]staticType
}

type staticType struct{ unnamed, object *apiservercel.DeclType }

// kindType is one kind a policy is checked against.
type kindType struct {
	gvk  schema.GroupVersionKind
	decl *apiservercel.DeclType
}

// Check returns the warnings kube puts in status.typeChecking: one per
// validation expression and messageExpression with issues, each listing
// the kinds with their issues.
func (tc *TypeChecker) Check(p *arv1.ValidatingAdmissionPolicy) []arv1.ExpressionWarning {
	var kinds []kindType
	for _, gvk := range tc.kinds(p) {
		if decl := tc.objectType(gvk); decl != nil {
			kinds = append(kinds, kindType{gvk, decl})
		}
	}
	var params *apiservercel.DeclType
	if p.Spec.ParamKind != nil {
		if gv, err := schema.ParseGroupVersion(p.Spec.ParamKind.APIVersion); err == nil {
			// Named apart from the object types: params may be of the
			// object's kind.
			gvk := gv.WithKind(p.Spec.ParamKind.Kind)
			params = named(tc.schemaType(gvk), gvk)
		}
	}
	var warnings []arv1.ExpressionWarning
	path := field.NewPath("spec", "validations")
	for i, v := range p.Spec.Validations {
		for _, e := range []struct{ field, text string }{{"expression", v.Expression}, {"messageExpression", v.MessageExpression}} {
			if e.text == "" {
				continue
			}
			if w := checkExpression(p, kinds, params, e.text); w != "" {
				warnings = append(warnings, arv1.ExpressionWarning{FieldRef: path.Index(i).Child(e.field).String(), Warning: w})
			}
		}
	}
	return warnings
}

// checkExpression type-checks text against each kind, after the policy's
// variables: kube's lines, "<gvk>: <issues>", one per kind with issues.
func checkExpression(p *arv1.ValidatingAdmissionPolicy, kinds []kindType, params *apiservercel.DeclType, text string) string {
	d := expr.Decls{Params: p.Spec.ParamKind != nil, Authorizer: true}
	var lines []string
	for _, k := range kinds {
		c := expr.NewTypedCompiler(&expr.Typed{Object: k.decl, Params: params})
		for _, v := range p.Spec.Variables {
			c.AddVariable(v.Name, v.Expression, d, true)
		}
		err := c.Check(text, d)
		switch {
		case err == nil:
		case err.Type == apiservercel.ErrorTypeInvalid:
			lines = append(lines, fmt.Sprintf("%v: %s\n", k.gvk, err))
		default:
			lines = append(lines, fmt.Sprintf("%v: type checking error: %v\n", k.gvk, err))
		}
	}
	return strings.Join(lines, "\n")
}

// objectType is gvk's CEL type as a policy's object: built once for a
// Static kind, anew for any other.
func (tc *TypeChecker) objectType(gvk schema.GroupVersionKind) *apiservercel.DeclType {
	if tc.Static == nil || !tc.Static(gvk) {
		return named(tc.resolve(gvk), gvk)
	}
	return tc.staticType(gvk).object
}

// schemaType is gvk's CEL type before it is named.
func (tc *TypeChecker) schemaType(gvk schema.GroupVersionKind) *apiservercel.DeclType {
	if tc.Static == nil || !tc.Static(gvk) {
		return tc.resolve(gvk)
	}
	return tc.staticType(gvk).unnamed
}

func (tc *TypeChecker) staticType(gvk schema.GroupVersionKind) staticType {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	t, ok := tc.static[gvk]
	if !ok {
		t.unnamed = tc.resolve(gvk)
		t.object = named(t.unnamed, gvk)
		if tc.static == nil {
			tc.static = map[schema.GroupVersionKind]staticType{}
		}
		tc.static[gvk] = t
	}
	return t
}

// resolve is the CEL type of gvk's schema, nil when it has none.
func (tc *TypeChecker) resolve(gvk schema.GroupVersionKind) *apiservercel.DeclType {
	s, err := tc.Schemas.ResolveSchema(gvk)
	if err != nil {
		return nil
	}
	return common.SchemaDeclType(&openapi.Schema{Schema: s}, true)
}

// typeSeq numbers the types named, so that no two share a name: object
// and params may be of one kind.
var typeSeq atomic.Int64

// named is decl named after gvk, uniquely.
func named(decl *apiservercel.DeclType, gvk schema.GroupVersionKind) *apiservercel.DeclType {
	if decl == nil {
		return nil
	}
	return decl.MaybeAssignTypeName(fmt.Sprintf("%s%d", gvk.Kind, typeSeq.Add(1)))
}

// kinds are the kinds the policy's resource rules name, without
// wildcards or subresources, sorted, at most maxTypesToCheck.
func (tc *TypeChecker) kinds(p *arv1.ValidatingAdmissionPolicy) []schema.GroupVersionKind {
	if p.Spec.MatchConstraints == nil {
		return nil
	}
	seen := map[schema.GroupVersionKind]bool{}
	var out []schema.GroupVersionKind
	refreshed := false
	for _, r := range p.Spec.MatchConstraints.ResourceRules {
		for _, gvr := range ruleResources(&r.Rule) {
			kinds, err := tc.Mapper.KindsFor(gvr)
			if err != nil && !refreshed {
				tc.Mapper.Reset()
				refreshed = true
				kinds, err = tc.Mapper.KindsFor(gvr)
			}
			if err != nil {
				continue
			}
			for _, k := range kinds {
				if !k.Empty() && !seen[k] {
					seen[k] = true
					out = append(out, k)
				}
				if len(out) == maxTypesToCheck {
					return sortKinds(out)
				}
			}
		}
	}
	return sortKinds(out)
}

func sortKinds(kinds []schema.GroupVersionKind) []schema.GroupVersionKind {
	slices.SortFunc(kinds, func(a, b schema.GroupVersionKind) int {
		if c := strings.Compare(a.Group, b.Group); c != 0 {
			return c
		}
		if c := strings.Compare(a.Version, b.Version); c != 0 {
			return c
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	return kinds
}

// ruleResources are the resources a rule names, in sorted order; a
// wildcard group or version gives none, and wildcard resources and
// subresources are left out.
func ruleResources(r *arv1.Rule) []schema.GroupVersionResource {
	wild := func(s string) bool { return strings.Contains(s, "*") }
	if slices.ContainsFunc(r.APIGroups, wild) || slices.ContainsFunc(r.APIVersions, wild) {
		return nil
	}
	groups, versions := slices.Sorted(slices.Values(r.APIGroups)), slices.Sorted(slices.Values(r.APIVersions))
	var resources []string
	for _, res := range r.Resources {
		if !strings.ContainsAny(res, "*/") {
			resources = append(resources, res)
		}
	}
	slices.Sort(resources)
	var out []schema.GroupVersionResource
	for _, g := range groups {
		for _, v := range versions {
			for _, res := range resources {
				out = append(out, schema.GroupVersionResource{Group: g, Version: v, Resource: res})
			}
		}
	}
	return out
}
