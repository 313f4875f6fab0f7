package openapi

import (
	"strings"
	"unicode"
)

// Operation ids are kube's, which clients and generated code know:
// the verb, then the group and version in camel case, then what the
// operation acts on: readCoreV1NamespacedConfigMap,
// deleteCoordinationV1CollectionNamespacedLease, getCoreAPIVersions.

// groupPart is the group as operation ids and tags show it: "core" for the
// core group, and the name without .k8s.io otherwise.
func groupPart(group string) string {
	if group == "" {
		return "core"
	}
	return strings.TrimSuffix(group, ".k8s.io")
}

// gvID is the group version part of an operation id: CoreV1,
// RbacAuthorizationV1, FlowcontrolApiserverV1beta3.
func gvID(group, version string) string {
	return camel(groupPart(group), true) + camel(version, true)
}

// gvTag is the tag of a group version's operations: core_v1,
// rbacAuthorization_v1.
func gvTag(group, version string) string {
	return camel(groupPart(group), false) + "_" + camel(version, false)
}

// camel keeps the letters, underscores and (not first) digits of s, and
// starts a new word in upper case after anything else. upper says whether
// the first word starts in upper case too.
func camel(s string, upper bool) string {
	var b strings.Builder
	next := upper
	for i, r := range s {
		keep := unicode.IsLetter(r) || r == '_' || (i > 0 && unicode.IsDigit(r))
		if !keep {
			next = true
			continue
		}
		if next {
			r = unicode.ToUpper(r)
			next = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// title upper-cases the first letter of a subresource name: status ->
// Status, ephemeralcontainers -> Ephemeralcontainers.
func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + strings.ToLower(s[1:])
}

// article is the indefinite article of a kind in operation descriptions:
// none for plurals (Endpoints), "an" before a vowel.
func article(kind string) string {
	if strings.HasSuffix(kind, "s") && !strings.HasSuffix(kind, "ss") {
		return ""
	}
	if kind != "" && strings.ContainsRune("aeiouAEIOU", rune(kind[0])) {
		return "an "
	}
	return "a "
}
