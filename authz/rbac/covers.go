package rbac

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Covers reports whether owner's rules allow everything servant's do, and
// the atomic rules (one verb, one group, one resource, at most one name)
// of servant that owner lacks.
func Covers(owner, servant []rbacv1.PolicyRule) (bool, []rbacv1.PolicyRule) {
	var missing []rbacv1.PolicyRule
	for _, r := range servant {
		for _, sub := range BreakdownRule(r) {
			if !anyCovers(owner, sub) {
				missing = append(missing, sub)
			}
		}
	}
	return len(missing) == 0, missing
}

func anyCovers(owner []rbacv1.PolicyRule, sub rbacv1.PolicyRule) bool {
	for _, o := range owner {
		if ruleCovers(o, sub) {
			return true
		}
	}
	return false
}

// BreakdownRule splits a rule into atomic rules: one per group, resource,
// verb and name; one per non-resource URL and verb.
func BreakdownRule(r rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				atom := rbacv1.PolicyRule{APIGroups: []string{g}, Resources: []string{res}, Verbs: []string{v}}
				if len(r.ResourceNames) == 0 {
					out = append(out, atom)
					continue
				}
				for _, n := range r.ResourceNames {
					named := atom
					named.ResourceNames = []string{n}
					out = append(out, named)
				}
			}
		}
	}
	for _, u := range r.NonResourceURLs {
		for _, v := range r.Verbs {
			out = append(out, rbacv1.PolicyRule{NonResourceURLs: []string{u}, Verbs: []string{v}})
		}
	}
	return out
}

// ruleCovers reports whether owner allows all that the atomic rule sub does.
func ruleCovers(owner, sub rbacv1.PolicyRule) bool {
	verbs := slices.Contains(owner.Verbs, rbacv1.VerbAll) || hasAll(owner.Verbs, sub.Verbs)
	groups := slices.Contains(owner.APIGroups, rbacv1.APIGroupAll) || hasAll(owner.APIGroups, sub.APIGroups)
	names := len(owner.ResourceNames) == 0 || (len(sub.ResourceNames) > 0 && hasAll(owner.ResourceNames, sub.ResourceNames))
	return verbs && groups && names && resourcesCover(owner.Resources, sub.Resources) &&
		urlsCover(owner.NonResourceURLs, sub.NonResourceURLs)
}

func hasAll(set, want []string) bool {
	for _, w := range want {
		if !slices.Contains(set, w) {
			return false
		}
	}
	return true
}

// resourcesCover: "*", each resource listed, or "*/<sub>" for a subresource.
func resourcesCover(owner, want []string) bool {
	if slices.Contains(owner, rbacv1.ResourceAll) {
		return true
	}
	for _, r := range want {
		if slices.Contains(owner, r) {
			continue
		}
		_, sub, ok := strings.Cut(r, "/")
		if !ok || !slices.Contains(owner, "*/"+sub) {
			return false
		}
	}
	return true
}

// urlsCover: each URL is listed, or under a listed prefix ending in "*".
func urlsCover(owner, want []string) bool {
	for _, u := range want {
		covered := false
		for _, o := range owner {
			if o == u || (strings.HasSuffix(o, "*") && strings.HasPrefix(u, strings.TrimRight(o, "*"))) {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

// CompactRules merges the atomic rules of one group and resource (and at
// most one name) that differ only by verb, as kube shortens the list of
// missing permissions in an escalation error.
func CompactRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var (
		out    []rbacv1.PolicyRule
		order  []simpleResource
		merged = map[simpleResource]*rbacv1.PolicyRule{}
	)
	for _, r := range rules {
		k, ok := simpleResourceOf(r)
		if !ok {
			out = append(out, r)
			continue
		}
		if m, seen := merged[k]; seen {
			m.Verbs = append(m.Verbs, r.Verbs...)
			continue
		}
		merged[k] = r.DeepCopy()
		order = append(order, k)
	}
	for _, k := range order {
		out = append(out, *merged[k])
	}
	return out
}

// simpleResource is what a simple rule applies to.
type simpleResource struct {
	group, resource string
	named           bool
	name            string
}

// simpleResourceOf is the resource of a rule with exactly one group and
// resource, at most one name, and nothing else.
func simpleResourceOf(r rbacv1.PolicyRule) (simpleResource, bool) {
	if len(r.ResourceNames) > 1 || len(r.NonResourceURLs) > 0 || len(r.APIGroups) != 1 || len(r.Resources) != 1 {
		return simpleResource{}, false
	}
	plain := rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: r.Resources, Verbs: r.Verbs, ResourceNames: r.ResourceNames}
	if !reflect.DeepEqual(plain, r) {
		return simpleResource{}, false
	}
	k := simpleResource{group: r.APIGroups[0], resource: r.Resources[0]}
	if len(r.ResourceNames) == 1 {
		k.named, k.name = true, r.ResourceNames[0]
	}
	return k, true
}

// CompactString is kube's short form of a rule in escalation errors:
// {APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}.
func CompactString(r rbacv1.PolicyRule) string {
	var parts []string
	add := func(label string, v []string) {
		if len(v) > 0 {
			parts = append(parts, fmt.Sprintf("%s:%q", label, v))
		}
	}
	add("APIGroups", r.APIGroups)
	add("Resources", r.Resources)
	add("NonResourceURLs", r.NonResourceURLs)
	add("ResourceNames", r.ResourceNames)
	add("Verbs", r.Verbs)
	return "{" + strings.Join(parts, ", ") + "}"
}
