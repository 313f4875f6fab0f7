package audit

import (
	"testing"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

// FuzzPolicy: any audit policy file (--audit-policy-file) is refused with
// an error or evaluates requests without a panic, to a level kube knows.
func FuzzPolicy(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: None\n  users: [system:kube-proxy]\n  verbs: [watch]\n  resources: [{group: '', resources: [endpoints, services/status]}]\n- level: Metadata\n  nonResourceURLs: ['/healthz*', /version]\n- level: RequestResponse\n  namespaces: [kube-system]\n  resources: [{group: apps, resources: ['*'], resourceNames: [x]}]\n",
		`{"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[{"level":"Request","userGroups":["system:authenticated"],"omitStages":["Panic"],"omitManagedFields":true}]}`,
		"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n",
		"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Bogus\n  resources: [{resources: ['pods/*', '*/status', '**']}]\n",
		"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- {level: None, unknown: 1}\n",
	} {
		f.Add([]byte(seed))
	}
	users := []*authn.User{{Name: "alice", Groups: []string{"system:authenticated"}}, {Name: "system:kube-proxy"}}
	infos := []*request.Info{
		{IsResourceRequest: true, Verb: "watch", Resource: "endpoints"},
		{IsResourceRequest: true, Verb: "get", APIGroup: "apps", Resource: "deployments", Subresource: "status", Namespace: "kube-system", Name: "x"},
		{Path: "/healthz/etcd", Verb: "get"},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodePolicy(data)
		if err != nil {
			return
		}
		policy := NewPolicy(p)
		for _, u := range users {
			for _, info := range infos {
				switch rc := policy.Evaluate(u, info); rc.Level {
				case "None", "Metadata", "Request", "RequestResponse":
				default:
					t.Fatalf("level %q for %s %+v", rc.Level, u.Name, info)
				}
			}
		}
	})
}
