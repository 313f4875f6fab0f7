package printers

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/capstan-io/capstan/registry/rest"
)

var apiregistrationConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	apiregv1.SchemeGroupVersion.WithKind("APIService"): New(apiServiceColumns, apiServiceRow),
}

var apiServiceColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Service", "string", "The reference to the service that hosts this API endpoint."),
	column("Available", "string", "Whether this service is available."),
	ageColumn(),
}

// apiServiceRow prints "Local" or namespace/name, and the Available
// condition with its reason unless it is True.
func apiServiceRow(s *apiregv1.APIService, now time.Time) (metav1.TableRow, error) {
	service := "Local"
	if s.Spec.Service != nil {
		service = s.Spec.Service.Namespace + "/" + s.Spec.Service.Name
	}
	available := string(apiregv1.ConditionUnknown)
	for _, c := range s.Status.Conditions {
		if c.Type != apiregv1.Available {
			continue
		}
		available = string(c.Status)
		if c.Status != apiregv1.ConditionTrue && c.Reason != "" {
			available = fmt.Sprintf("%s (%s)", c.Status, c.Reason)
		}
	}
	return rowOf(s.Name, service, available, since(s.CreationTimestamp, now))
}
