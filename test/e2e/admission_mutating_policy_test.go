package e2e

import (
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

// mapOf is a mutating policy on the creates of resource (core or apps) in
// namespaces labeled map=label, limited to names with prefix by a match
// condition, with the given mutations.
func mapOf(name, label, group, resource, prefix string, mutations ...arv1.Mutation) *arv1.MutatingAdmissionPolicy {
	return &arv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: arv1.MutatingAdmissionPolicySpec{
		MatchConstraints: &arv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"map": label}},
			ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
				Operations: []arv1.OperationType{arv1.Create},
				Rule:       arv1.Rule{APIGroups: []string{group}, APIVersions: []string{"v1"}, Resources: []string{resource}}}}}},
		MatchConditions:    []arv1.MatchCondition{{Name: "prefix", Expression: `object.metadata.name.startsWith("` + prefix + `")`}},
		Mutations:          mutations,
		ReinvocationPolicy: arv1.NeverReinvocationPolicy,
	}}
}

func applyConfiguration(expression string) arv1.Mutation {
	return arv1.Mutation{PatchType: arv1.PatchTypeApplyConfiguration, ApplyConfiguration: &arv1.ApplyConfiguration{Expression: expression}}
}

func jsonPatchOf(expression string) arv1.Mutation {
	return arv1.Mutation{PatchType: arv1.PatchTypeJSONPatch, JSONPatch: &arv1.JSONPatch{Expression: expression}}
}

func (e *env) bindMutating(t *testing.T, p *arv1.MutatingAdmissionPolicy, ref *arv1.ParamRef) {
	t.Helper()
	c := e.c.AdmissionregistrationV1()
	if _, err := c.MutatingAdmissionPolicies().Create(ctx(t), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b := &arv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: p.Name},
		Spec: arv1.MutatingAdmissionPolicyBindingSpec{PolicyName: p.Name, ParamRef: ref}}
	if _, err := c.MutatingAdmissionPolicyBindings().Create(ctx(t), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) mapNamespace(t *testing.T, label string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: unique("map"), Labels: map[string]string{"map": label}}}
	if _, err := e.c.CoreV1().Namespaces().Create(ctx(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// mutatedEventually creates config maps named prefix-* with labels until
// done says one came back mutated, and returns it.
func mutatedEventually(t *testing.T, e *env, ns, prefix string, labels map[string]string, done func(*corev1.ConfigMap) bool) *corev1.ConfigMap {
	t.Helper()
	var got *corev1.ConfigMap
	eventually(t, 30*time.Second, "policy in force for "+prefix, func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: unique(prefix), Labels: labels}, Data: map[string]string{"k": "v"}}
		out, err := e.c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		got = out
		return done(out), nil
	})
	return got
}

func TestMutatingAdmissionPolicy(t *testing.T) {
	e := start(t)
	ns := e.mapNamespace(t, "on")
	paramsNS := e.namespace(t)
	param := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "team"}, Data: map[string]string{"team": "blue"}}
	if _, err := e.c.CoreV1().ConfigMaps(paramsNS).Create(ctx(t), param, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// ApplyConfiguration with params and variables.
	ac := mapOf(unique("team-label"), "on", "", "configmaps", "ac",
		applyConfiguration(`Object{metadata: Object.metadata{labels: {"team": variables.team}}}`))
	ac.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	ac.Spec.Variables = []arv1.Variable{{Name: "team", Expression: "params.data.team"}}
	e.bindMutating(t, ac, &arv1.ParamRef{Name: "team", Namespace: paramsNS, ParameterNotFoundAction: ptr.To(arv1.DenyAction)})
	got := mutatedEventually(t, e, ns, "ac", map[string]string{"keep": "1"}, func(cm *corev1.ConfigMap) bool { return cm.Labels["team"] != "" })
	if got.Labels["team"] != "blue" || got.Labels["keep"] != "1" {
		t.Errorf("labels %v, want team=blue merged with keep=1", got.Labels)
	}
	stored, err := e.c.CoreV1().ConfigMaps(ns).Get(ctx(t), got.Name, metav1.GetOptions{})
	if err != nil || stored.Labels["team"] != "blue" {
		t.Errorf("stored %v, %v", stored.Labels, err)
	}
	// The match condition leaves other names alone.
	other, err := e.c.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}, metav1.CreateOptions{})
	if err != nil || other.Labels["team"] != "" {
		t.Errorf("unmatched create: %v, %v", other, err)
	}

	// JSONPatch.
	jp := mapOf(unique("json-patch"), "on", "", "configmaps", "jp",
		jsonPatchOf(`[JSONPatch{op: "add", path: "/data/added", value: "by " + object.metadata.namespace}]`))
	e.bindMutating(t, jp, nil)
	got = mutatedEventually(t, e, ns, "jp", nil, func(cm *corev1.ConfigMap) bool { return cm.Data["added"] != "" })
	if got.Data["added"] != "by "+ns || got.Data["k"] != "v" {
		t.Errorf("data %v", got.Data)
	}

	// An ApplyConfiguration merges lists by their keys: the env var goes
	// into the container it names.
	dep := mapOf(unique("env"), "on", "apps", "deployments", "dep",
		applyConfiguration(`Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{
			containers: [Object.spec.template.spec.containers{name: "b", env: [Object.spec.template.spec.containers.env{name: "MUTATED", value: "yes"}]}]}}}}`))
	e.bindMutating(t, dep, nil)
	eventually(t, 30*time.Second, "deployment policy in force", func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: unique("dep")}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "a"}, {Name: "b", Image: "b"}}}}}}
		out, err := e.c.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
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
	e := start(t)
	ns := e.mapNamespace(t, "on")

	// A runtime error: refused with failurePolicy Fail, ignored with Ignore.
	for _, fp := range []arv1.FailurePolicyType{arv1.Ignore, arv1.Fail} {
		prefix := "err-" + strings.ToLower(string(fp))
		p := mapOf(unique("errs"), "on", "", "configmaps", prefix,
			applyConfiguration(`Object{metadata: Object.metadata{labels: {"x": object.data.missing}}}`))
		p.Spec.FailurePolicy = &fp
		e.bindMutating(t, p, nil)
		if fp == arv1.Ignore {
			continue
		}
		var err error
		eventually(t, 30*time.Second, "failing policy in force", func(ctx context.Context) (bool, error) {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: unique(prefix)}, Data: map[string]string{"k": "v"}}
			_, err = e.c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
			return err != nil, nil
		})
		s := wantStatus(t, err, http.StatusForbidden, metav1.StatusReasonInvalid, "")
		want := "policy '" + p.Name + "' with binding '" + p.Name + "' denied request: expression 'Object{metadata: Object.metadata{labels: {\"x\": object.data.missing}}}' resulted in error: no such key: missing"
		if s.Message != want {
			t.Errorf("message %q\nwant %q", s.Message, want)
		}
	}
	if _, err := e.c.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "err-ignore"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("failurePolicy Ignore: %v", err)
	}

	// A binding whose param is missing refuses (a configuration error,
	// reason Forbidden).
	missing := mapOf(unique("missing"), "on", "", "configmaps", "missing", applyConfiguration(`Object{}`))
	missing.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	e.bindMutating(t, missing, &arv1.ParamRef{Name: "nope", ParameterNotFoundAction: ptr.To(arv1.DenyAction)})
	var err error
	eventually(t, 30*time.Second, "missing-param policy in force", func(ctx context.Context) (bool, error) {
		_, err = e.c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: unique("missing")}}, metav1.CreateOptions{})
		return err != nil, nil
	})
	s := wantStatus(t, err, http.StatusForbidden, metav1.StatusReasonForbidden, "")
	if want := "policy '" + missing.Name + "' with binding '" + missing.Name + "' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"; s.Message != want {
		t.Errorf("message %q\nwant %q", s.Message, want)
	}
}

// TestMutatingAdmissionPolicyReinvocation: a policy with reinvocationPolicy
// IfNeeded runs again after a later policy changed the object, and sees
// the change.
func TestMutatingAdmissionPolicyReinvocation(t *testing.T) {
	e := start(t)
	ns := e.mapNamespace(t, "on")
	// Policies run in name order: count before label.
	count := mapOf("r1-count-labels", "on", "", "configmaps", "re",
		applyConfiguration(`Object{metadata: Object.metadata{annotations: {"labels": string(size(object.metadata.labels))}}}`))
	count.Spec.ReinvocationPolicy = arv1.IfNeededReinvocationPolicy
	label := mapOf("r2-add-label", "on", "", "configmaps", "re",
		applyConfiguration(`Object{metadata: Object.metadata{labels: {"added": "yes"}}}`))
	e.bindMutating(t, count, nil)
	e.bindMutating(t, label, nil)
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
	e := start(t)
	wh := newAdmissionWebhook(t)
	ns := e.labeledNamespace(t, "reinvoke")
	if _, err := e.c.CoreV1().Namespaces().Patch(ctx(t), ns, types.MergePatchType, []byte(`{"metadata":{"labels":{"map":"reinvoke"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	count := mapOf(unique("count-labels"), "reinvoke", "", "configmaps", "wr",
		applyConfiguration(`Object{metadata: Object.metadata{annotations: {"labels": string(size(object.metadata.labels))}}}`))
	count.Spec.ReinvocationPolicy = arv1.IfNeededReinvocationPolicy
	e.bindMutating(t, count, nil)
	url := wh.handle("/label", func(w http.ResponseWriter, _ *http.Request, review *admissionv1.AdmissionReview) {
		patch := `[{"op":"add","path":"/metadata/labels/webhook","value":"yes"}]`
		allow(w, review, &admissionv1.AdmissionResponse{Allowed: true, Patch: []byte(patch), PatchType: ptr.To(admissionv1.PatchTypeJSONPatch)})
	})
	h := validatingHook("label.example.com", url, wh.caBundle, "reinvoke")
	mwc := &arv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: unique("mwc")}, Webhooks: []arv1.MutatingWebhook{{
		Name: h.Name, ClientConfig: h.ClientConfig, Rules: h.Rules, NamespaceSelector: h.NamespaceSelector,
		SideEffects: h.SideEffects, AdmissionReviewVersions: h.AdmissionReviewVersions,
		MatchConditions: []arv1.MatchCondition{{Name: "prefix", Expression: `object.metadata.name.startsWith("wr")`}}}}}
	if _, err := e.c.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx(t), mwc, metav1.CreateOptions{}); err != nil {
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
	for _, r := range wh.seen("/label") {
		if r.Request.Name == got.Name {
			n++
		}
	}
	if n != 1 {
		t.Errorf("webhook called %d times for %s, want 1", n, got.Name)
	}
}
