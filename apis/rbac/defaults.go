package rbac

import rbacv1 "k8s.io/api/rbac/v1"

// defaultRoleRef sets a roleRef's apiGroup to RBAC's when it is missing.
func defaultRoleRef(ref *rbacv1.RoleRef) {
	if ref.APIGroup == "" {
		ref.APIGroup = rbacv1.GroupName
	}
}

// defaultSubjects sets the apiGroup of User and Group subjects to RBAC's
// when it is missing (a ServiceAccount's stays the core group, "").
func defaultSubjects(subjects []rbacv1.Subject) {
	for i := range subjects {
		s := &subjects[i]
		if s.APIGroup == "" && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			s.APIGroup = rbacv1.GroupName
		}
	}
}
