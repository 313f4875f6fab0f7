package admissionregistration

import (
	"context"
	"testing"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/fieldtest"
)

func TestValidateResources(t *testing.T) {
	p := field.NewPath("r")
	tests := []struct {
		resources []string
		want      []fieldtest.Want
	}{
		{[]string{"pods"}, nil},
		{[]string{"*"}, nil},
		{[]string{"*", "pods/status"}, nil},
		{[]string{"*/*"}, nil},
		{nil, []fieldtest.Want{fieldtest.Required("r")}},
		{[]string{""}, []fieldtest.Want{fieldtest.Required("r[0]")}},
		{[]string{"*/*", "pods"}, []fieldtest.Want{fieldtest.Invalid("r")}},
		{[]string{"*", "pods"}, []fieldtest.Want{fieldtest.Invalid("r")}},
		{[]string{"pods/*", "pods/status"}, []fieldtest.Want{fieldtest.Invalid("r[1]")}},
		{[]string{"*/status", "pods/status"}, []fieldtest.Want{fieldtest.Invalid("r[1]")}},
	}
	for _, tc := range tests {
		fieldtest.Check(t, validateResources(tc.resources, p), tc.want...)
	}
}

func validWebhook() arv1.ValidatingWebhook {
	url := "https://example.com/hook"
	return arv1.ValidatingWebhook{Name: "a.example.com", SideEffects: ptr.To(arv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"}, ClientConfig: arv1.WebhookClientConfig{URL: &url},
		Rules: []arv1.RuleWithOperations{{Operations: []arv1.OperationType{arv1.OperationAll},
			Rule: arv1.Rule{APIGroups: []string{"*"}, APIVersions: []string{"*"}, Resources: []string{"*"}}}}}
}

func TestValidateValidatingWebhookConfiguration(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(h *arv1.ValidatingWebhook)
		want   []fieldtest.Want
	}{
		{"valid", func(*arv1.ValidatingWebhook) {}, nil},
		{"name not qualified", func(h *arv1.ValidatingWebhook) { h.Name = "hook" }, []fieldtest.Want{fieldtest.Invalid("webhooks[0].name")}},
		{"side effects", func(h *arv1.ValidatingWebhook) { h.SideEffects = ptr.To(arv1.SideEffectClassSome) },
			[]fieldtest.Want{fieldtest.NotSupported("webhooks[0].sideEffects")}},
		{"no side effects", func(h *arv1.ValidatingWebhook) { h.SideEffects = nil }, []fieldtest.Want{fieldtest.Required("webhooks[0].sideEffects")}},
		{"review versions", func(h *arv1.ValidatingWebhook) { h.AdmissionReviewVersions = []string{"v2"} },
			[]fieldtest.Want{fieldtest.Invalid("webhooks[0].admissionReviewVersions")}},
		{"url and service", func(h *arv1.ValidatingWebhook) {
			h.ClientConfig.Service = &arv1.ServiceReference{Namespace: "ns", Name: "svc"}
		}, []fieldtest.Want{fieldtest.Required("webhooks[0].clientConfig")}},
		{"http url", func(h *arv1.ValidatingWebhook) { h.ClientConfig.URL = ptr.To("http://example.com") },
			[]fieldtest.Want{fieldtest.Invalid("webhooks[0].clientConfig.url")}},
		{"operation", func(h *arv1.ValidatingWebhook) { h.Rules[0].Operations = []arv1.OperationType{"PATCH"} },
			[]fieldtest.Want{fieldtest.NotSupported("webhooks[0].rules[0].operations[0]")}},
		{"match condition", func(h *arv1.ValidatingWebhook) {
			h.MatchConditions = []arv1.MatchCondition{{Name: "a", Expression: "object"}, {Name: "a", Expression: "true"}}
		}, []fieldtest.Want{fieldtest.Invalid("webhooks[0].matchConditions[0].expression"), fieldtest.Duplicate("webhooks[0].matchConditions[1].name")}},
		{"params in match condition", func(h *arv1.ValidatingWebhook) {
			h.MatchConditions = []arv1.MatchCondition{{Name: "a", Expression: "params != null"}}
		}, []fieldtest.Want{fieldtest.Invalid("webhooks[0].matchConditions[0].expression")}},
		{"authorizer in match condition", func(h *arv1.ValidatingWebhook) {
			h.MatchConditions = []arv1.MatchCondition{{Name: "a", Expression: `authorizer.group("").resource("pods").check("get").allowed()`}}
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := validWebhook()
			tc.mutate(&h)
			c := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Webhooks: []arv1.ValidatingWebhook{h}}
			DefaultValidatingWebhookConfiguration(c)
			fieldtest.Check(t, ValidateValidatingWebhookConfiguration(c, nil), tc.want...)
		})
	}
}

// TestWebhookUpdateKeepsWhatWasStored: an update may keep what newer
// rules refuse, when the old object had it already.
func TestWebhookUpdateKeepsWhatWasStored(t *testing.T) {
	h := validWebhook()
	h.SideEffects = ptr.To(arv1.SideEffectClassUnknown)
	old := &arv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Webhooks: []arv1.ValidatingWebhook{h, h}}
	updated := old.DeepCopy()
	updated.Labels = map[string]string{"a": "b"}
	fieldtest.Check(t, ValidateValidatingWebhookConfiguration(updated, old))
	fieldtest.Check(t, ValidateValidatingWebhookConfiguration(updated, nil),
		fieldtest.NotSupported("webhooks[0].sideEffects"), fieldtest.NotSupported("webhooks[1].sideEffects"), fieldtest.Duplicate("webhooks[1].name"))
}

func validPolicy() *arv1.ValidatingAdmissionPolicy {
	p := &arv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: arv1.ValidatingAdmissionPolicySpec{
		MatchConstraints: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
			Operations: []arv1.OperationType{arv1.Create}, Rule: arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}}},
		Validations: []arv1.Validation{{Expression: "true"}}}}
	DefaultValidatingAdmissionPolicy(p)
	return p
}

func TestValidateValidatingAdmissionPolicy(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(p *arv1.ValidatingAdmissionPolicySpec)
		want   []fieldtest.Want
	}{
		{"valid", func(*arv1.ValidatingAdmissionPolicySpec) {}, nil},
		{"nothing to do", func(s *arv1.ValidatingAdmissionPolicySpec) { s.Validations = nil },
			[]fieldtest.Want{fieldtest.Required("spec.validations"), fieldtest.Required("spec.auditAnnotations")}},
		{"no rules", func(s *arv1.ValidatingAdmissionPolicySpec) { s.MatchConstraints.ResourceRules = nil },
			[]fieldtest.Want{fieldtest.Required("spec.matchConstraints.resourceRules")}},
		{"params without paramKind", func(s *arv1.ValidatingAdmissionPolicySpec) { s.Validations[0].Expression = "params.x" },
			[]fieldtest.Want{fieldtest.Invalid("spec.validations[0].expression")}},
		{"params", func(s *arv1.ValidatingAdmissionPolicySpec) {
			s.ParamKind = &arv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}
			s.Validations[0].Expression = "params.data.x == 'y'"
		}, nil},
		{"variables in order", func(s *arv1.ValidatingAdmissionPolicySpec) {
			s.Variables = []arv1.Variable{{Name: "a", Expression: "1"}, {Name: "b", Expression: "variables.a + 1"}}
			s.Validations[0].Expression = "variables.b == 2"
		}, nil},
		{"variable of the wrong type", func(s *arv1.ValidatingAdmissionPolicySpec) {
			s.Variables = []arv1.Variable{{Name: "a", Expression: "'x'"}}
			s.Validations[0].Expression = "variables.a == 2"
		}, []fieldtest.Want{fieldtest.Invalid("spec.validations[0].expression")}},
		{"undeclared variable", func(s *arv1.ValidatingAdmissionPolicySpec) {
			s.Variables = []arv1.Variable{{Name: "a", Expression: "1"}}
			s.Validations[0].Expression = "variables.c == 2"
		}, []fieldtest.Want{fieldtest.Invalid("spec.validations[0].expression")}},
		{"variable name", func(s *arv1.ValidatingAdmissionPolicySpec) {
			s.Variables = []arv1.Variable{{Name: "if", Expression: "1"}}
		},
			[]fieldtest.Want{fieldtest.Invalid("spec.variables[0].name")}},
		{"message expression", func(s *arv1.ValidatingAdmissionPolicySpec) { s.Validations[0].MessageExpression = "1" },
			[]fieldtest.Want{fieldtest.Invalid("spec.validations[0].messageExpression")}},
		{"reason", func(s *arv1.ValidatingAdmissionPolicySpec) {
			s.Validations[0].Reason = ptr.To(metav1.StatusReasonConflict)
		},
			[]fieldtest.Want{fieldtest.NotSupported("spec.validations[0].reason")}},
		{"audit annotation", func(s *arv1.ValidatingAdmissionPolicySpec) {
			s.AuditAnnotations = []arv1.AuditAnnotation{{Key: "k", ValueExpression: "'v'"}, {Key: "k", ValueExpression: "1"}}
		}, []fieldtest.Want{fieldtest.Duplicate("spec.auditAnnotations[1].key"), fieldtest.Invalid("spec.auditAnnotations[1].valueExpression")}},
		{"paramKind", func(s *arv1.ValidatingAdmissionPolicySpec) { s.ParamKind = &arv1.ParamKind{APIVersion: "a/b/c"} },
			[]fieldtest.Want{fieldtest.Invalid("spec.paramKind.apiVersion"), fieldtest.Required("spec.paramKind.kind")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := validPolicy()
			tc.mutate(&p.Spec)
			fieldtest.Check(t, ValidateValidatingAdmissionPolicy(p, nil), tc.want...)
		})
	}
}

func TestValidateBindings(t *testing.T) {
	deny := arv1.DenyAction
	b := &arv1.ValidatingAdmissionPolicyBinding{Spec: arv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p",
		ValidationActions: []arv1.ValidationAction{arv1.Deny}, ParamRef: &arv1.ParamRef{Name: "n", ParameterNotFoundAction: &deny}}}
	fieldtest.Check(t, ValidateValidatingAdmissionPolicyBinding(b))
	b.Spec.ParamRef.Selector = &metav1.LabelSelector{}
	b.Spec.ValidationActions = nil
	fieldtest.Check(t, ValidateValidatingAdmissionPolicyBinding(b), fieldtest.Forbidden("spec.paramRef.name"),
		fieldtest.Forbidden("spec.paramRef.selector"), fieldtest.Required("spec.validationActions"))

	mb := &arv1.MutatingAdmissionPolicyBinding{Spec: arv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "p",
		MatchResources: &arv1.MatchResources{ResourceRules: []arv1.NamedRuleWithOperations{{RuleWithOperations: arv1.RuleWithOperations{
			Operations: []arv1.OperationType{arv1.Delete}, Rule: arv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}}}}}
	defaultMatchResources(mb.Spec.MatchResources)
	fieldtest.Check(t, ValidateMutatingAdmissionPolicyBinding(mb), fieldtest.NotSupported("spec.matchResources.resourceRules.operations"))
}

func TestStrategyGenerationAndStatus(t *testing.T) {
	ctx := context.Background()
	s := ValidatingAdmissionPolicyStrategy
	p := validPolicy()
	p.Status.ObservedGeneration = 3
	s.PrepareForCreate(ctx, p)
	if p.Generation != 1 || p.Status.ObservedGeneration != 0 {
		t.Fatalf("create: generation %d, status %+v", p.Generation, p.Status)
	}
	p.Status.ObservedGeneration = 1
	updated := p.DeepCopy()
	updated.Status.ObservedGeneration = 9
	updated.Spec.Validations[0].Expression = "false"
	s.PrepareForUpdate(ctx, updated, p)
	if updated.Generation != 2 || updated.Status.ObservedGeneration != 1 {
		t.Errorf("update: generation %d, status %+v", updated.Generation, updated.Status)
	}
	static := validPolicy()
	static.Name = "p.static.k8s.io"
	fieldtest.Check(t, s.Validate(ctx, static), fieldtest.Invalid("metadata.name"))
	if w := s.WarningsOnUpdate(ctx, static, static); len(w) != 1 {
		t.Errorf("warnings = %v", w)
	}
}

func TestExcludedRuleWarnings(t *testing.T) {
	h := validWebhook()
	h.Rules[0].APIGroups = []string{"authentication.k8s.io"}
	h.Rules[0].Resources = []string{"tokenreviews", "tokenreviews"}
	c := &arv1.ValidatingWebhookConfiguration{Webhooks: []arv1.ValidatingWebhook{h}}
	got := ValidatingWebhookConfigurationStrategy.WarningsOnCreate(context.Background(), c)
	want := "webhooks[0].rules[0]: tokenreviews.authentication.k8s.io is excluded from admission webhooks; this rule will have no effect"
	if len(got) != 1 || got[0] != want {
		t.Errorf("warnings = %q", got)
	}
}
