package storagemigration

import (
	"context"
	"slices"
	"testing"
	"time"

	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func migration(group, resource string) *svmv1.StorageVersionMigration {
	return &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: "m"},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}}}
}

func cond(t svmv1.MigrationConditionType, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: s, Reason: "Test", LastTransitionTime: metav1.NewTime(time.Unix(100, 0))}
}

// errs renders errors as type and field, in order.
func errs(list field.ErrorList) []string {
	var out []string
	for _, e := range list {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name, group, resource string
		want                  []string
	}{
		{"core resource", "", "configmaps", nil},
		{"grouped resource", "apps", "deployments", nil},
		{"resource missing", "", "", []string{"FieldValueRequired spec.resource.resource"}},
		{"resource not a DNS-1035 label", "", "Config.Maps", []string{"FieldValueInvalid spec.resource.resource"}},
		{"resource starting with a digit", "", "1maps", []string{"FieldValueInvalid spec.resource.resource"}},
		{"group not a subdomain", "Bad_Group", "things", []string{"FieldValueInvalid spec.resource.group"}},
		{"both wrong", "Bad_Group", "", []string{"FieldValueRequired spec.resource.resource", "FieldValueInvalid spec.resource.group"}},
	} {
		got := errs(Strategy{}.Validate(context.Background(), migration(tc.group, tc.resource)))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestValidateUpdateKeepsSpec(t *testing.T) {
	old := migration("", "configmaps")
	for _, tc := range []struct {
		name string
		obj  *svmv1.StorageVersionMigration
		want []string
	}{
		{"same spec", migration("", "configmaps"), nil},
		{"resource changed", migration("", "secrets"), []string{"FieldValueInvalid spec"}},
		{"group changed to an invalid one", migration("Bad_Group", "configmaps"), []string{"FieldValueInvalid spec.resource.group", "FieldValueInvalid spec"}},
	} {
		if got := errs(Strategy{}.ValidateUpdate(context.Background(), tc.obj, old)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestPrepare(t *testing.T) {
	status := svmv1.StorageVersionMigrationStatus{ResourceVersion: "7", Conditions: []metav1.Condition{cond(svmv1.MigrationRunning, metav1.ConditionTrue)}}
	created := migration("", "configmaps")
	created.Status = status
	Strategy{}.PrepareForCreate(context.Background(), created)
	if created.Status.ResourceVersion != "" || created.Status.Conditions != nil {
		t.Errorf("create kept the status: %+v", created.Status)
	}

	old := migration("", "configmaps")
	old.Status = status
	updated := migration("", "configmaps")
	updated.Labels = map[string]string{"a": "b"}
	Strategy{}.PrepareForUpdate(context.Background(), updated, old)
	if updated.Status.ResourceVersion != "7" || len(updated.Status.Conditions) != 1 || updated.Labels["a"] != "b" {
		t.Errorf("update of the main resource: status %+v, labels %v; want the old status and the new labels", updated.Status, updated.Labels)
	}

	old = migration("", "configmaps")
	old.Labels = map[string]string{"a": "b"}
	viaStatus := migration("", "secrets")
	viaStatus.Labels = map[string]string{"a": "changed"}
	viaStatus.Status = status
	StatusStrategy{}.PrepareForUpdate(context.Background(), viaStatus, old)
	if viaStatus.Spec.Resource.Resource != "configmaps" || viaStatus.Labels["a"] != "b" || viaStatus.Status.ResourceVersion != "7" {
		t.Errorf("update of status: spec %+v, labels %v, status %+v; want the old spec and labels and the new status",
			viaStatus.Spec, viaStatus.Labels, viaStatus.Status)
	}
}

func TestValidateStatusUpdate(t *testing.T) {
	withStatus := func(rv string, conds ...metav1.Condition) *svmv1.StorageVersionMigration {
		m := migration("", "configmaps")
		m.Status = svmv1.StorageVersionMigrationStatus{ResourceVersion: rv, Conditions: conds}
		return m
	}
	succeeded, failed := cond(svmv1.MigrationSucceeded, metav1.ConditionTrue), cond(svmv1.MigrationFailed, metav1.ConditionTrue)
	for _, tc := range []struct {
		name     string
		old, obj *svmv1.StorageVersionMigration
		want     []string
	}{
		{"resource version set", withStatus(""), withStatus("42", cond(svmv1.MigrationRunning, metav1.ConditionTrue)), nil},
		{"resource version not a number", withStatus(""), withStatus("abc"), []string{"FieldValueInvalid status.resourceVersion"}},
		{"resource version changed", withStatus("42"), withStatus("43"), []string{"FieldValueInvalid status.resourceVersion"}},
		{"resource version cleared", withStatus("42"), withStatus(""), []string{"FieldValueInvalid status.resourceVersion"}},
		{"condition without a reason", withStatus(""), withStatus("", metav1.Condition{Type: "Running", Status: metav1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(time.Unix(100, 0))}), []string{"FieldValueRequired status.conditions[0].reason"}},
		{"succeeded and failed", withStatus("42"), withStatus("42", succeeded, failed), []string{"FieldValueInvalid status.conditions"}},
		{"succeeded stays", withStatus("42", succeeded), withStatus("42", succeeded), nil},
		{"succeeded set false", withStatus("42", succeeded), withStatus("42", cond(svmv1.MigrationSucceeded, metav1.ConditionFalse)),
			[]string{"FieldValueInvalid status.conditions"}},
		{"failed dropped", withStatus("42", failed), withStatus("42"), []string{"FieldValueInvalid status.conditions"}},
	} {
		got := StatusStrategy{}.ValidateUpdate(context.Background(), tc.obj, tc.old)
		if !slices.Equal(errs(got), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, got, tc.want)
		}
	}
	// kube's words for the final conditions.
	got := StatusStrategy{}.ValidateUpdate(context.Background(), withStatus("42", succeeded, failed), withStatus("42"))
	if len(got) != 1 || got[0].Detail != "Both success and failed conditions cannot be true at the same time" {
		t.Errorf("both final: %v", got)
	}
	got = StatusStrategy{}.ValidateUpdate(context.Background(), withStatus("42"), withStatus("42", failed))
	if len(got) != 1 || got[0].Detail != "Failed condition cannot be set to false once it is true" {
		t.Errorf("failed dropped: %v", got)
	}
}

func TestIsTrue(t *testing.T) {
	m := migration("", "configmaps")
	m.Status.Conditions = []metav1.Condition{cond(svmv1.MigrationRunning, metav1.ConditionFalse), cond(svmv1.MigrationSucceeded, metav1.ConditionTrue)}
	for typ, want := range map[svmv1.MigrationConditionType]bool{svmv1.MigrationRunning: false, svmv1.MigrationSucceeded: true, svmv1.MigrationFailed: false} {
		if got := IsTrue(m, typ); got != want {
			t.Errorf("IsTrue(%s) = %v, want %v", typ, got, want)
		}
	}
}
