// Package flowcontrol is API Priority and Fairness: a controller that
// watches FlowSchemas and PriorityLevelConfigurations, computes each
// level's concurrency limit from the server's, and classifies each request
// into a flow of a level whose queue set (package fairqueuing) admits it.
//
// Width estimates count a list's objects (storagefactory's object counts)
// and give a write the watches that follow it as final seats; requests
// that wait too long or find their queue full get 429 with Retry-After;
// /debug/api_priority_and_fairness dumps the state.
package flowcontrol

import (
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

// Digest is what classification looks at: who asks, for what.
type Digest struct {
	Info *request.Info
	User *authn.User
}

// matchesFlowSchema: some rule matches both the subject and the request.
func matchesFlowSchema(d Digest, fs *flowcontrolv1.FlowSchema) bool {
	for i := range fs.Spec.Rules {
		if matchesRule(d, &fs.Spec.Rules[i]) {
			return true
		}
	}
	return false
}

func matchesRule(d Digest, rule *flowcontrolv1.PolicyRulesWithSubjects) bool {
	if !slices.ContainsFunc(rule.Subjects, func(s flowcontrolv1.Subject) bool { return matchesSubject(d.User, s) }) {
		return false
	}
	if d.Info.IsResourceRequest {
		return slices.ContainsFunc(rule.ResourceRules, func(r flowcontrolv1.ResourcePolicyRule) bool { return matchesResourceRule(d.Info, &r) })
	}
	return slices.ContainsFunc(rule.NonResourceRules, func(r flowcontrolv1.NonResourcePolicyRule) bool { return matchesNonResourceRule(d.Info, &r) })
}

func matchesSubject(u *authn.User, s flowcontrolv1.Subject) bool {
	switch s.Kind {
	case flowcontrolv1.SubjectKindUser:
		return s.User != nil && (s.User.Name == flowcontrolv1.NameAll || s.User.Name == u.Name)
	case flowcontrolv1.SubjectKindGroup:
		return s.Group != nil && (s.Group.Name == flowcontrolv1.NameAll || slices.Contains(u.Groups, s.Group.Name))
	case flowcontrolv1.SubjectKindServiceAccount:
		if s.ServiceAccount == nil {
			return false
		}
		rest, ok := strings.CutPrefix(u.Name, authn.ServiceAccountUsernamePrefix)
		if !ok {
			return false
		}
		ns, name, ok := strings.Cut(rest, ":")
		if !ok || ns != s.ServiceAccount.Namespace {
			return false
		}
		return s.ServiceAccount.Name == flowcontrolv1.NameAll || s.ServiceAccount.Name == name
	}
	return false
}

func matchesResourceRule(info *request.Info, r *flowcontrolv1.ResourcePolicyRule) bool {
	resource := info.Resource
	if info.Subresource != "" {
		resource += "/" + info.Subresource
	}
	if !matchesList(info.Verb, r.Verbs, flowcontrolv1.VerbAll) ||
		!matchesList(resource, r.Resources, flowcontrolv1.ResourceAll) ||
		!matchesList(info.APIGroup, r.APIGroups, flowcontrolv1.APIGroupAll) {
		return false
	}
	if info.Namespace == "" {
		return r.ClusterScope
	}
	return matchesList(info.Namespace, r.Namespaces, flowcontrolv1.NamespaceEvery)
}

func matchesNonResourceRule(info *request.Info, r *flowcontrolv1.NonResourcePolicyRule) bool {
	if !matchesList(info.Verb, r.Verbs, flowcontrolv1.VerbAll) {
		return false
	}
	for _, rulePath := range r.NonResourceURLs {
		if rulePath == flowcontrolv1.NonResourceAll || rulePath == info.Path {
			return true
		}
		// "/healthz/*" and "/healthz/" both match everything below
		// /healthz/ (and, as kube's matcher, "/foo" matches "/foo/bar").
		prefix := strings.TrimSuffix(rulePath, "*")
		if !strings.HasSuffix(prefix, "/") {
			prefix += "/"
		}
		if strings.HasPrefix(info.Path, prefix) {
			return true
		}
	}
	return false
}

// matchesList: a list of just the wildcard matches everything; otherwise
// the value must be in it (a wildcard among other values is literal, as
// validation forbids it there).
func matchesList(value string, list []string, wildcard string) bool {
	if len(list) == 1 && list[0] == wildcard {
		return true
	}
	return slices.Contains(list, value)
}

// flowDistinguisher is the part of a flow's identity the schema asks for.
func flowDistinguisher(d Digest, m *flowcontrolv1.FlowDistinguisherMethod) string {
	if m == nil {
		return ""
	}
	switch m.Type {
	case flowcontrolv1.FlowDistinguisherMethodByUserType:
		return d.User.Name
	case flowcontrolv1.FlowDistinguisherMethodByNamespaceType:
		return d.Info.Namespace
	}
	return ""
}

// lessFlowSchema orders schemas for matching: by matchingPrecedence, then
// by name.
func lessFlowSchema(a, b *flowcontrolv1.FlowSchema) int {
	if a.Spec.MatchingPrecedence != b.Spec.MatchingPrecedence {
		return int(a.Spec.MatchingPrecedence) - int(b.Spec.MatchingPrecedence)
	}
	return strings.Compare(a.Name, b.Name)
}
