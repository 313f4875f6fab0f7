package printers

import (
	"time"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

var policyConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"): New(podDisruptionBudgetColumns, podDisruptionBudgetRow),
}

var podDisruptionBudgetColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Min Available", "string", "The minimum number of pods that must be available."),
	column("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
	column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
	ageColumn(),
}

func podDisruptionBudgetRow(pdb *policyv1.PodDisruptionBudget, now time.Time) (metav1.TableRow, error) {
	minAvailable, maxUnavailable := "N/A", "N/A"
	if v := pdb.Spec.MinAvailable; v != nil {
		minAvailable = v.String()
	}
	if v := pdb.Spec.MaxUnavailable; v != nil {
		maxUnavailable = v.String()
	}
	return rowOf(pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), since(pdb.CreationTimestamp, now))
}
