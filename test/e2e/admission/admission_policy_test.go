package admission

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

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

// refusedEventually creates config maps named prefix-* with data until one
// is refused, and returns that refusal.
func refusedEventually(t *testing.T, e *e2eutil.Env, ns, prefix string, data map[string]string) error {
	t.Helper()
	var last error
	e2eutil.Eventually(t, 30*time.Second, "policy in force for "+prefix, func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}, Data: data}
		_, last = e.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
		return last != nil, nil
	})
	return last
}

func TestValidatingAdmissionPolicy(t *testing.T) {
	e := e2eutil.Start(t)
	paramsNS := e.Namespace(t)
	ns := e.VapNamespace(t, "on")
	limits := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "limits", Labels: map[string]string{"limits": "yes"}}, Data: map[string]string{"max": "2"}}
	if _, err := e.Clientset.CoreV1().ConfigMaps(paramsNS).Create(e2eutil.Ctx(t), limits, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Params, variables and a message expression; Deny.
	keys := e2eutil.VapOf(e2eutil.Unique("max-keys"), "on", "keys", arv1.Validation{
		Expression:        "variables.count <= int(params.data.max)",
		MessageExpression: `"too many keys: " + string(variables.count)`})
	keys.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	keys.Spec.Variables = []arv1.Variable{{Name: "count", Expression: "has(object.data) ? size(object.data) : 0"}}
	e.Bind(t, keys, &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{
		ValidationActions: []arv1.ValidationAction{arv1.Deny},
		ParamRef:          &arv1.ParamRef{Name: "limits", Namespace: paramsNS, ParameterNotFoundAction: ptr.To(arv1.DenyAction)}}})
	three := map[string]string{"a": "1", "b": "2", "c": "3"}
	err := refusedEventually(t, e, ns, "keys", three)
	s := e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	want := fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: too many keys: 3", keys.Name, keys.Name)
	if !strings.HasPrefix(s.Message, `configmaps "keys-`) || !strings.HasSuffix(s.Message, `" is forbidden: `+want) {
		t.Errorf("message %q", s.Message)
	}
	big := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keys-big"}, Data: three}
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), big, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("refused create: %v", err)
	}
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keys-ok"}, Data: map[string]string{"a": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("allowed create: %v", err)
	}
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(e2eutil.Ctx(t), "keys-ok", metav1.GetOptions{}); err != nil {
		t.Errorf("allowed object not stored: %v", err)
	}

	// Warn: the write goes through with a warning.
	warn := e2eutil.VapOf(e2eutil.Unique("warn"), "on", "warn", arv1.Validation{
		// Fails only when the object says what it is, as kube's objects do.
		Expression: "object.kind != 'ConfigMap' || object.apiVersion != 'v1'", Message: "warned", Reason: ptr.To(metav1.StatusReasonForbidden)})
	e.Bind(t, warn, &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{
		ValidationActions: []arv1.ValidationAction{arv1.Warn, arv1.Audit}}})
	var warns e2eutil.Warnings
	wc := e.ClientWith(t, func(cfg *rest.Config) { cfg.WarningHandler = &warns })
	wantWarning := fmt.Sprintf("Validation failed for ValidatingAdmissionPolicy '%s' with binding '%s': warned", warn.Name, warn.Name)
	e2eutil.Eventually(t, 30*time.Second, "warning policy in force", func(ctx context.Context) (bool, error) {
		_, err := wc.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "warn-"}}, metav1.CreateOptions{})
		return err == nil && strings.Contains(warns.Joined(), wantWarning), err
	})

	// A runtime error: refused with failurePolicy Fail, let through with Ignore.
	for _, policy := range []arv1.FailurePolicyType{arv1.Fail, arv1.Ignore} {
		prefix := "err-" + strings.ToLower(string(policy))
		p := e2eutil.VapOf(e2eutil.Unique("errs"), "on", prefix, arv1.Validation{Expression: "object.data.missing == 'x'"})
		p.Spec.FailurePolicy = &policy
		e.Bind(t, p, &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{
			ValidationActions: []arv1.ValidationAction{arv1.Deny}}})
		if policy == arv1.Fail {
			err := refusedEventually(t, e, ns, prefix, map[string]string{"a": "b"})
			s := e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
			if !strings.Contains(s.Message, "denied request: expression 'object.data.missing == 'x'' resulted in error: no such key: missing") {
				t.Errorf("message %q", s.Message)
			}
			continue
		}
		// The Fail policy is older, so in force once this one's twin is.
		if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: prefix}, Data: map[string]string{"a": "b"}}, metav1.CreateOptions{}); err != nil {
			t.Errorf("failurePolicy Ignore: %v", err)
		}
	}

	// A binding whose param is missing refuses with Deny (params are
	// looked for before match conditions run, so it has a namespace of its
	// own).
	missNS := e.VapNamespace(t, "miss")
	missing := e2eutil.VapOf(e2eutil.Unique("missing"), "miss", "missing", arv1.Validation{Expression: "false"})
	missing.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	e.Bind(t, missing, &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{
		ValidationActions: []arv1.ValidationAction{arv1.Deny},
		ParamRef:          &arv1.ParamRef{Name: "nope", ParameterNotFoundAction: ptr.To(arv1.DenyAction)}}})
	err = refusedEventually(t, e, missNS, "missing", nil)
	s = e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if !strings.Contains(s.Message, "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction") {
		t.Errorf("message %q", s.Message)
	}

	// Params by selector: every matching param is checked.
	sel := e2eutil.VapOf(e2eutil.Unique("selector"), "on", "sel", arv1.Validation{Expression: "!has(object.data) || !(params.data.max in object.data)",
		MessageExpression: `"key " + params.data.max + " is reserved"`})
	sel.Spec.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
	e.Bind(t, sel, &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{
		ValidationActions: []arv1.ValidationAction{arv1.Deny},
		ParamRef: &arv1.ParamRef{Namespace: paramsNS, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"limits": "yes"}},
			ParameterNotFoundAction: ptr.To(arv1.AllowAction)}}})
	err = refusedEventually(t, e, ns, "sel", map[string]string{"2": "x"})
	s = e2eutil.WantStatus(t, err, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "")
	if !strings.HasSuffix(s.Message, "denied request: key 2 is reserved") {
		t.Errorf("message %q", s.Message)
	}

	// Nothing outside the selected namespaces.
	other := e.VapNamespace(t, "off")
	if _, err := e.Clientset.CoreV1().ConfigMaps(other).Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keys-x"}, Data: three}, metav1.CreateOptions{}); err != nil {
		t.Errorf("unselected namespace: %v", err)
	}
	if _, err := e.Clientset.CoreV1().ConfigMaps(ns).Get(e2eutil.Ctx(t), "keys-big", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("refused object stored: %v", err)
	}
}
