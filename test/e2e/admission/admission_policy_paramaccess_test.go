package admission

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"net/http"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// TestAdmissionPolicyParamAccess: who writes a policy with a paramKind
// must be allowed to get every object of that kind, and who writes a
// binding with a paramRef the param it names (list, for a selector), as
// kube checks, with kube's 422 and messages; system:masters is not checked.
func TestAdmissionPolicyParamAccess(t *testing.T) {
	e := e2eutil.Start(t)
	writer := rbacv1.PolicyRule{APIGroups: []string{arv1.GroupName}, Verbs: []string{"create", "update", "get"},
		Resources: []string{"validatingadmissionpolicies", "validatingadmissionpolicybindings", "mutatingadmissionpolicies", "mutatingadmissionpolicybindings"}}
	e.Grant(t, "alice", writer)
	e.Grant(t, "bob", writer)
	as := func(user string) kubernetes.Interface {
		return e.ClientWith(t, func(cfg *rest.Config) { cfg.Impersonate.UserName = user })
	}
	alice, bob := as("alice").AdmissionregistrationV1(), as("bob").AdmissionregistrationV1()
	withParams := func() *arv1.ValidatingAdmissionPolicy {
		p := e2eutil.VapOf(e2eutil.Unique("params"), "x", "", arv1.Validation{Expression: "true"})
		p.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
		return p
	}

	_, err := alice.ValidatingAdmissionPolicies().Create(e2eutil.Ctx(t), withParams(), metav1.CreateOptions{})
	wantForbiddenField(t, err, "spec.paramKind", `Forbidden: user &{alice  [system:authenticated] map[]} must have "get" permission on all objects of the referenced paramKind (kind=ConfigMap, apiVersion=v1)`)
	mp := e2eutil.MapOf(e2eutil.Unique("params"), "x", "", "configmaps", "", e2eutil.JSONPatchOf(`[JSONPatch{op: "test", path: "/kind", value: "ConfigMap"}]`))
	mp.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	_, err = alice.MutatingAdmissionPolicies().Create(e2eutil.Ctx(t), mp, metav1.CreateOptions{})
	wantForbiddenField(t, err, "spec.paramKind", `Forbidden: user &{alice  [system:authenticated] map[]} must have "get" permission on all objects of the referenced paramKind (kind=ConfigMap, apiVersion=v1)`)

	// Allowed to get config maps, alice may; so may system:masters.
	e.Grant(t, "alice", rbacv1.PolicyRule{APIGroups: []string{""}, Verbs: []string{"get"}, Resources: []string{"configmaps"}})
	var p *arv1.ValidatingAdmissionPolicy
	e2eutil.Eventually(t, 30*time.Second, "alice may write a policy with config map params", func(c context.Context) (bool, error) {
		var err error
		p, err = alice.ValidatingAdmissionPolicies().Create(c, withParams(), metav1.CreateOptions{})
		return err == nil, nil
	})
	if _, err := e.Clientset.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(e2eutil.Ctx(t), withParams(), metav1.CreateOptions{}); err != nil {
		t.Errorf("system:masters: %v", err)
	}

	// A binding's param: get by name, list by selector.
	binding := func(ref arv1.ParamRef) *arv1.ValidatingAdmissionPolicyBinding {
		return &arv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("b")}, Spec: arv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: p.Name, ParamRef: &ref, ValidationActions: []arv1.ValidationAction{arv1.Deny}}}
	}
	deny := ptr.To(arv1.DenyAction)
	_, err = bob.ValidatingAdmissionPolicyBindings().Create(e2eutil.Ctx(t), binding(arv1.ParamRef{Name: "p", Namespace: "default", ParameterNotFoundAction: deny}), metav1.CreateOptions{})
	wantForbiddenField(t, err, "spec.paramRef", `Forbidden: user &{bob  [system:authenticated] map[]} does not have "get" permission on the object referenced by paramRef`)
	_, err = bob.ValidatingAdmissionPolicyBindings().Create(e2eutil.Ctx(t), binding(arv1.ParamRef{Selector: &metav1.LabelSelector{}, Namespace: "default", ParameterNotFoundAction: deny}), metav1.CreateOptions{})
	wantForbiddenField(t, err, "spec.paramRef", `Forbidden: user &{bob  [system:authenticated] map[]} does not have "list" permission on the object referenced by paramRef`)
	if _, err := alice.ValidatingAdmissionPolicyBindings().Create(e2eutil.Ctx(t), binding(arv1.ParamRef{Name: "p", Namespace: "default", ParameterNotFoundAction: deny}), metav1.CreateOptions{}); err != nil {
		t.Errorf("alice's binding: %v", err)
	}
}

// wantForbiddenField checks that err is an Invalid status with a cause
// of field whose message is message.
func wantForbiddenField(t *testing.T, err error, field, message string) {
	t.Helper()
	s := e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	for _, c := range s.Details.Causes {
		if c.Field == field && c.Message == message {
			return
		}
	}
	t.Errorf("causes %+v, want %s: %q", s.Details.Causes, field, message)
}
