package audit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

// testPolicy has one rule per kind of match; each rule's level names it.
const testPolicy = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  users: ["system:kube-proxy"]
  verbs: ["watch"]
- level: RequestResponse
  userGroups: ["auditors"]
  omitStages: ["ResponseStarted"]
  omitManagedFields: true
- level: Request
  resources:
  - group: ""
    resources: ["pods/log", "*/status"]
- level: Request
  resources:
  - group: "apps"
    resources: ["deployments/*"]
- level: Metadata
  resources:
  - group: ""
    resources: ["secrets"]
    resourceNames: ["hidden"]
- level: None
  resources:
  - group: ""
    resources: ["secrets"]
- level: Metadata
  namespaces: ["kube-system"]
- level: RequestResponse
  resources:
  - group: "*"
    resources: ["widgets"]
- level: Metadata
  nonResourceURLs: ["/metrics", "/logs/*"]
- level: None
  resources:
  - group: "batch"
- level: Request
  verbs: ["create", "update"]
`

func TestPolicyEvaluate(t *testing.T) {
	p, err := decodePolicy([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	policy := NewPolicy(p)
	alice := &authn.User{Name: "alice", Groups: []string{"devs"}}
	res := func(verb, group, ns, resource, sub, name string) *request.Info {
		return &request.Info{IsResourceRequest: true, Verb: verb, APIGroup: group, APIVersion: "v1",
			Namespace: ns, Resource: resource, Subresource: sub, Name: name}
	}
	path := func(p string) *request.Info { return &request.Info{Path: p, Verb: "get"} }
	tests := []struct {
		name  string
		user  *authn.User
		info  *request.Info
		level auditv1.Level
	}{
		{"user and verb", &authn.User{Name: "system:kube-proxy"}, res("watch", "", "", "endpoints", "", ""), auditv1.LevelNone},
		{"user, other verb falls through", &authn.User{Name: "system:kube-proxy"}, res("get", "", "", "endpoints", "", ""), auditv1.LevelNone},
		{"group", &authn.User{Name: "bob", Groups: []string{"x", "auditors"}}, path("/version"), auditv1.LevelRequestResponse},
		{"no user matches no user rule", nil, res("create", "", "ns", "pods", "", ""), auditv1.LevelRequest},
		{"subresource by name", alice, res("get", "", "ns", "pods", "log", "p"), auditv1.LevelRequest},
		{"resource without its subresource", alice, res("get", "", "ns", "pods", "", "p"), auditv1.LevelNone},
		{"any resource's subresource", alice, res("update", "", "", "nodes", "status", "n"), auditv1.LevelRequest},
		{"resource/* takes the resource", alice, res("get", "apps", "ns", "deployments", "", "d"), auditv1.LevelRequest},
		{"resource/* takes subresources", alice, res("get", "apps", "ns", "deployments", "scale", "d"), auditv1.LevelRequest},
		{"other group", alice, res("get", "extensions", "ns", "deployments", "", "d"), auditv1.LevelNone},
		{"resource name", alice, res("get", "", "ns", "secrets", "", "hidden"), auditv1.LevelMetadata},
		{"other resource name", alice, res("get", "", "ns", "secrets", "", "open"), auditv1.LevelNone},
		{"list has no name", alice, res("list", "", "ns", "secrets", "", ""), auditv1.LevelNone},
		{"namespace", alice, res("get", "", "kube-system", "configmaps", "", "c"), auditv1.LevelMetadata},
		{"group wildcard", alice, res("get", "example.com", "ns", "widgets", "", "w"), auditv1.LevelRequestResponse},
		{"non-resource exact", alice, path("/metrics"), auditv1.LevelMetadata},
		{"non-resource prefix", alice, path("/logs/kube.log"), auditv1.LevelMetadata},
		{"non-resource near miss", alice, path("/metricsx"), auditv1.LevelNone},
		{"non-resource rule skips resources", alice, res("get", "", "", "metrics", "", ""), auditv1.LevelNone},
		{"whole group", alice, res("create", "batch", "ns", "jobs", "", ""), auditv1.LevelNone},
		{"verbs only", alice, res("create", "", "ns", "configmaps", "", ""), auditv1.LevelRequest},
		{"no rule", alice, res("get", "", "ns", "configmaps", "", "c"), auditv1.LevelNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := policy.Evaluate(tt.user, tt.info).Level; got != tt.level {
				t.Errorf("level %q, want %q", got, tt.level)
			}
		})
	}
}

func TestPolicyStagesAndManagedFields(t *testing.T) {
	p, err := decodePolicy([]byte(testPolicy))
	if err != nil {
		t.Fatal(err)
	}
	policy := NewPolicy(p)
	auditor := policy.Evaluate(&authn.User{Name: "a", Groups: []string{"auditors"}}, &request.Info{Path: "/x"})
	slices.Sort(auditor.OmitStages)
	if want := []auditv1.Stage{auditv1.StageRequestReceived, auditv1.StageResponseStarted}; !slices.Equal(auditor.OmitStages, want) {
		t.Errorf("rule's omitted stages %v, want the policy's and the rule's %v", auditor.OmitStages, want)
	}
	if !auditor.OmitManagedFields {
		t.Error("the rule's omitManagedFields is lost")
	}
	other := policy.Evaluate(&authn.User{Name: "a"}, &request.Info{Path: "/metrics"})
	if !slices.Equal(other.OmitStages, []auditv1.Stage{auditv1.StageRequestReceived}) || other.OmitManagedFields {
		t.Errorf("got %+v, want the policy's omitted stages and managed fields kept", other)
	}
}

func TestLoadPolicyErrors(t *testing.T) {
	tests := []struct {
		name, policy, want string
	}{
		{"no rules", "apiVersion: audit.k8s.io/v1\nkind: Policy\n", "loaded illegal policy with 0 rules"},
		{"wrong version", "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]\n", "failed decoding"},
		{"not yaml", "{", "failed decoding"},
		{"no kind", "rules: [{level: None}]\n", "failed decoding"},
		{"bad level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Everything}]\n",
			`rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"`},
		{"missing level", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{verbs: [get]}]\n", "rules[0].level: Required value"},
		{"bad stage", "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Sometimes]\nrules: [{level: None}]\n",
			`omitStages[0]: Invalid value: "Sometimes": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic`},
		{"url without slash", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [metrics]}]\n",
			"non-resource URL rules must begin with a '/' character"},
		{"wildcard inside", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ['/a*/b']}]\n",
			"non-resource URL wildcards '*' must be the final character of the rule"},
		{"urls and resources", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ['/a'], namespaces: [x]}]\n",
			"rules cannot apply to both regular resources and non-resource URLs"},
		{"names without resources", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{resourceNames: [x]}]}]\n",
			"using resourceNames requires at least one resource"},
		{"bad group", "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{group: 'Not_A_Group'}]}]\n",
			`rules[0].resources.group: Invalid value: "Not_A_Group"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "policy.yaml")
			if err := os.WriteFile(path, []byte(tt.policy), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadPolicy(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %v does not name the file", err)
			}
		})
	}
}

func TestLoadPolicyLenient(t *testing.T) {
	// kube warns about unknown fields and goes on.
	p, err := decodePolicy([]byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nunknown: 1\nrules: [{level: Metadata}]\n"))
	if err != nil || len(p.Rules) != 1 || p.Rules[0].Level != auditv1.LevelMetadata {
		t.Fatalf("got %+v, %v; want the policy despite the unknown field", p, err)
	}
}
