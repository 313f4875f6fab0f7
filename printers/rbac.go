package printers

import (
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

// rbacConvertors print the bindings. Roles and ClusterRoles have none: kube
// prints them with the default table.
var rbacConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	rbacv1.SchemeGroupVersion.WithKind("RoleBinding"): New(bindingColumns("roleBinding", rbacv1beta1.RoleBinding{}.SwaggerDoc()),
		func(b *rbacv1.RoleBinding, now time.Time) (metav1.TableRow, error) {
			return bindingRow(b.ObjectMeta, b.RoleRef, b.Subjects, now)
		}),
	rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"): New(bindingColumns("clusterRoleBinding", rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()),
		func(b *rbacv1.ClusterRoleBinding, now time.Time) (metav1.TableRow, error) {
			return bindingRow(b.ObjectMeta, b.RoleRef, b.Subjects, now)
		}),
}

// bindingColumns are the columns of a kind of binding, described by the
// fields of v1beta1, as kube's are.
func bindingColumns(kind string, doc map[string]string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn(),
		column("Role", "string", doc["roleRef"]),
		ageColumn(),
		wideColumn("Users", "string", "Users in the "+kind),
		wideColumn("Groups", "string", "Groups in the "+kind),
		wideColumn("ServiceAccounts", "string", "ServiceAccounts in the "+kind),
	}
}

func bindingRow(m metav1.ObjectMeta, ref rbacv1.RoleRef, subjects []rbacv1.Subject, now time.Time) (metav1.TableRow, error) {
	users, groups, sas := []string{}, []string{}, []string{}
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	return rowOf(m.Name, ref.Kind+"/"+ref.Name, since(m.CreationTimestamp, now),
		strings.Join(users, ", "), strings.Join(groups, ", "), strings.Join(sas, ", "))
}
