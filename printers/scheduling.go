package printers

import (
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

var schedulingConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	schedulingv1.SchemeGroupVersion.WithKind("PriorityClass"): New(priorityClassColumns, priorityClassRow),
}

var priorityClassColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Value", "integer", schedulingv1.PriorityClass{}.SwaggerDoc()["value"]),
	column("Global-Default", "boolean", schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]),
	ageColumn(),
	column("PreemptionPolicy", "string", schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"]),
}

func priorityClassRow(pc *schedulingv1.PriorityClass, now time.Time) (metav1.TableRow, error) {
	var preemption string
	if pc.PreemptionPolicy != nil {
		preemption = string(*pc.PreemptionPolicy)
	}
	return rowOf(pc.Name, int64(pc.Value), pc.GlobalDefault, since(pc.CreationTimestamp, now), preemption)
}
