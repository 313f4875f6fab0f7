package printers

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

var coordinationConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	coordinationv1.SchemeGroupVersion.WithKind("Lease"): New(leaseColumns, leaseRow),
}

var leaseColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Holder", "string", coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]),
	ageColumn(),
}

func leaseRow(l *coordinationv1.Lease, now time.Time) (metav1.TableRow, error) {
	return rowOf(l.Name, deref(l.Spec.HolderIdentity), since(l.CreationTimestamp, now))
}
