package flowcontrol

import (
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

func userSubject(name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: name}}
}

func groupSubject(name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: name}}
}

func saSubject(ns, name string) flowcontrolv1.Subject {
	return flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindServiceAccount,
		ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: ns, Name: name}}
}

func TestMatchesSubject(t *testing.T) {
	alice := &authn.User{Name: "alice", Groups: []string{"devs", "system:authenticated"}}
	sa := &authn.User{Name: "system:serviceaccount:kube-system:builder"}
	for _, tc := range []struct {
		user    *authn.User
		subject flowcontrolv1.Subject
		want    bool
	}{
		{alice, userSubject("alice"), true},
		{alice, userSubject("bob"), false},
		{alice, userSubject("*"), true},
		{alice, groupSubject("devs"), true},
		{alice, groupSubject("ops"), false},
		{alice, groupSubject("*"), true},
		{alice, saSubject("kube-system", "*"), false},
		{sa, saSubject("kube-system", "builder"), true},
		{sa, saSubject("kube-system", "*"), true},
		{sa, saSubject("kube", "*"), false},
		{sa, saSubject("kube-system", "build"), false},
		{sa, saSubject("default", "builder"), false},
		{sa, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser}, false}, // no user: never
		{sa, flowcontrolv1.Subject{Kind: "Robot"}, false},
	} {
		if got := matchesSubject(tc.user, tc.subject); got != tc.want {
			t.Errorf("matchesSubject(%s, %+v) = %v, want %v", tc.user.Name, tc.subject, got, tc.want)
		}
	}
}

func TestMatchesResourceRule(t *testing.T) {
	rule := flowcontrolv1.ResourcePolicyRule{Verbs: []string{"get", "list"}, APIGroups: []string{"", "apps"},
		Resources: []string{"pods", "pods/status", "deployments"}, Namespaces: []string{"team-a"}}
	clusterRule := flowcontrolv1.ResourcePolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, ClusterScope: true}
	everyNS := flowcontrolv1.ResourcePolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, Namespaces: []string{"*"}}
	for _, tc := range []struct {
		name string
		info request.Info
		rule flowcontrolv1.ResourcePolicyRule
		want bool
	}{
		{"match", request.Info{Verb: "get", Resource: "pods", Namespace: "team-a"}, rule, true},
		{"subresource", request.Info{Verb: "get", Resource: "pods", Subresource: "status", Namespace: "team-a"}, rule, true},
		{"other subresource", request.Info{Verb: "get", Resource: "pods", Subresource: "log", Namespace: "team-a"}, rule, false},
		{"verb", request.Info{Verb: "delete", Resource: "pods", Namespace: "team-a"}, rule, false},
		{"group", request.Info{Verb: "get", APIGroup: "apps", Resource: "deployments", Namespace: "team-a"}, rule, true},
		{"other group", request.Info{Verb: "get", APIGroup: "batch", Resource: "pods", Namespace: "team-a"}, rule, false},
		{"namespace", request.Info{Verb: "get", Resource: "pods", Namespace: "team-b"}, rule, false},
		{"cluster scope refused", request.Info{Verb: "list", Resource: "pods"}, rule, false},
		{"cluster scope", request.Info{Verb: "list", Resource: "nodes"}, clusterRule, true},
		{"namespaced by a cluster rule", request.Info{Verb: "list", Resource: "pods", Namespace: "x"}, clusterRule, false},
		{"every namespace", request.Info{Verb: "list", Resource: "pods", Namespace: "x"}, everyNS, true},
		{"every namespace is not cluster scope", request.Info{Verb: "list", Resource: "nodes"}, everyNS, false},
	} {
		tc.info.IsResourceRequest = true
		if got := matchesResourceRule(&tc.info, &tc.rule); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestMatchesNonResourceRule(t *testing.T) {
	for _, tc := range []struct {
		path string
		urls []string
		want bool
	}{
		{"/healthz", []string{"/healthz"}, true},
		{"/healthz/etcd", []string{"/healthz/*"}, true},
		{"/healthz", []string{"/healthz/*"}, false},
		{"/healthz/etcd", []string{"/healthz"}, true}, // kube's matcher: a path covers what is below it
		{"/healthzz", []string{"/healthz"}, false},
		{"/version", []string{"*"}, true},
		{"/apis", []string{"/api"}, false},
	} {
		info := request.Info{Verb: "get", Path: tc.path}
		rule := flowcontrolv1.NonResourcePolicyRule{Verbs: []string{"get"}, NonResourceURLs: tc.urls}
		if got := matchesNonResourceRule(&info, &rule); got != tc.want {
			t.Errorf("%s against %v: got %v, want %v", tc.path, tc.urls, got, tc.want)
		}
	}
	info := request.Info{Verb: "post", Path: "/healthz"}
	if matchesNonResourceRule(&info, &flowcontrolv1.NonResourcePolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"*"}}) {
		t.Error("the verb was not checked")
	}
}

func TestFlowDistinguisher(t *testing.T) {
	d := Digest{Info: &request.Info{Namespace: "ns1"}, User: &authn.User{Name: "alice"}}
	for _, tc := range []struct {
		method *flowcontrolv1.FlowDistinguisherMethod
		want   string
	}{
		{nil, ""},
		{&flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType}, "alice"},
		{&flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByNamespaceType}, "ns1"},
	} {
		if got := flowDistinguisher(d, tc.method); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.method, got, tc.want)
		}
	}
}

// TestFlowHash pins kube's hash: SHA-256 of "schema\x00distinguisher".
func TestFlowHash(t *testing.T) {
	for _, tc := range []struct {
		schema, distinguisher string
		want                  uint64
	}{
		// Worked out with Python's hashlib.
		{"global-default", "alice", 17644606172554983095},
		{"catch-all", "", 7733929212674924205},
	} {
		if got := flowHash(tc.schema, tc.distinguisher); got != tc.want {
			t.Errorf("flowHash(%q, %q) = %d, want %d", tc.schema, tc.distinguisher, got, tc.want)
		}
	}
	if flowHash("a", "bc") == flowHash("ab", "c") {
		t.Error("the separator does not separate")
	}
}
