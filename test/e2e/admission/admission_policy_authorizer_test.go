package admission

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"net/http"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAdmissionPolicyAuthorizer: the authorizer binding asks the server's
// authorizer, as the write's user or as a service account.
func TestAdmissionPolicyAuthorizer(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.VapNamespace(t, "authz")

	// The test's user (a cluster admin) may read secrets; a service account
	// without roles may not; the request's own resource check is allowed.
	// (Each check costs a third of an expression's limit, as in kube.)
	p := e2eutil.VapOf(e2eutil.Unique("authz"), "authz", "az",
		arv1.Validation{Expression: `authorizer.requestResource.check("create").allowed()`},
		arv1.Validation{Expression: `!authorizer.serviceAccount(object.metadata.namespace, "nobody").group("").resource("secrets").namespace(object.metadata.namespace).check("get").allowed()`},
		arv1.Validation{Expression: `authorizer.path("/healthz").check("get").allowed()`},
		arv1.Validation{Expression: `!authorizer.group("").resource("secrets").check("get").allowed()`, Message: "the admin may read secrets"})
	e.Bind(t, p, &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{
		ValidationActions: []arv1.ValidationAction{arv1.Deny}}})
	err := refusedEventually(t, e, ns, "az", nil)
	s := e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if want := "denied request: the admin may read secrets"; len(s.Message) < len(want) || s.Message[len(s.Message)-len(want):] != want {
		t.Errorf("message %q", s.Message)
	}

	// A mutating policy's match condition: the service account may not
	// create config maps, so nothing is mutated; the user may.
	for _, who := range []string{"sa", "user"} {
		cond := `authorizer.group("").resource("configmaps").namespace(object.metadata.namespace).check("create").allowed()`
		if who == "sa" {
			cond = `authorizer.serviceAccount(object.metadata.namespace, "nobody").group("").resource("configmaps").namespace(object.metadata.namespace).check("create").allowed()`
		}
		m := e2eutil.MapOf(e2eutil.Unique("authz-"+who), "authz", "", "configmaps", "az",
			applyConfiguration(`Object{metadata: Object.metadata{labels: {"`+who+`": "yes"}}}`))
		m.Spec.MatchConditions = append(m.Spec.MatchConditions, arv1.MatchCondition{Name: "authz", Expression: cond})
		e.BindMutating(t, m, nil)
	}
	labeled := e.MapNamespace(t, "authz")
	got := mutatedEventually(t, e, labeled, "az-ok", nil, func(cm *corev1.ConfigMap) bool { return cm.Labels["user"] != "" })
	if got.Labels["sa"] != "" {
		t.Errorf("labels %v: the service account's check passed", got.Labels)
	}
}

// TestAdmissionWebhookAuthorizerCondition: a webhook's match condition
// may ask the authorizer; one whose check fails is not called.
func TestAdmissionWebhookAuthorizerCondition(t *testing.T) {
	e := e2eutil.Start(t)
	wh := e2eutil.NewAdmissionWebhook(t)
	ns := e.LabeledNamespace(t, "authz")
	user := e2eutil.ValidatingHook("user.example.com", wh.Handle("/user", nil), wh.CABundle, "authz")
	user.MatchConditions = []arv1.MatchCondition{{Name: "user", Expression: `authorizer.requestResource.check("create").allowed()`}}
	sa := e2eutil.ValidatingHook("sa.example.com", wh.Handle("/sa", nil), wh.CABundle, "authz")
	sa.MatchConditions = []arv1.MatchCondition{{Name: "sa", Expression: `authorizer.serviceAccount("default", "nobody").group("").resource("configmaps").check("create").allowed()`}}
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("vwc")}, Webhooks: []arv1.ValidatingWebhook{sa, user}}
	if _, err := e.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	e2eutil.WaitCalled(t, e, wh, "/user", ns)
	if n := len(wh.Seen("/sa")); n != 0 {
		t.Errorf("the webhook whose condition the service account fails was called %d times", n)
	}
}
