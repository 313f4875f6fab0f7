package filters

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// grants allows what it lists, each "user verb group/resource[/sub] ns/name"
// (the extra keys of the requestor, if any, after a "+").
type grants []string

func (g grants) Authorize(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
	i := a.Info
	res := i.APIGroup + "/" + i.Resource
	if i.Subresource != "" {
		res += "/" + i.Subresource
	}
	key := a.User.Name + " " + i.Verb + " " + res + " " + i.Namespace + "/" + i.Name
	if keys := a.User.Extra[associatedNodeKeys]; len(keys) > 0 {
		key += " +" + strings.Join(keys, ",")
	}
	if slices.Contains(g, key) {
		return authz.Allow, "", nil
	}
	return authz.NoOpinion, "", nil
}

func TestImpersonationModes(t *testing.T) {
	list := &request.Info{IsResourceRequest: true, Verb: "list", APIVersion: "v1", Namespace: "ns", Resource: "pods"}
	sa := &authn.User{Name: "system:serviceaccount:kube-system:agent", Groups: []string{"system:serviceaccounts"},
		Extra: map[string][]string{authn.NodeNameKey: {"n1"}, authn.PodNameKey: {"agent-x"}}}
	tests := []struct {
		name       string
		grants     grants
		requestor  *authn.User
		wanted     impersonation
		wantUser   string
		wantGroups []string
		constraint string
		wantErr    string
	}{{
		name: "own node: asked for any node, the requestor's extra values as their keys",
		grants: grants{
			sa.Name + " impersonate-on:associated-node:list /pods ns/ +authentication.kubernetes.io/node-name,authentication.kubernetes.io/pod-name",
			sa.Name + " impersonate:associated-node authentication.k8s.io/nodes /* +authentication.kubernetes.io/node-name,authentication.kubernetes.io/pod-name",
		},
		requestor: sa, wanted: impersonation{name: "system:node:n1"},
		wantUser: "system:node:n1", wantGroups: []string{"system:nodes", "system:authenticated"}, constraint: "impersonate:associated-node",
	}, {
		name:      "another node than its own: the arbitrary-node mode's denial",
		requestor: sa, wanted: impersonation{name: "system:node:n2"},
		wantErr: `pods is forbidden: User "system:serviceaccount:kube-system:agent" cannot impersonate-on:arbitrary-node:list resource "pods" in API group "" in the namespace "ns"`,
	}, {
		name:      "own node denied: the check names any node",
		grants:    grants{sa.Name + " impersonate-on:associated-node:list /pods ns/ +authentication.kubernetes.io/node-name,authentication.kubernetes.io/pod-name"},
		requestor: sa, wanted: impersonation{name: "system:node:n1"},
		wantErr: `nodes.authentication.k8s.io "*" is forbidden: User "system:serviceaccount:kube-system:agent" cannot impersonate:associated-node resource "nodes" in API group "authentication.k8s.io" at the cluster scope`,
	}, {
		name:      "a service account with groups: only the legacy mode applies",
		requestor: &authn.User{Name: "alice"}, wanted: impersonation{name: "system:serviceaccount:ns:robot", groups: []string{"g"}},
		wantErr: `serviceaccounts "robot" is forbidden: User "alice" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns"`,
	}, {
		name: "legacy: every part with the impersonate verb; system:unauthenticated is kept alone",
		grants: grants{"alice impersonate /users /bob", "alice impersonate authentication.k8s.io/uids /u1", "alice impersonate /groups /g",
			"alice impersonate /groups /system:unauthenticated"},
		requestor: &authn.User{Name: "alice"}, wanted: impersonation{name: "bob", uid: "u1", groups: []string{"g", "system:unauthenticated"}},
		wantUser: "bob", wantGroups: []string{"g", "system:unauthenticated"},
	}, {
		name:      "user-info: the empty group is refused before any check of it",
		grants:    grants{"alice impersonate-on:user-info:list /pods ns/", "alice impersonate:user-info authentication.k8s.io/users /bob"},
		requestor: &authn.User{Name: "alice"}, wanted: impersonation{name: "bob", groups: []string{""}},
		wantErr: `groups.authentication.k8s.io is forbidden: User "alice" cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope: impersonating the empty string group is not allowed`,
	}, {
		name:      "user-info: an invalid extra key is refused",
		grants:    grants{"alice impersonate-on:user-info:list /pods ns/", "alice impersonate:user-info authentication.k8s.io/users /bob"},
		requestor: &authn.User{Name: "alice"}, wanted: impersonation{name: "bob", extra: map[string][]string{"scopes": {"x"}}},
		wantErr: `userextras.authentication.k8s.io is forbidden: User "alice" cannot impersonate:user-info resource "userextras" in API group "authentication.k8s.io" at the cluster scope: impersonating an invalid key in extra is not allowed`,
	}, {
		name: "user-info: many groups allowed at once",
		grants: grants{"alice impersonate-on:user-info:list /pods ns/", "alice impersonate:user-info authentication.k8s.io/users /bob",
			"alice impersonate:user-info authentication.k8s.io/groups /*"},
		requestor: &authn.User{Name: "alice"}, wanted: impersonation{name: "bob", groups: []string{"a", "b", "c", "d"}},
		wantUser: "bob", wantGroups: []string{"a", "b", "c", "d", "system:authenticated"}, constraint: "impersonate:user-info",
	}, {
		name:      "anonymous gets system:unauthenticated",
		grants:    grants{"alice impersonate /users /system:anonymous"},
		requestor: &authn.User{Name: "alice"}, wanted: impersonation{name: "system:anonymous"},
		wantUser: "system:anonymous", wantGroups: []string{"system:unauthenticated"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms := newImpersonationModes(tt.grants)
			u, constraint, err := ms.impersonate(t.Context(), &tt.wanted, authz.Attributes{User: tt.requestor, Info: list})
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v\nwant %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if u.Name != tt.wantUser || !slices.Equal(u.Groups, tt.wantGroups) || constraint != tt.constraint {
				t.Errorf("= %s %v %q, want %s %v %q", u.Name, u.Groups, constraint, tt.wantUser, tt.wantGroups, tt.constraint)
			}
		})
	}
}
