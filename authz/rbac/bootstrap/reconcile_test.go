package bootstrap

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	getPods   = rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	listPods  = rbacv1.PolicyRule{Verbs: []string{"list"}, APIGroups: []string{""}, Resources: []string{"pods"}}
	getSecret = rbacv1.PolicyRule{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"secrets"}}
	selectorA = metav1.LabelSelector{MatchLabels: map[string]string{"a": "true"}}
	selectorB = metav1.LabelSelector{MatchLabels: map[string]string{"b": "true"}}
)

func role(annotations map[string]string, agg []metav1.LabelSelector, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
	r := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "r", Annotations: annotations}, Rules: rules}
	if agg != nil {
		r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: agg}
	}
	return r
}

func TestReconcileClusterRole(t *testing.T) {
	auto := map[string]string{rbacv1.AutoUpdateAnnotationKey: "true"}
	frozen := map[string]string{rbacv1.AutoUpdateAnnotationKey: "false"}
	tests := []struct {
		name          string
		existing      *rbacv1.ClusterRole
		expected      *rbacv1.ClusterRole
		wantOp        Operation
		wantProtected bool
		wantRules     []rbacv1.PolicyRule
		wantSelectors []metav1.LabelSelector
	}{
		{"missing role is created", nil, role(auto, nil, getPods), OpCreate, false, []rbacv1.PolicyRule{getPods}, nil},
		{"up to date", role(auto, nil, getPods), role(auto, nil, getPods), OpNone, false, []rbacv1.PolicyRule{getPods}, nil},
		{"user additions are kept", role(auto, nil, getPods, getSecret), role(auto, nil, getPods), OpNone, false,
			[]rbacv1.PolicyRule{getPods, getSecret}, nil},
		{"missing rules are appended", role(auto, nil, getSecret), role(auto, nil, getPods, listPods), OpUpdate, false,
			[]rbacv1.PolicyRule{getSecret, getPods, listPods}, nil},
		{"a covering rule counts", role(auto, nil, rbacv1.PolicyRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}),
			role(auto, nil, getPods), OpNone, false, []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}, nil},
		{"missing annotation is added", role(nil, nil, getPods), role(auto, nil, getPods), OpUpdate, false, []rbacv1.PolicyRule{getPods}, nil},
		{"autoupdate false protects", role(frozen, nil), role(auto, nil, getPods), OpUpdate, true, []rbacv1.PolicyRule{getPods}, nil},
		{"missing selectors are appended, rules of aggregated roles kept", role(auto, []metav1.LabelSelector{selectorB}, getSecret),
			role(auto, []metav1.LabelSelector{selectorA}), OpUpdate, false, []rbacv1.PolicyRule{getSecret},
			[]metav1.LabelSelector{selectorB, selectorA}},
		{"unexpected aggregation is removed", role(auto, []metav1.LabelSelector{selectorA}), role(auto, nil), OpUpdate, false, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ReconcileClusterRole(tt.existing, tt.expected)
			if res.Op != tt.wantOp || res.Protected != tt.wantProtected {
				t.Errorf("op %v protected %v, want %v %v", res.Op, res.Protected, tt.wantOp, tt.wantProtected)
			}
			if res.Protected {
				return
			}
			if !reflect.DeepEqual(res.Role.Rules, tt.wantRules) {
				t.Errorf("rules %v, want %v", res.Role.Rules, tt.wantRules)
			}
			var selectors []metav1.LabelSelector
			if res.Role.AggregationRule != nil {
				selectors = res.Role.AggregationRule.ClusterRoleSelectors
			}
			if !reflect.DeepEqual(selectors, tt.wantSelectors) {
				t.Errorf("selectors %v, want %v", selectors, tt.wantSelectors)
			}
			if res.Role.Annotations[rbacv1.AutoUpdateAnnotationKey] != "true" {
				t.Errorf("annotations %v", res.Role.Annotations)
			}
		})
	}
}

func TestReconcileKeepsStoredLabelValues(t *testing.T) {
	existing := role(nil, nil, getPods)
	existing.Labels = map[string]string{BootstrappingLabel: "mine", "extra": "x"}
	expected := ClusterRoles()[0]
	res := ReconcileClusterRole(existing, &expected)
	want := map[string]string{BootstrappingLabel: "mine", "extra": "x"}
	if !reflect.DeepEqual(res.Role.Labels, want) {
		t.Errorf("labels %v, want %v", res.Role.Labels, want)
	}
}

func binding(ref string, annotations map[string]string, subjects ...rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "b", Annotations: annotations},
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ref}, Subjects: subjects}
}

func TestReconcileClusterRoleBinding(t *testing.T) {
	auto := map[string]string{rbacv1.AutoUpdateAnnotationKey: "true"}
	frozen := map[string]string{rbacv1.AutoUpdateAnnotationKey: "false"}
	masters, devs := group("system:masters"), group("devs")
	tests := []struct {
		name          string
		existing      *rbacv1.ClusterRoleBinding
		expected      *rbacv1.ClusterRoleBinding
		wantOp        Operation
		wantProtected bool
		wantSubjects  []rbacv1.Subject
	}{
		{"created", nil, binding("r", auto, masters), OpCreate, false, []rbacv1.Subject{masters}},
		{"up to date", binding("r", auto, masters), binding("r", auto, masters), OpNone, false, []rbacv1.Subject{masters}},
		{"user subjects kept", binding("r", auto, devs, masters), binding("r", auto, masters), OpNone, false, []rbacv1.Subject{devs, masters}},
		{"missing subjects appended", binding("r", auto, devs), binding("r", auto, masters), OpUpdate, false, []rbacv1.Subject{devs, masters}},
		{"changed roleRef recreates", binding("other", auto, devs), binding("r", auto, masters), OpRecreate, false, []rbacv1.Subject{masters}},
		{"protected", binding("r", frozen), binding("r", auto, masters), OpUpdate, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ReconcileClusterRoleBinding(tt.existing, tt.expected)
			if res.Op != tt.wantOp || res.Protected != tt.wantProtected {
				t.Errorf("op %v protected %v, want %v %v", res.Op, res.Protected, tt.wantOp, tt.wantProtected)
			}
			if !tt.wantProtected && !reflect.DeepEqual(res.Binding.Subjects, tt.wantSubjects) {
				t.Errorf("subjects %v, want %v", res.Binding.Subjects, tt.wantSubjects)
			}
		})
	}
}

// TestPolicy checks what users rely on: cluster-admin is system:masters',
// everybody may discover and ask what they may do, anonymous users may read
// the health and version paths, and admin, edit and view aggregate.
func TestPolicy(t *testing.T) {
	roles := map[string]rbacv1.ClusterRole{}
	for _, r := range ClusterRoles() {
		if r.Annotations[rbacv1.AutoUpdateAnnotationKey] != "true" || r.Labels[BootstrappingLabel] != "rbac-defaults" {
			t.Errorf("%s lacks the bootstrap metadata", r.Name)
		}
		roles[r.Name] = r
	}
	bindings := map[string][]rbacv1.Subject{}
	for _, b := range ClusterRoleBindings() {
		if _, ok := roles[b.RoleRef.Name]; !ok {
			t.Errorf("binding %s refers to a role the policy lacks", b.Name)
		}
		bindings[b.Name] = b.Subjects
	}
	for name, want := range map[string][]rbacv1.Subject{
		"cluster-admin":             {group("system:masters")},
		"system:basic-user":         {group("system:authenticated")},
		"system:discovery":          {group("system:authenticated")},
		"system:public-info-viewer": {group("system:authenticated"), group("system:unauthenticated")},
	} {
		if !reflect.DeepEqual(bindings[name], want) {
			t.Errorf("%s binds %v, want %v", name, bindings[name], want)
		}
	}
	for name, label := range map[string]string{"admin": "admin", "edit": "edit", "view": "view"} {
		agg := roles[name].AggregationRule
		if agg == nil || agg.ClusterRoleSelectors[0].MatchLabels[aggregateLabelPrefix+label] != "true" {
			t.Errorf("%s does not aggregate %s", name, label)
		}
	}
	if roles["edit"].Labels[aggregateLabelPrefix+"admin"] != "true" || roles["view"].Labels[aggregateLabelPrefix+"edit"] != "true" {
		t.Error("view is not in edit, or edit not in admin")
	}
}
