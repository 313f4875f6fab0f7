package rbac

import (
	"context"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

type wantErr struct {
	typ   field.ErrorType
	field string
}

func checkErrs(t *testing.T, errs field.ErrorList, want []wantErr) {
	t.Helper()
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want %v", errs, want)
	}
	for i, w := range want {
		if errs[i].Type != w.typ || errs[i].Field != w.field {
			t.Errorf("error %d: %v, want %s %s", i, errs[i], w.typ, w.field)
		}
	}
}

func TestValidateRoles(t *testing.T) {
	pods := rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	url := rbacv1.PolicyRule{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}}
	tests := []struct {
		name     string
		strategy interface {
			Validate(context.Context, runtime.Object) field.ErrorList
		}
		obj  runtime.Object
		want []wantErr
	}{
		{"role", RoleStrategy{}, &rbacv1.Role{Rules: []rbacv1.PolicyRule{pods}}, nil},
		{"no verbs", RoleStrategy{}, &rbacv1.Role{Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}}}},
			[]wantErr{{field.ErrorTypeRequired, "rules[0].verbs"}}},
		{"no groups nor resources", RoleStrategy{}, &rbacv1.Role{Rules: []rbacv1.PolicyRule{pods, {Verbs: []string{"get"}}}},
			[]wantErr{{field.ErrorTypeRequired, "rules[1].apiGroups"}, {field.ErrorTypeRequired, "rules[1].resources"}}},
		{"urls in a role", RoleStrategy{}, &rbacv1.Role{Rules: []rbacv1.PolicyRule{url}},
			[]wantErr{{field.ErrorTypeInvalid, "rules[0].nonResourceURLs"}}},
		{"urls in a cluster role", ClusterRoleStrategy{}, &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{url}}, nil},
		{"urls and resources", ClusterRoleStrategy{}, &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"},
			NonResourceURLs: []string{"/x"}, Resources: []string{"pods"}}}},
			[]wantErr{{field.ErrorTypeInvalid, "rules[0].nonResourceURLs"}}},
		{"empty aggregation rule", ClusterRoleStrategy{}, &rbacv1.ClusterRole{AggregationRule: &rbacv1.AggregationRule{}},
			[]wantErr{{field.ErrorTypeRequired, "aggregationRule.clusterRoleSelectors"}}},
		{"bad selector", ClusterRoleStrategy{}, &rbacv1.ClusterRole{AggregationRule: &rbacv1.AggregationRule{
			ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"a": "-bad-"}}}}},
			[]wantErr{{field.ErrorTypeInvalid, "aggregationRule.clusterRoleSelectors[0].matchLabels"}, {field.ErrorTypeInvalid, "aggregationRule.clusterRoleSelectors[0]"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, tt.strategy.Validate(context.Background(), tt.obj), tt.want)
		})
	}
}

func TestValidateBindings(t *testing.T) {
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}
	user := rbacv1.Subject{Kind: "User", APIGroup: rbacv1.GroupName, Name: "alice"}
	tests := []struct {
		name string
		obj  runtime.Object
		want []wantErr
	}{
		{"role binding", &rbacv1.RoleBinding{RoleRef: ref, Subjects: []rbacv1.Subject{user}}, nil},
		{"role binding to a role", &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "x"}}, nil},
		{"cluster binding to a role", &rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "x"}},
			[]wantErr{{field.ErrorTypeNotSupported, "roleRef.kind"}}},
		{"bad roleRef", &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: "x", Kind: "Secret"}},
			[]wantErr{{field.ErrorTypeNotSupported, "roleRef.apiGroup"}, {field.ErrorTypeNotSupported, "roleRef.kind"}, {field.ErrorTypeRequired, "roleRef.name"}}},
		{"roleRef name with a slash", &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "a/b"}},
			[]wantErr{{field.ErrorTypeInvalid, "roleRef.name"}}},
		{"subjects", &rbacv1.RoleBinding{RoleRef: ref, Subjects: []rbacv1.Subject{
			{Kind: "User", Name: "u"}, {Kind: "Group", APIGroup: rbacv1.GroupName}, {Kind: "ServiceAccount", Name: "Bad_Name", APIGroup: "x"},
			{Kind: "Robot", Name: "r"}, {Kind: "ServiceAccount", Name: "sa"}}},
			[]wantErr{{field.ErrorTypeNotSupported, "subjects[0].apiGroup"}, {field.ErrorTypeRequired, "subjects[1].name"},
				{field.ErrorTypeInvalid, "subjects[2].name"}, {field.ErrorTypeNotSupported, "subjects[2].apiGroup"},
				{field.ErrorTypeNotSupported, "subjects[3].kind"}}},
		{"cluster binding service account needs a namespace", &rbacv1.ClusterRoleBinding{RoleRef: ref,
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "sa"}}},
			[]wantErr{{field.ErrorTypeRequired, "subjects[0].namespace"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errs field.ErrorList
			switch b := tt.obj.(type) {
			case *rbacv1.RoleBinding:
				errs = RoleBindingStrategy{}.Validate(context.Background(), b)
			case *rbacv1.ClusterRoleBinding:
				errs = ClusterRoleBindingStrategy{}.Validate(context.Background(), b)
			}
			checkErrs(t, errs, tt.want)
		})
	}
}

func TestRoleRefImmutable(t *testing.T) {
	old := &rbacv1.RoleBinding{RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}}
	changed := old.DeepCopy()
	changed.RoleRef.Name = "edit"
	checkErrs(t, RoleBindingStrategy{}.ValidateUpdate(context.Background(), changed, old),
		[]wantErr{{field.ErrorTypeInvalid, "roleRef"}})
	crb := &rbacv1.ClusterRoleBinding{RoleRef: old.RoleRef}
	crbChanged := crb.DeepCopy()
	crbChanged.RoleRef.Name = "edit"
	checkErrs(t, ClusterRoleBindingStrategy{}.ValidateUpdate(context.Background(), crbChanged, crb),
		[]wantErr{{field.ErrorTypeInvalid, "roleRef"}})
}

func TestDefaults(t *testing.T) {
	b := &rbacv1.ClusterRoleBinding{RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: []rbacv1.Subject{
		{Kind: "User", Name: "u"}, {Kind: "Group", Name: "g"}, {Kind: "ServiceAccount", Name: "sa", Namespace: "ns"}}}
	ClusterRoleBindingStrategy{}.Default(b)
	if b.RoleRef.APIGroup != rbacv1.GroupName || b.Subjects[0].APIGroup != rbacv1.GroupName ||
		b.Subjects[1].APIGroup != rbacv1.GroupName || b.Subjects[2].APIGroup != "" {
		t.Errorf("defaults: %+v", b)
	}
	if msgs := (RoleStrategy{}).ValidateName("system:basic-user", false); len(msgs) != 0 {
		t.Errorf("colons refused: %v", msgs)
	}
	if msgs := (RoleStrategy{}).ValidateName("..", false); len(msgs) == 0 {
		t.Error(".. accepted")
	}
}
