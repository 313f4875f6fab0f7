package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// vapOf is a policy on the creates of config maps in namespaces labeled
// vap=label, limited to names with prefix by a match condition.
func vapOf(name, label, prefix string, validations ...arv1.Validation) *arv1.ValidatingAdmissionPolicy {
	return &arv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: arv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &arv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"vap": label}},
			ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
				Operations: []arv1.OperationType{arv1.Create, arv1.Update},
				Rule:       arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
		MatchConditions: []arv1.MatchCondition{{Name: "prefix", Expression: fmt.Sprintf("object.metadata.name.startsWith(%q)", prefix)}},
		Validations:     validations,
	}}
}

func (e *env) vapNamespace(t *testing.T, label string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: unique("vap"), Labels: map[string]string{"vap": label}}}
	if _, err := e.c.CoreV1().Namespaces().Create(ctx(t), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func (e *env) bind(t *testing.T, p *arv1.ValidatingAdmissionPolicy, b *arv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	c := e.c.AdmissionregistrationV1()
	if _, err := c.ValidatingAdmissionPolicies().Create(ctx(t), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if b.Name == "" {
		b.Name = p.Name
	}
	b.Spec.PolicyName = p.Name
	if _, err := c.ValidatingAdmissionPolicyBindings().Create(ctx(t), b, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// refusedEventually creates config maps named prefix-* with data until one
// is refused, and returns that refusal.
func refusedEventually(t *testing.T, e *env, ns, prefix string, data map[string]string) error {
	t.Helper()
	var last error
	eventually(t, 30*time.Second, "policy in force for "+prefix, func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}, Data: data}
		_, last = e.c.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		return last != nil, nil
	})
	return last
}

func TestValidatingAdmissionPolicy(t *testing.T) {
	e := start(t)
	paramsNS := e.namespace(t)
	ns := e.vapNamespace(t, "on")
	limits := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits", Labels: map[string]string{"limits": "yes"}}, Data: map[string]string{"max": "2"}}
	if _, err := e.c.CoreV1().ConfigMaps(paramsNS).Create(ctx(t), limits, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Params, variables and a message expression; Deny.
	keys := vapOf(unique("max-keys"), "on", "keys", arv1.Validation{
		Expression:        "variables.count <= int(params.data.max)",
		MessageExpression: `"too many keys: " + string(variables.count)`})
	keys.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	keys.Spec.Variables = []arv1.Variable{{Name: "count", Expression: "has(object.data) ? size(object.data) : 0"}}
	e.bind(t, keys, &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{
		ValidationActions: []arv1.ValidationAction{arv1.Deny},
		ParamRef:          &arv1.ParamRef{Name: "limits", Namespace: paramsNS, ParameterNotFoundAction: ptr.To(arv1.DenyAction)}}})
	three := map[string]string{"a": "1", "b": "2", "c": "3"}
	err := refusedEventually(t, e, ns, "keys", three)
	s := wantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	want := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: too many keys: 3", keys.Name, keys.Name)
	if !strings.HasPrefix(s.Message, `configmaps "keys-`) || !strings.HasSuffix(s.Message, `" is forbidden: `+want) {
		t.Errorf("message %q", s.Message)
	}
	big := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keys-big"}, Data: three}
	if _, err := e.c.CoreV1().ConfigMaps(ns).Create(ctx(t), big, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("refused create: %v", err)
	}
	if _, err := e.c.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keys-ok"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("allowed create: %v", err)
	}
	if _, err := e.c.CoreV1().ConfigMaps(ns).Get(ctx(t), "keys-ok", metav1.GetOptions{}); err != nil {
		t.Errorf("allowed object not stored: %v", err)
	}

	// Warn: the write goes through with a warning.
	warn := vapOf(unique("warn"), "on", "warn", arv1.Validation{
		// Fails only when the object says what it is, as kube's objects do.
		Expression: "object.kind != 'ConfigMap' || object.apiVersion != 'v1'", Message: "warned", Reason: ptr.To(metav1.StatusReasonForbidden)})
	e.bind(t, warn, &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{
		ValidationActions: []arv1.ValidationAction{arv1.Warn, arv1.Audit}}})
	var warns warnings
	wc := e.clientWith(t, func(cfg *rest.Config) { cfg.WarningHandler = &warns })
	wantWarning := fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': warned", warn.Name, warn.Name)
	eventually(t, 30*time.Second, "warning policy in force", func(ctx context.Context) (bool, error) {
		_, err := wc.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "warn-"}}, metav1.CreateOptions{})
		return err == nil && strings.Contains(warns.joined(), wantWarning), err
	})

	// A runtime error: refused with failurePolicy Fail, let through with Ignore.
	for _, policy := range []arv1.FailurePolicyType{arv1.Fail, arv1.Ignore} {
		prefix := "err-" + strings.ToLower(string(policy))
		p := vapOf(unique("errs"), "on", prefix, arv1.Validation{Expression: "object.data.missing == 'x'"})
		p.Spec.FailurePolicy = &policy
		e.bind(t, p, &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{
			ValidationActions: []arv1.ValidationAction{arv1.Deny}}})
		if policy == arv1.Fail {
			err := refusedEventually(t, e, ns, prefix, map[string]string{"a": "b"})
			s := wantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
			if !strings.Contains(s.Message, "denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing") {
				t.Errorf("message %q", s.Message)
			}
			continue
		}
		// The Fail policy is older, so in force once this one's twin is.
		if _, err := e.c.CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: prefix}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{}); err != nil {
			t.Errorf("failurePolicy Ignore: %v", err)
		}
	}

	// A binding whose param is missing refuses with Deny (params are
	// looked for before match conditions run, so it has a namespace of its
	// own).
	missNS := e.vapNamespace(t, "miss")
	missing := vapOf(unique("missing"), "miss", "missing", arv1.Validation{Expression: "false"})
	missing.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	e.bind(t, missing, &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{
		ValidationActions: []arv1.ValidationAction{arv1.Deny},
		ParamRef:          &arv1.ParamRef{Name: "nope", ParameterNotFoundAction: ptr.To(arv1.DenyAction)}}})
	err = refusedEventually(t, e, missNS, "missing", nil)
	s = wantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if !strings.Contains(s.Message, "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction") {
		t.Errorf("message %q", s.Message)
	}

	// Params by selector: every matching param is checked.
	sel := vapOf(unique("selector"), "on", "sel", arv1.Validation{Expression: "!has(object.data) || !(params.data.max in object.data)",
		MessageExpression: `"key " + params.data.max + " is reserved"`})
	sel.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	e.bind(t, sel, &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{
		ValidationActions: []arv1.ValidationAction{arv1.Deny},
		ParamRef: &arv1.ParamRef{Namespace: paramsNS, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"limits": "yes"}},
			ParameterNotFoundAction: ptr.To(arv1.AllowAction)}}})
	err = refusedEventually(t, e, ns, "sel", map[string]string{"2": "x"})
	s = wantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if !strings.HasSuffix(s.Message, "denied request: key 2 is reserved") {
		t.Errorf("message %q", s.Message)
	}

	// Nothing outside the selected namespaces.
	other := e.vapNamespace(t, "off")
	if _, err := e.c.CoreV1().ConfigMaps(other).Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keys-x"}, Data: three}, metav1.CreateOptions{}); err != nil {
		t.Errorf("unselected namespace: %v", err)
	}
	if _, err := e.c.CoreV1().ConfigMaps(ns).Get(ctx(t), "keys-big", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("refused object stored: %v", err)
	}
}
