// Package storagemigration holds the strategies of storagemigration.k8s.io
// StorageVersionMigrations: a request to rewrite every stored object of one
// resource at its current storage version, and the status the migrator
// reports.
package storagemigration

import (
	"context"
	"fmt"
	"strings"

	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// Strategy is the strategy of the cluster-scoped storageversionmigrations
// resource; the spec never changes after creation.
type Strategy struct{}

var (
	_ registry.Strategy             = Strategy{}
	_ registry.UnconditionalUpdater = Strategy{}
)

// NamespaceScoped is false.
func (Strategy) NamespaceScoped() bool { return false }

// AllowUnconditionalUpdate is false, as in kube.
func (Strategy) AllowUnconditionalUpdate() bool { return false }

// PrepareForCreate clears the status.
func (Strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*svmv1.StorageVersionMigration).Status = svmv1.StorageVersionMigrationStatus{}
}

// PrepareForUpdate keeps the status.
func (Strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*svmv1.StorageVersionMigration).Status = old.(*svmv1.StorageVersionMigration).Status
}

// Validate validates a new migration.
func (Strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateMigration(obj.(*svmv1.StorageVersionMigration))
}

// ValidateUpdate validates the migration and refuses a change of its spec.
func (Strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	svm, oldSVM := obj.(*svmv1.StorageVersionMigration), old.(*svmv1.StorageVersionMigration)
	errs := validateMigration(svm)
	return append(errs, apivalidation.ValidateImmutableField(svm.Spec, oldSVM.Spec, field.NewPath("spec"))...)
}

// validateMigration requires the resource, a DNS-1035 label, and a group
// that is empty or a DNS subdomain.
func validateMigration(svm *svmv1.StorageVersionMigration) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec", "resource")
	r := svm.Spec.Resource
	if r.Resource == "" {
		errs = append(errs, field.Required(path.Child("resource"), "resource is required to be set"))
	} else if msgs := validation.IsDNS1035Label(r.Resource); len(msgs) > 0 {
		errs = append(errs, field.Invalid(path.Child("resource"), r.Resource, strings.Join(msgs, ",")))
	}
	if r.Group != "" {
		if msgs := validation.IsDNS1123Subdomain(r.Group); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child("group"), r.Group, strings.Join(msgs, ",")))
		}
	}
	return errs
}

// StatusStrategy is the strategy of storageversionmigrations/status.
type StatusStrategy struct{ Strategy }

// PrepareForUpdate keeps the spec and the metadata of old.
func (StatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	svm, oldSVM := obj.(*svmv1.StorageVersionMigration), old.(*svmv1.StorageVersionMigration)
	svm.Spec = oldSVM.Spec
	metav1.ResetObjectMetaForStatus(&svm.ObjectMeta, &oldSVM.ObjectMeta)
}

// ValidateUpdate is kube's status rule: a resource version that parses and
// never changes once set, valid conditions, and Succeeded and Failed each
// final and never both.
func (StatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	svm, oldSVM := obj.(*svmv1.StorageVersionMigration), old.(*svmv1.StorageVersionMigration)
	var errs field.ErrorList
	path := field.NewPath("status")
	rv := svm.Status.ResourceVersion
	if rv != "" {
		if _, err := resourceversion.CompareResourceVersion(rv, rv); err != nil {
			errs = append(errs, field.Invalid(path.Child("resourceVersion"), rv, err.Error()))
		}
	}
	errs = append(errs, metavalidation.ValidateConditions(svm.Status.Conditions, path.Child("conditions"))...)
	if oldSVM.Status.ResourceVersion != "" && oldSVM.Status.ResourceVersion != rv {
		errs = append(errs, field.Invalid(path.Child("resourceVersion"), rv, "field is immutable"))
	}
	conditions := path.Child("conditions")
	succeeded, failed := IsTrue(svm, svmv1.MigrationSucceeded), IsTrue(svm, svmv1.MigrationFailed)
	if succeeded && failed {
		errs = append(errs, field.Invalid(conditions, svm.Status.Conditions, "Both success and failed conditions cannot be true at the same time"))
	}
	for _, c := range []struct {
		t    svmv1.MigrationConditionType
		now  bool
		name string
	}{{svmv1.MigrationSucceeded, succeeded, "Success"}, {svmv1.MigrationFailed, failed, "Failed"}} {
		if IsTrue(oldSVM, c.t) && !c.now {
			errs = append(errs, field.Invalid(conditions, svm.Status.Conditions, fmt.Sprintf("%s condition cannot be set to false once it is true", c.name)))
		}
	}
	return errs
}

// IsTrue reports whether svm has condition t with status True.
func IsTrue(svm *svmv1.StorageVersionMigration, t svmv1.MigrationConditionType) bool {
	c := meta.FindStatusCondition(svm.Status.Conditions, string(t))
	return c != nil && c.Status == metav1.ConditionTrue
}
