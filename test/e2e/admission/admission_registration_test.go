package admission

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"net/http"
	"strings"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestAdmissionRegistrationAPI: the six kinds of admissionregistration.k8s.io/v1
// are served with kube's defaults, and kube's validation refuses bad ones,
// CEL expressions included, with its messages.
func TestAdmissionRegistrationAPI(t *testing.T) {
	e := e2eutil.Start(t)
	c := e.Clientset.AdmissionregistrationV1()

	none := arv1.SideEffectClassNone
	url := "https://127.0.0.1:9443/validate"
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("vwc")},
		Webhooks: []arv1.ValidatingWebhook{{Name: "v.example.com", SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			ClientConfig: arv1.WebhookClientConfig{URL: &url},
			Rules: []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Create},
				Rule: arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			MatchConditions: []arv1.MatchCondition{{Name: "not-system", Expression: `!request.userInfo.username.startsWith("system:")`}}}}}
	got, err := c.ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	h := got.Webhooks[0]
	if *h.FailurePolicy != arv1.Fail || *h.MatchPolicy != arv1.Equivalent || *h.TimeoutSeconds != 10 ||
		h.NamespaceSelector == nil || h.ObjectSelector == nil || *h.Rules[0].Scope != arv1.AllScopes || got.Generation != 1 {
		t.Errorf("defaults not applied: %+v", h)
	}

	bad := vwc.DeepCopy()
	bad.Name = e2eutil.Unique("vwc")
	bad.Webhooks[0].MatchConditions[0].Expression = `request.nope == 1`
	bad.Webhooks[0].TimeoutSeconds = ptr.To[int32](31)
	_, err = c.ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), bad, metav1.CreateOptions{})
	s := e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if !strings.Contains(s.Message, "webhooks[0].matchConditions[0].expression: Invalid value: \"request.nope == 1\": compilation failed: ERROR: <input>:1:8: undefined field 'nope'") ||
		!strings.Contains(s.Message, "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds") {
		t.Errorf("message: %s", s.Message)
	}

	fail := arv1.Fail
	vap := &arv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("vap")},
		Spec: arv1.ValidatingAdmissionPolicySpec{
			ParamKind: &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
			MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
				Operations: []arv1.OperationType{arv1.Create}, Rule: arv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}},
			Variables:   []arv1.Variable{{Name: "replicas", Expression: "object.spec.replicas"}},
			Validations: []arv1.Validation{{Expression: "variables.replicas <= int(params.data.max)", MessageExpression: `"too many: " + string(variables.replicas)`}},
		}}
	gotVAP, err := c.ValidatingAdmissionPolicies().Create(e2eutil.Ctx(t), vap, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create policy: %v", err)
	}
	if *gotVAP.Spec.FailurePolicy != fail || *gotVAP.Spec.MatchConstraints.MatchPolicy != arv1.Equivalent {
		t.Errorf("policy defaults not applied: %+v", gotVAP.Spec)
	}
	// status is the status subresource's: a write of the main resource keeps it.
	gotVAP.Status.ObservedGeneration = 7
	if upd, err := c.ValidatingAdmissionPolicies().Update(e2eutil.Ctx(t), gotVAP, metav1.UpdateOptions{}); err != nil || upd.Status.ObservedGeneration != 0 {
		t.Errorf("update kept status %v: %v", upd.Status, err)
	}
	gotVAP, _ = c.ValidatingAdmissionPolicies().Get(e2eutil.Ctx(t), gotVAP.Name, metav1.GetOptions{})
	gotVAP.Status.ObservedGeneration = gotVAP.Generation
	if upd, err := c.ValidatingAdmissionPolicies().UpdateStatus(e2eutil.Ctx(t), gotVAP, metav1.UpdateOptions{}); err != nil || upd.Status.ObservedGeneration != gotVAP.Generation {
		t.Errorf("status update: %v %v", upd, err)
	}

	badVAP := vap.DeepCopy()
	badVAP.Name = e2eutil.Unique("vap")
	badVAP.Spec.ParamKind = nil
	badVAP.Spec.Validations = []arv1.Validation{{Expression: `variables.replicas`}}
	_, err = c.ValidatingAdmissionPolicies().Create(e2eutil.Ctx(t), badVAP, metav1.CreateOptions{})
	s = e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if !strings.Contains(s.Message, `spec.validations[0].expression: Invalid value: "variables.replicas": must evaluate to bool but got dyn`) {
		t.Errorf("message: %s", s.Message)
	}

	binding := &arv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("vapb")},
		Spec: arv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: vap.Name, ValidationActions: []arv1.ValidationAction{arv1.Deny, arv1.Warn},
			ParamRef: &arv1.ParamRef{Name: "limits"}}}
	_, err = c.ValidatingAdmissionPolicyBindings().Create(e2eutil.Ctx(t), binding, metav1.CreateOptions{})
	s = e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if !strings.Contains(s.Message, "must not contain both Deny and Warn") || !strings.Contains(s.Message, "spec.paramRef.parameterNotFoundAction: Required value") {
		t.Errorf("message: %s", s.Message)
	}

	mapol := &arv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("map")},
		Spec: arv1.MutatingAdmissionPolicySpec{ReinvocationPolicy: arv1.NeverReinvocationPolicy,
			MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
				Operations: []arv1.OperationType{arv1.Create}, Rule: arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			Mutations: []arv1.Mutation{{PatchType: arv1.PatchTypeApplyConfiguration, ApplyConfiguration: &arv1.ApplyConfiguration{
				Expression: `Object{metadata: Object.metadata{labels: {"mutated": "true"}}}`}}}}}
	if _, err := c.MutatingAdmissionPolicies().Create(e2eutil.Ctx(t), mapol, metav1.CreateOptions{}); err != nil {
		t.Errorf("create mutating policy: %v", err)
	}
	mapol.Name = e2eutil.Unique("map")
	mapol.Spec.Mutations[0].ApplyConfiguration.Expression = `{"a": 1}`
	_, err = c.MutatingAdmissionPolicies().Create(e2eutil.Ctx(t), mapol, metav1.CreateOptions{})
	s = e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if !strings.Contains(s.Message, "must evaluate to Object but got map(string, int)") {
		t.Errorf("message: %s", s.Message)
	}

	// kubectl's table columns come from the printers; the group is in
	// kube's category.
	r := e.Do(t, http.MethodGet, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"+vwc.Name, nil,
		"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	if r.Code != http.StatusOK || !strings.Contains(string(r.Body), `"name":"Webhooks"`) {
		t.Errorf("table: %d %s", r.Code, r.Body)
	}
	r = e.Do(t, http.MethodGet, "/apis/admissionregistration.k8s.io/v1", nil)
	if !strings.Contains(string(r.Body), `"categories":["api-extensions"]`) {
		t.Errorf("discovery: %s", r.Body)
	}
}
