package printers

import (
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

var flowcontrolConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	flowcontrolv1.SchemeGroupVersion.WithKind("FlowSchema"):                 New(flowSchemaColumns, flowSchemaRow),
	flowcontrolv1.SchemeGroupVersion.WithKind("PriorityLevelConfiguration"): New(priorityLevelColumns, priorityLevelRow),
}

var flowSchemaColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("PriorityLevel", "string", flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]),
	column("MatchingPrecedence", "string", flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["matchingPrecedence"]),
	column("DistinguisherMethod", "string", flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["distinguisherMethod"]),
	ageColumn(),
	column("MissingPL", "string", "references a broken or non-existent PriorityLevelConfiguration"),
}

// flowSchemaRow shows MissingPL as the status of the Dangling condition, or
// "?" without one.
func flowSchemaRow(fs *flowcontrolv1.FlowSchema, now time.Time) (metav1.TableRow, error) {
	distinguisher := "<none>"
	if d := fs.Spec.DistinguisherMethod; d != nil {
		distinguisher = string(d.Type)
	}
	missing := "?"
	for _, c := range fs.Status.Conditions {
		if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
			missing = string(c.Status)
			break
		}
	}
	return rowOf(fs.Name, fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), distinguisher,
		since(fs.CreationTimestamp, now), missing)
}

var priorityLevelColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Type", "string", flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]),
	column("NominalConcurrencyShares", "string", flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]),
	column("Queues", "string", flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queues"]),
	column("HandSize", "string", flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["handSize"]),
	column("QueueLengthLimit", "string", flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queueLengthLimit"]),
	ageColumn(),
}

// priorityLevelRow shows the numbers of a Limited level, "<none>" for an
// Exempt one (or a level that does not queue).
func priorityLevelRow(pl *flowcontrolv1.PriorityLevelConfiguration, now time.Time) (metav1.TableRow, error) {
	var shares, queues, handSize, queueLength any = "<none>", "<none>", "<none>", "<none>"
	if l := pl.Spec.Limited; l != nil {
		shares = deref(l.NominalConcurrencyShares)
		if q := l.LimitResponse.Queuing; q != nil {
			queues, handSize, queueLength = q.Queues, q.HandSize, q.QueueLengthLimit
		}
	}
	return rowOf(pl.Name, string(pl.Spec.Type), shares, queues, handSize, queueLength, since(pl.CreationTimestamp, now))
}
