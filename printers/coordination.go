package printers

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	coordinationv1alpha2 "k8s.io/api/coordination/v1alpha2"
	coordinationv1beta1 "k8s.io/api/coordination/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

var coordinationConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	coordinationv1.SchemeGroupVersion.WithKind("Lease"):               New(leaseColumns, leaseRow),
	coordinationv1beta1.SchemeGroupVersion.WithKind("LeaseCandidate"): New(leaseCandidateColumns, leaseCandidateRow),
}

var leaseColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Holder", "string", coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]),
	ageColumn(),
}

func leaseRow(l *coordinationv1.Lease, now time.Time) (metav1.TableRow, error) {
	return rowOf(l.Name, deref(l.Spec.HolderIdentity), since(l.CreationTimestamp, now))
}

// leaseCandidateColumns are kube's, whose version columns take their
// (empty) descriptions from ObjectMeta, and whose lease name takes its
// description from v1alpha2.
var leaseCandidateColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("LeaseName", "string", coordinationv1alpha2.LeaseCandidateSpec{}.SwaggerDoc()["leaseName"]),
	column("BinaryVersion", "string", objectMetaDoc["binaryVersion"]),
	column("EmulationVersion", "string", objectMetaDoc["emulationVersion"]),
	ageColumn(),
}

func leaseCandidateRow(c *coordinationv1beta1.LeaseCandidate, now time.Time) (metav1.TableRow, error) {
	return rowOf(c.Name, c.Spec.LeaseName, c.Spec.BinaryVersion, c.Spec.EmulationVersion, since(c.CreationTimestamp, now))
}
