package printers

import (
	"strconv"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

var discoveryConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"): New(endpointSliceColumns, endpointSliceRow),
}

var endpointSliceColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("AddressType", "string", discoveryv1.EndpointSlice{}.SwaggerDoc()["addressType"]),
	column("Ports", "string", discoveryv1.EndpointSlice{}.SwaggerDoc()["ports"]),
	column("Endpoints", "string", discoveryv1.EndpointSlice{}.SwaggerDoc()["endpoints"]),
	ageColumn(),
}

// endpointSliceRow lists the first three ports (by number, else name, else
// "*") and the first three addresses.
func endpointSliceRow(es *discoveryv1.EndpointSlice, now time.Time) (metav1.TableRow, error) {
	ports := make([]string, len(es.Ports))
	for i, p := range es.Ports {
		switch {
		case p.Port != nil:
			ports[i] = strconv.Itoa(int(*p.Port))
		case p.Name != nil:
			ports[i] = *p.Name
		default:
			ports[i] = "*"
		}
	}
	var addresses []string
	for _, ep := range es.Endpoints {
		addresses = append(addresses, ep.Addresses...)
	}
	return rowOf(es.Name, string(es.AddressType), firstOf(ports, 3, "<unset>"), firstOf(addresses, 3, "<unset>"),
		since(es.CreationTimestamp, now))
}
