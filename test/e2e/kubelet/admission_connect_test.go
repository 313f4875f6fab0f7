package kubelet

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestConnectAdmission: pods/exec, attach, portforward and the proxies go
// through admission as kube sends them: operation CONNECT, the options
// object (PodExecOptions) as object and kind, no old object or options.
// A webhook and a policy with CONNECT rules may refuse them; pods/log is
// a read, not admitted; a dry run of a connect is refused.
func TestConnectAdmission(t *testing.T) {
	ke := startKubelet(t)
	ns, err := ke.Clientset.CoreV1().Namespaces().Get(e2eutil.Ctx(t), ke.ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns.Labels = map[string]string{"webhooks": "connect", "vap": "connect"}
	if _, err := ke.Clientset.CoreV1().Namespaces().Update(e2eutil.Ctx(t), ns, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wh := e2eutil.NewAdmissionWebhook(t)
	url := wh.Handle("/connect", func(w http.ResponseWriter, _ *http.Request, review *admissionv1.AdmissionReview) {
		var opts corev1.PodExecOptions
		_ = json.Unmarshal(review.Request.Object.Raw, &opts)
		if len(opts.Command) > 0 && opts.Command[0] == "forbidden" {
			e2eutil.Allow(w, review, &admissionv1.AdmissionResponse{Result: &metav1.Status{Message: "no forbidden commands", Code: http.StatusForbidden}})
			return
		}
		e2eutil.Allow(w, review, nil)
	})
	h := e2eutil.ValidatingHook("connect.example.com", url, wh.CABundle, "connect")
	h.Rules = []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.Connect},
		Rule: arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/*"}}}}
	vwc := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("connect")}, Webhooks: []arv1.ValidatingWebhook{h}}
	if _, err := ke.Clientset.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(e2eutil.Ctx(t), vwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	execute := func(ctx context.Context, command string, params ...string) error {
		r := ke.Clientset.CoreV1().RESTClient().Post().Namespace(ke.ns).Resource("pods").Name("web").SubResource("exec").
			Param("command", command).Param("stdout", "true")
		for i := 0; i+1 < len(params); i += 2 {
			r = r.Param(params[i], params[i+1])
		}
		return r.Do(ctx).Error()
	}
	e2eutil.Eventually(t, 30*time.Second, "connect webhook in force", func(ctx context.Context) (bool, error) {
		err := execute(ctx, "forbidden")
		return err != nil && strings.Contains(err.Error(), "no forbidden commands"), nil
	})
	err = execute(e2eutil.Ctx(t), "forbidden")
	e2eutil.WantStatus(t, err, http.StatusForbidden, "", `admission webhook "connect.example.com" denied the request: no forbidden commands`)
	r := e2eutil.LastReview(t, wh, "/connect")
	if r.Operation != admissionv1.Connect || r.Kind.Kind != "PodExecOptions" || r.Kind.Version != "v1" || r.Resource.Resource != "pods" ||
		r.SubResource != "exec" || r.Name != "web" || r.Namespace != ke.ns || len(r.OldObject.Raw) != 0 || len(r.Options.Raw) != 0 ||
		!strings.Contains(string(r.Object.Raw), `"kind":"PodExecOptions"`) || !strings.Contains(string(r.Object.Raw), `"command":["forbidden"]`) {
		t.Errorf("connect review: %+v\nobject %s", r, r.Object.Raw)
	}
	if out, stderr, err := ke.kubectl(t, nil, "exec", "web", "--", "echo", "hello"); err != nil || out != "hello\n" {
		t.Errorf("allowed exec: %q %v\n%s", out, err, stderr)
	}
	err = execute(e2eutil.Ctx(t), "ls", "dryRun", "All")
	e2eutil.WantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest, "dryRun is not supported")

	// pods/log is a read: no review.
	before := len(wh.Seen("/connect"))
	ke.k.AppendLog(ke.ns, "web", "c", "logged\n")
	if out, stderr, err := ke.kubectl(t, nil, "logs", "web"); err != nil {
		t.Errorf("logs: %q %v\n%s", out, err, stderr)
	}
	for _, r := range wh.Seen("/connect")[before:] {
		if r.Request.SubResource == "log" {
			t.Errorf("pods/log sent to a CONNECT webhook: %+v", r.Request)
		}
	}

	// A policy with a CONNECT rule sees the options as object.
	p := e2eutil.VapOf(e2eutil.Unique("connect"), "connect", "", arv1.Validation{Expression: `object.command[0] != "rm"`, Message: "no rm"})
	p.Spec.MatchConditions = nil
	p.Spec.MatchConstraints.ResourceRules[0].Operations = []arv1.OperationType{arv1.Connect}
	p.Spec.MatchConstraints.ResourceRules[0].Resources = []string{"pods/exec"}
	e := ke.Env
	e.Bind(t, p, &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{ValidationActions: []arv1.ValidationAction{arv1.Deny}}})
	e2eutil.Eventually(t, 30*time.Second, "connect policy in force", func(ctx context.Context) (bool, error) {
		err := execute(ctx, "rm")
		return err != nil && strings.Contains(err.Error(), "no rm"), nil
	})
	err = execute(e2eutil.Ctx(t), "rm")
	e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid,
		"pods \"web\" is forbidden: ValidatingAdmissionPolicy '"+p.Name+"' with binding '"+p.Name+"' denied request: no rm")
}
