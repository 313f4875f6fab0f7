package auth

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/internal/testkit"
)

// namespacedPolicyGolden is what `kubectl get roles,rolebindings -A -o yaml`
// shows on a fresh kube-apiserver v1.37.2, reduced to the metadata and
// content the bootstrap policy sets.
const namespacedPolicyGolden = `
roles:
- {namespace: kube-public, name: "system:controller:bootstrap-signer", rules: [
    {apiGroups: [""], resources: [configmaps], verbs: [get, list, watch]},
    {apiGroups: [""], resourceNames: [cluster-info], resources: [configmaps], verbs: [update]},
    {apiGroups: ["", events.k8s.io], resources: [events], verbs: [create, patch, update]}]}
- {namespace: kube-system, name: extension-apiserver-authentication-reader, rules: [
    {apiGroups: [""], resourceNames: [extension-apiserver-authentication], resources: [configmaps], verbs: [get, list, watch]}]}
- {namespace: kube-system, name: "system::leader-locking-kube-controller-manager", rules: [
    {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [create, get, list, update, watch]},
    {apiGroups: [coordination.k8s.io], resources: [leasecandidates], verbs: [create, get, list, update, watch]}]}
- {namespace: kube-system, name: "system::leader-locking-kube-scheduler", rules: [
    {apiGroups: [coordination.k8s.io], resources: [leases], verbs: [create, get, list, update, watch]},
    {apiGroups: [coordination.k8s.io], resources: [leasecandidates], verbs: [create, get, list, update, watch]}]}
- {namespace: kube-system, name: "system:controller:bootstrap-signer", rules: [
    {apiGroups: [""], resources: [secrets], verbs: [get, list, watch]}]}
- {namespace: kube-system, name: "system:controller:cloud-provider", rules: [
    {apiGroups: [""], resources: [configmaps], verbs: [create, get, list, watch]}]}
- {namespace: kube-system, name: "system:controller:token-cleaner", rules: [
    {apiGroups: [""], resources: [secrets], verbs: [delete, get, list, watch]},
    {apiGroups: ["", events.k8s.io], resources: [events], verbs: [create, patch, update]}]}
bindings:
- {namespace: kube-public, name: "system:controller:bootstrap-signer", role: "system:controller:bootstrap-signer", subjects: [
    {kind: ServiceAccount, name: bootstrap-signer, namespace: kube-system}]}
- {namespace: kube-system, name: "system::extension-apiserver-authentication-reader", role: extension-apiserver-authentication-reader, subjects: [
    {apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:kube-controller-manager"},
    {apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:kube-scheduler"}]}
- {namespace: kube-system, name: "system::leader-locking-kube-controller-manager", role: "system::leader-locking-kube-controller-manager", subjects: [
    {apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:kube-controller-manager"},
    {kind: ServiceAccount, name: kube-controller-manager, namespace: kube-system},
    {kind: ServiceAccount, name: leader-election-controller, namespace: kube-system}]}
- {namespace: kube-system, name: "system::leader-locking-kube-scheduler", role: "system::leader-locking-kube-scheduler", subjects: [
    {apiGroup: rbac.authorization.k8s.io, kind: User, name: "system:kube-scheduler"},
    {kind: ServiceAccount, name: kube-scheduler, namespace: kube-system}]}
- {namespace: kube-system, name: "system:controller:bootstrap-signer", role: "system:controller:bootstrap-signer", subjects: [
    {kind: ServiceAccount, name: bootstrap-signer, namespace: kube-system}]}
- {namespace: kube-system, name: "system:controller:cloud-provider", role: "system:controller:cloud-provider", subjects: [
    {kind: ServiceAccount, name: cloud-provider, namespace: kube-system}]}
- {namespace: kube-system, name: "system:controller:token-cleaner", role: "system:controller:token-cleaner", subjects: [
    {kind: ServiceAccount, name: token-cleaner, namespace: kube-system}]}
`

type goldenRole struct {
	Namespace string              `json:"namespace"`
	Name      string              `json:"name"`
	Rules     []rbacv1.PolicyRule `json:"rules"`
}

type goldenBinding struct {
	Namespace string           `json:"namespace"`
	Name      string           `json:"name"`
	Role      string           `json:"role"`
	Subjects  []rbacv1.Subject `json:"subjects"`
}

type namespacedPolicy struct {
	Roles    []goldenRole    `json:"roles"`
	Bindings []goldenBinding `json:"bindings"`
}

// TestBootstrapNamespacedPolicy: the bootstrap Roles and RoleBindings of
// kube-system and kube-public are kube's, with the bootstrap metadata.
func TestBootstrapNamespacedPolicy(t *testing.T) {
	var want namespacedPolicy
	if err := yaml.UnmarshalStrict([]byte(namespacedPolicyGolden), &want); err != nil {
		t.Fatal(err)
	}
	s := testkit.StartServer(t)
	admin := s.Client(t)
	var got namespacedPolicy
	eventually(t, "all bootstrap rolebindings exist", func(ctx context.Context) error {
		got = namespacedPolicy{}
		for _, ns := range []string{"kube-public", "kube-system"} {
			roles, err := admin.RbacV1().Roles(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, r := range roles.Items {
				if err := bootstrapMeta(r.ObjectMeta); err != nil {
					return err
				}
				got.Roles = append(got.Roles, goldenRole{r.Namespace, r.Name, r.Rules})
			}
			bindings, err := admin.RbacV1().RoleBindings(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, b := range bindings.Items {
				if err := bootstrapMeta(b.ObjectMeta); err != nil {
					return err
				}
				if b.RoleRef.APIGroup != rbacv1.GroupName || b.RoleRef.Kind != "Role" {
					return fmt.Errorf("rolebinding %s/%s refers to %+v", b.Namespace, b.Name, b.RoleRef)
				}
				got.Bindings = append(got.Bindings, goldenBinding{b.Namespace, b.Name, b.RoleRef.Name, b.Subjects})
			}
		}
		if len(got.Bindings) < len(want.Bindings) {
			return fmt.Errorf("%d of %d rolebindings", len(got.Bindings), len(want.Bindings))
		}
		return nil
	})
	for i := range max(len(got.Roles), len(want.Roles)) {
		if i >= len(got.Roles) || i >= len(want.Roles) || !reflect.DeepEqual(got.Roles[i], want.Roles[i]) {
			t.Errorf("role %d:\n got %+v\nwant %+v", i, at(got.Roles, i), at(want.Roles, i))
		}
	}
	for i := range max(len(got.Bindings), len(want.Bindings)) {
		if i >= len(got.Bindings) || i >= len(want.Bindings) || !reflect.DeepEqual(got.Bindings[i], want.Bindings[i]) {
			t.Errorf("rolebinding %d:\n got %+v\nwant %+v", i, at(got.Bindings, i), at(want.Bindings, i))
		}
	}
}

func bootstrapMeta(m metav1.ObjectMeta) error {
	if m.Labels["kubernetes.io/bootstrapping"] != "rbac-defaults" || m.Annotations[rbacv1.AutoUpdateAnnotationKey] != "true" {
		return fmt.Errorf("%s/%s: labels %v annotations %v", m.Namespace, m.Name, m.Labels, m.Annotations)
	}
	return nil
}

func at[T any](s []T, i int) any {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}
