package admission

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	arv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func applyConfiguration(expression string) arv1.Mutation {
	return arv1.Mutation{PatchType: arv1.PatchTypeApplyConfiguration, ApplyConfiguration: &arv1.ApplyConfiguration{Expression: expression}}
}

// mutatedEventually creates config maps named prefix-* with labels until
// done says one came back mutated, and returns it.
func mutatedEventually(t *testing.T, e *e2eutil.Env, ns, prefix string, labels map[string]string, done func(*corev1.ConfigMap) bool) *corev1.ConfigMap {
	t.Helper()
	var got *corev1.ConfigMap
	e2eutil.Eventually(t, 30*time.Second, "policy in force for "+prefix, func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique(prefix), Labels: labels}, Data: map[string]string{"k": "v"}}
		out, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		got = out
		return done(out), nil
	})
	return got
}

func TestMutatingAdmissionPolicy(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.MapNamespace(t, "on")
	paramsNS := e.Namespace(t)
	param := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "team"}, Data: map[string]string{"team": "blue"}}
	if _, err := e.Clientset.CoreV1().ConfigMaps(paramsNS).Create(e2eutil.Ctx(t), param, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// ApplyConfiguration with params and variables.
	ac := e2eutil.MapOf(e2eutil.Unique("team-label"), "on", "", "configmaps", "ac",
		applyConfiguration(`Object{metadata: Object.metadata{labels: {"team": variables.team}}}`))
	ac.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	ac.Spec.Variables = []arv1.Variable{{Name: "team", Expression: "params.data.team"}}
	e.BindMutating(t, ac, &arv1.ParamRef{Name: "team", Namespace: paramsNS, ParameterNotFoundAction: ptr.To(arv1.DenyAction)})
	got := mutatedEventually(t, e, ns, "ac", map[string]string{"keep": "1"}, func(cm *corev1.ConfigMap) bool { return cm.Labels["team"] != "" })
	if got.Labels["team"] != "blue" || got.Labels["keep"] != "1" {
		t.Errorf("labels %v, want team=blue merged with keep=1", got.Labels)
	}
	stored, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(e2eutil.Ctx(t), got.Name, metav1.GetOptions{})
	if err != nil || stored.Labels["team"] != "blue" {
		t.Errorf("stored %v, %v", stored.Labels, err)
	}
	// The match condition leaves other names alone.
	other, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}, metav1.CreateOptions{})
	if err != nil || other.Labels["team"] != "" {
		t.Errorf("unmatched create: %v, %v", other, err)
	}

	// JSONPatch.
	jp := e2eutil.MapOf(e2eutil.Unique("json-patch"), "on", "", "configmaps", "jp",
		e2eutil.JSONPatchOf(`[JSONPatch{op: "add", path: "/data/added", value: "by " + object.metadata.namespace}]`))
	e.BindMutating(t, jp, nil)
	got = mutatedEventually(t, e, ns, "jp", nil, func(cm *corev1.ConfigMap) bool { return cm.Data["added"] != "" })
	if got.Data["added"] != "by "+ns || got.Data["k"] != "v" {
		t.Errorf("data %v", got.Data)
	}

	// An ApplyConfiguration merges lists by their keys: the env var goes
	// into the container it names.
	dep := e2eutil.MapOf(e2eutil.Unique("env"), "on", "apps", "deployments", "dep",
		applyConfiguration(`Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{
			containers: [Object.spec.template.spec.containers{name: "b", env: [Object.spec.template.spec.containers.env{name: "MUTATED", value: "yes"}]}]}}}}`))
	e.BindMutating(t, dep, nil)
	e2eutil.Eventually(t, 30*time.Second, "deployment policy in force", func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("dep")}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "a"}, {Name: "b", Image: "b"}}}}}}
		out, err := e.Clientset.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		cs := out.Spec.Template.Spec.Containers
		if len(cs) != 2 || len(cs[0].Env) != 0 {
			t.Fatalf("containers %+v", cs)
		}
		return len(cs[1].Env) == 1 && cs[1].Env[0] == corev1.EnvVar{Name: "MUTATED", Value: "yes"}, nil
	})
}

func TestMutatingAdmissionPolicyFailures(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.MapNamespace(t, "on")

	// A runtime error: refused with failurePolicy Fail, ignored with Ignore.
	for _, fp := range []arv1.FailurePolicyType{arv1.Ignore, arv1.Fail} {
		prefix := "err-" + strings.ToLower(string(fp))
		p := e2eutil.MapOf(e2eutil.Unique("errs"), "on", "", "configmaps", prefix,
			applyConfiguration(`Object{metadata: Object.metadata{labels: {"x": object.data.missing}}}`))
		p.Spec.FailurePolicy = &fp
		e.BindMutating(t, p, nil)
		if fp == arv1.Ignore {
			continue
		}
		var err error
		e2eutil.Eventually(t, 30*time.Second, "failing policy in force", func(ctx context.Context) (bool, error) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique(prefix)}, Data: map[string]string{"k": "v"}}
			_, err = e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
			return err != nil, nil
		})
		s := e2eutil.WantStatus(t, err, http.StatusForbidden, metav1.StatusReasonInvalid, "")
		want := "policy '" + p.Name + "' with binding '" + p.Name + "' denied request: expression 'Object{metadata: Object.metadata{labels: {\"x\": object.data.missing}}}' resulted in error: no such key: missing"
		if s.Message != want {
			t.Errorf("message %q\nwant %q", s.Message, want)
		}
	}
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "err-ignore"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("failurePolicy Ignore: %v", err)
	}

	// A binding whose param is missing refuses (a configuration error,
	// reason Forbidden).
	missing := e2eutil.MapOf(e2eutil.Unique("missing"), "on", "", "configmaps", "missing", applyConfiguration(`Object{}`))
	missing.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	e.BindMutating(t, missing, &arv1.ParamRef{Name: "nope", ParameterNotFoundAction: ptr.To(arv1.DenyAction)})
	var err error
	e2eutil.Eventually(t, 30*time.Second, "missing-param policy in force", func(ctx context.Context) (bool, error) {
		_, err = e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("missing")}}, metav1.CreateOptions{})
		return err != nil, nil
	})
	s := e2eutil.WantStatus(t, err, http.StatusForbidden, metav1.StatusReasonForbidden, "")
	if want := "policy '" + missing.Name + "' with binding '" + missing.Name + "' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"; s.Message != want {
		t.Errorf("message %q\nwant %q", s.Message, want)
	}
}

// TestMutatingAdmissionPolicyReinvocation: a policy with reinvocationPolicy
// IfNeeded runs again after a later policy changed the object, and sees
// the change.
func TestMutatingAdmissionPolicyReinvocation(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.MapNamespace(t, "on")
	// Policies run in name order: count before label.
	count := e2eutil.MapOf("r1-count-labels", "on", "", "configmaps", "re",
		applyConfiguration(`Object{metadata: Object.metadata{annotations: {"labels": string(size(object.metadata.labels))}}}`))
	count.Spec.ReinvocationPolicy = arv1.IfNeededReinvocationPolicy
	label := e2eutil.MapOf("r2-add-label", "on", "", "configmaps", "re",
		applyConfiguration(`Object{metadata: Object.metadata{labels: {"added": "yes"}}}`))
	e.BindMutating(t, count, nil)
	e.BindMutating(t, label, nil)
	got := mutatedEventually(t, e, ns, "re", map[string]string{"x": "1"}, func(cm *corev1.ConfigMap) bool {
		return cm.Labels["added"] != "" && cm.Annotations["labels"] != ""
	})
	if got.Annotations["labels"] != "2" {
		t.Errorf("annotation labels=%q, want 2: the first policy was not run again after the second", got.Annotations["labels"])
	}
}

// TestMutatingAdmissionPolicyWebhookReinvocation: a webhook that changes
// the object after an IfNeeded policy runs makes the whole mutating chain
// run again, the policy seeing the webhook's change.
func TestMutatingAdmissionPolicyWebhookReinvocation(t *testing.T) {
	e := e2eutil.Start(t)
	wh := e2eutil.NewAdmissionWebhook(t)
	ns := e.LabeledNamespace(t, "reinvoke")
	if _, err := e.Clientset.CoreV1().Namespaces().Patch(e2eutil.Ctx(t), ns, types.MergePatchType, []byte(`{"metadata":{"labels":{"map":"reinvoke"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	count := e2eutil.MapOf(e2eutil.Unique("count-labels"), "reinvoke", "", "configmaps", "wr",
		applyConfiguration(`Object{metadata: Object.metadata{annotations: {"labels": string(size(object.metadata.labels))}}}`))
	count.Spec.ReinvocationPolicy = arv1.IfNeededReinvocationPolicy
	e.BindMutating(t, count, nil)
	url := wh.Handle("/label", func(w http.ResponseWriter, _ *http.Request, review *admissionv1.AdmissionReview) {
		patch := `[{"op":"add","path":"/metadata/labels/webhook","value":"yes"}]`
		e2eutil.Allow(w, review, &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)})
	})
	h := e2eutil.ValidatingHook("label.example.com", url, wh.CABundle, "reinvoke")
	mwc := &arv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: e2eutil.Unique("mwc")}, Webhooks: []arv1.MutatingWebhook{{
		Name: h.Name, ClientConfig: h.ClientConfig, Rules: h.Rules, NamespaceSelector: h.NamespaceSelector,
		SideEffects: h.SideEffects, AdmissionReviewVersions: h.AdmissionReviewVersions,
		MatchConditions: []arv1.MatchCondition{{Name: "prefix", Expression: `object.metadata.name.startsWith("wr")`}}}}}
	if _, err := e.Clientset.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(e2eutil.Ctx(t), mwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := mutatedEventually(t, e, ns, "wr", map[string]string{"x": "1"}, func(cm *corev1.ConfigMap) bool {
		return cm.Labels["webhook"] != "" && cm.Annotations["labels"] != ""
	})
	if got.Annotations["labels"] != "2" {
		t.Errorf("annotation labels=%q, want 2: the policy was not run again after the webhook", got.Annotations["labels"])
	}
	// The webhook (reinvocationPolicy Never) was called once for it.
	n := 0
	for _, r := range wh.Seen("/label") {
		if r.Request.Name == got.Name {
			n++
		}
	}
	if n != 1 {
		t.Errorf("webhook called %d times for %s, want 1", n, got.Name)
	}
}
