package validating

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	arv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/admission/policy/generic"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
)

func benchPolicy(i int) *arv1.ValidatingAdmissionPolicy {
	fail := arv1.Fail
	return &arv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i)}, Spec: arv1.ValidatingAdmissionPolicySpec{
		FailurePolicy: &fail, ParamKind: &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"},
		MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
			Operations: []arv1.OperationType{arv1.Create}, Rule: arv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}}}}}},
		Variables: []arv1.Variable{{Name: "replicas", Expression: "object.spec.replicas"}},
		Validations: []arv1.Validation{
			{Expression: "variables.replicas <= int(params.data.max)", MessageExpression: `"too many: " + string(variables.replicas)`},
			{Expression: "object.metadata.name.startsWith('app-')"},
		}}}
}

// BenchmarkPolicyMemory reports the live heap one compiled policy holds
// (live-B/policy): one with a variable, two validations and a message
// expression, and one of the load tool's (a validation, no variable).
func BenchmarkPolicyMemory(b *testing.B) {
	b.Run("variables", func(b *testing.B) { policyMemory(b, benchPolicy) })
	b.Run("load", func(b *testing.B) {
		policyMemory(b, func(i int) *arv1.ValidatingAdmissionPolicy { p, _ := loadPolicy(i); return p })
	})
}

func policyMemory(b *testing.B, policyOf func(int) *arv1.ValidatingAdmissionPolicy) {
	const n = 200
	compilePolicy(policyOf(-1)) // the shared environments, built once
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		kept := make([]*policy, n)
		for i := range kept {
			kept[i] = compilePolicy(policyOf(i))
			if kept[i].err != nil {
				b.Fatal(kept[i].err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "live-B/policy")
		runtime.KeepAlive(kept)
	}
}

// loadPolicy is the load tool's policy k (loadtest/admission.go): config
// map creates, refused by name prefix and data size.
func loadPolicy(k int) (*arv1.ValidatingAdmissionPolicy, *arv1.ValidatingAdmissionPolicyBinding) {
	name := fmt.Sprintf("bench-%d", k)
	fail := arv1.Fail
	p := &arv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), ResourceVersion: "1"},
		Spec: arv1.ValidatingAdmissionPolicySpec{FailurePolicy: &fail,
			MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
				Operations: []arv1.OperationType{arv1.Create}, Rule: arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}}}},
			Validations: []arv1.Validation{{
				Expression: fmt.Sprintf("!object.metadata.name.startsWith('deny-%d-') && size(object.data) < 100", k),
				Message:    "refused by the load tool's policy",
			}}}}
	b := &arv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name), ResourceVersion: "1"},
		Spec: arv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name, ValidationActions: []arv1.ValidationAction{arv1.Deny},
			MatchResources: &arv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"bench": "yes"}}}}}
	return p, b
}

// createAttributes are a config map's create as validating admission sees
// it: server-owned metadata and managed fields filled in.
func createAttributes() *admission.Attributes {
	now := metav1.Now()
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "adm-1", Namespace: "bench", UID: "0b4d2a0c-5bb8-4e22-9d6a-0a8a3e0c1d11",
			CreationTimestamp: now, Labels: map[string]string{"capstan-load": "true"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "capstan-load", Operation: metav1.ManagedFieldsOperationUpdate,
				APIVersion: "v1", Time: &now, FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:data":{".":{},"f:payload":{}},"f:metadata":{"f:labels":{".":{},"f:capstan-load":{}}}}`)}}}},
		Data: map[string]string{"payload": strings.Repeat("x", 256)},
	}
	return &admission.Attributes{Operation: admission.Create, Kind: corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		Resource: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespace: "bench", Name: "adm-1",
		Object: cm, Options: &metav1.CreateOptions{}}
}

// BenchmarkValidatingPolicies10 admits one config map create through the
// load tool's ten policies and bindings: matching, the namespace read
// (a copy per read, as the watch cache gives), the activation, and the
// CEL evaluations.
func BenchmarkValidatingPolicies10(b *testing.B) {
	source := NewSource()
	var ps []*arv1.ValidatingAdmissionPolicy
	var bs []*arv1.ValidatingAdmissionPolicyBinding
	for k := range 10 {
		p, bd := loadPolicy(k)
		ps, bs = append(ps, p), append(bs, bd)
	}
	source.Set(ps, bs)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench", Labels: map[string]string{"bench": "yes"}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	namespaces := func(context.Context, string) (*corev1.Namespace, error) { return ns.DeepCopy(), nil }
	plugin := New(source, generic.Deps{Namespaces: namespaces, Authz: authz.AlwaysAllow})
	ctx := authn.WithUser(context.Background(), &authn.User{Name: "admin", Groups: []string{"system:masters", "system:authenticated"}})
	a := createAttributes()
	if err := plugin.Validate(ctx, a); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu := startCPU(b)
	for b.Loop() {
		if err := plugin.Validate(ctx, a); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report()
}

// cpuClock reports the process's CPU time per op (user and system, GC
// included) as cpu-ns/op: on a machine shared with other work, wall time
// per op measures the sharing, CPU time the code.
type cpuClock struct {
	b     *testing.B
	start time.Duration
}

func startCPU(b *testing.B) cpuClock { return cpuClock{b, processCPU()} }

func (c cpuClock) report() {
	c.b.ReportMetric(float64(processCPU()-c.start)/float64(c.b.N), "cpu-ns/op")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
