package attack

import (
	"context"
	"net/http"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/capstan-io/capstan/testserver"
)

const scopeCRDs = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.scope.example.com}
spec:
  group: scope.example.com
  scope: Cluster
  names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.scope.example.com}
spec:
  group: scope.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`

// TestCustomResourceScopes (CVE-2019-11247): a cluster-scoped custom
// resource is not reachable through a namespaced path, where a user with
// rights in one namespace only could read or delete it, and a namespaced
// one is not reachable by name without its namespace.
func TestCustomResourceScopes(t *testing.T) {
	t.Parallel()
	s := start(t, testserver.WithCRDs([]byte(scopeCRDs)))
	dyn := dynamic.NewForConfigOrDie(s.RESTConfig())
	gadgets := schema.GroupVersionResource{Group: "scope.example.com", Version: "v1", Resource: "gadgets"}
	widgets := gadgets.GroupVersion().WithResource("widgets")
	obj := func(kind, name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scope.example.com/v1", "kind": kind, "metadata": map[string]any{"name": name}}}
	}
	if _, err := dyn.Resource(gadgets).Create(ctx(t), obj("Gadget", "g1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(widgets).Namespace("default").Create(ctx(t), obj("Widget", "w1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// bob may do anything to gadgets and widgets in the namespace team, and
	// nothing outside it.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "all", Namespace: "team"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"scope.example.com"}, Resources: []string{"*"}, Verbs: []string{"*"}}}}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bob", Namespace: "team"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "all"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "bob"}}}
	if _, err := s.client.CoreV1().Namespaces().Create(ctx(t), namespace("team"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.RbacV1().Roles("team").Create(ctx(t), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.client.RbacV1().RoleBindings("team").Create(ctx(t), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bobCfg := s.RESTConfig()
	bobCfg.Impersonate.UserName = "bob"
	bob := httpClient(t, bobCfg)
	// RBAC reads roles and bindings from its informers, as kube's does:
	// wait until bob's rights are in force before trying them.
	bobClient := kubernetes.NewForConfigOrDie(bobCfg)
	err := wait.PollUntilContextTimeout(ctx(t), 50*time.Millisecond, 30*time.Second, true, func(c context.Context) (bool, error) {
		r, err := bobClient.AuthorizationV1().SelfSubjectAccessReviews().Create(c, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "team", Verb: "get", Group: "scope.example.com", Resource: "gadgets"}}}, metav1.CreateOptions{})
		return err == nil && r.Status.Allowed, nil
	})
	if err != nil {
		t.Fatalf("bob's role in team never took effect: %v", err)
	}
	const base = "/apis/scope.example.com/v1"
	for _, tc := range []struct {
		who, method, path string
		code              int
	}{
		{"bob", http.MethodGet, base + "/namespaces/team/gadgets/g1", http.StatusNotFound},
		{"bob", http.MethodDelete, base + "/namespaces/team/gadgets/g1", http.StatusNotFound},
		{"bob", http.MethodGet, base + "/namespaces/team/gadgets", http.StatusNotFound},
		{"bob", http.MethodDelete, base + "/namespaces/team/gadgets", http.StatusNotFound},
		{"bob", http.MethodGet, base + "/gadgets/g1", http.StatusForbidden},
		{"admin", http.MethodGet, base + "/namespaces/default/gadgets/g1", http.StatusNotFound},
		{"admin", http.MethodDelete, base + "/namespaces/default/gadgets/g1", http.StatusNotFound},
		{"admin", http.MethodGet, base + "/widgets/w1", http.StatusNotFound},
		{"admin", http.MethodDelete, base + "/widgets/w1", http.StatusNotFound},
	} {
		hc := s.http
		if tc.who == "bob" {
			hc = bob
		}
		a := doWith(t, hc, tc.method, s.URL+tc.path, "", nil)
		// kube's 404 here is its final handler's plain "404 page not
		// found", as if the path did not exist.
		if a.code != tc.code {
			t.Errorf("%s %s %s: %d %s, want %d", tc.who, tc.method, tc.path, a.code, a.body, tc.code)
		}
	}
	if _, err := dyn.Resource(gadgets).Get(ctx(t), "g1", metav1.GetOptions{}); err != nil {
		t.Errorf("the cluster-scoped gadget after the attempts: %v", err)
	}
	if _, err := dyn.Resource(widgets).Namespace("default").Get(ctx(t), "w1", metav1.GetOptions{}); err != nil {
		t.Errorf("the namespaced widget after the attempts: %v", err)
	}
}
