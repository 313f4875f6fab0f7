package rbac

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/capstan-io/capstan/request"
)

// RuleAllows reports whether rule allows the request info describes. A
// resource request needs the verb, the API group, the resource (with its
// subresource, as "pods/status", or "*/status") and, if the rule names
// any, the object's name; a non-resource request the verb and the path.
func RuleAllows(info *request.Info, rule *rbacv1.PolicyRule) bool {
	if !VerbMatches(rule, info.Verb) {
		return false
	}
	if !info.IsResourceRequest {
		return NonResourceURLMatches(rule, info.Path)
	}
	resource := info.Resource
	if info.Subresource != "" {
		resource += "/" + info.Subresource
	}
	return APIGroupMatches(rule, info.APIGroup) &&
		ResourceMatches(rule, resource, info.Subresource) &&
		ResourceNameMatches(rule, info.Name)
}

// RulesAllow reports whether any of rules allows the request.
func RulesAllow(info *request.Info, rules ...rbacv1.PolicyRule) bool {
	for i := range rules {
		if RuleAllows(info, &rules[i]) {
			return true
		}
	}
	return false
}

// VerbMatches: the rule lists the verb, or "*".
func VerbMatches(rule *rbacv1.PolicyRule, verb string) bool {
	return containsOrAll(rule.Verbs, verb, rbacv1.VerbAll)
}

// APIGroupMatches: the rule lists the group ("" is core), or "*".
func APIGroupMatches(rule *rbacv1.PolicyRule, group string) bool {
	return containsOrAll(rule.APIGroups, group, rbacv1.APIGroupAll)
}

// ResourceMatches: the rule lists "*", the resource as requested
// ("pods" or "pods/status"), or "*/<subresource>" for a subresource.
func ResourceMatches(rule *rbacv1.PolicyRule, resource, subresource string) bool {
	for _, r := range rule.Resources {
		if r == rbacv1.ResourceAll || r == resource {
			return true
		}
		if subresource != "" && r == "*/"+subresource {
			return true
		}
	}
	return false
}

// ResourceNameMatches: the rule names no object, or names this one. A rule
// with names never matches a request without one (list, create).
func ResourceNameMatches(rule *rbacv1.PolicyRule, name string) bool {
	if len(rule.ResourceNames) == 0 {
		return true
	}
	for _, n := range rule.ResourceNames {
		if n == name {
			return true
		}
	}
	return false
}

// NonResourceURLMatches: the rule lists the path, "*", or a prefix of it
// ending in "*" ("/healthz/*").
func NonResourceURLMatches(rule *rbacv1.PolicyRule, path string) bool {
	for _, u := range rule.NonResourceURLs {
		if u == rbacv1.NonResourceAll || u == path {
			return true
		}
		if strings.HasSuffix(u, "*") && strings.HasPrefix(path, strings.TrimRight(u, "*")) {
			return true
		}
	}
	return false
}

func containsOrAll(list []string, v, all string) bool {
	for _, s := range list {
		if s == all || s == v {
			return true
		}
	}
	return false
}
