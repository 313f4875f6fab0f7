package printers

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/registry/rest"
)

// apis137Convertors print the kinds kube v1.37 made GA outside
// resource.k8s.io: StorageVersionMigrations and PodCertificateRequests.
var apis137Convertors = map[schema.GroupVersionKind]rest.TableConvertor{
	svmv1.SchemeGroupVersion.WithKind("StorageVersionMigration"): New(migrationColumns, migrationRow),
	certificatesKind("PodCertificateRequest"):                    New(podCertificateRequestColumns, podCertificateRequestRow),
}

// migrationColumns: kube's Name column has no name format here.
var migrationColumns = []metav1.TableColumnDefinition{
	column("Name", "string", objectMetaDoc["name"]),
	column("Resource", "string", "GroupResource to migrate"),
	column("Status", "string", "Status of the migration"),
}

// migrationRow shows the last of the Running, Failed and Succeeded
// conditions that is true, or Unknown.
func migrationRow(m *svmv1.StorageVersionMigration, _ time.Time) (metav1.TableRow, error) {
	status := "Unknown"
	for _, c := range m.Status.Conditions {
		switch svmv1.MigrationConditionType(c.Type) {
		case svmv1.MigrationRunning, svmv1.MigrationFailed, svmv1.MigrationSucceeded:
			if c.Status == metav1.ConditionTrue {
				status = c.Type
			}
		}
	}
	return rowOf(m.Name, m.Spec.Resource.String(), status)
}

var podCertificateRequestDoc = certificatesv1.PodCertificateRequestSpec{}.SwaggerDoc()

// podCertificateRequestColumns: kube prints the annotations in every
// server-side table, with no wide priority.
var podCertificateRequestColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("PodName", "string", podCertificateRequestDoc["podName"]),
	column("ServiceAccountName", "string", podCertificateRequestDoc["serviceAccountName"]),
	column("NodeName", "string", podCertificateRequestDoc["nodeName"]),
	column("SignerName", "string", podCertificateRequestDoc["signerName"]),
	column("State", "string", "Is the request Pending, Issued, Denied, or Failed?"),
	column("UnverifiedUserAnnotations", "string", podCertificateRequestDoc["unverifiedUserAnnotations"]),
}

// podCertificateRequestRow's state is the last of Issued, Denied and
// Failed among the conditions, whatever their status, as kube's printer
// has it, or Pending.
func podCertificateRequestRow(r *certificatesv1.PodCertificateRequest, _ time.Time) (metav1.TableRow, error) {
	state := "Pending"
	for _, c := range r.Status.Conditions {
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied,
			certificatesv1.PodCertificateRequestConditionTypeFailed:
			state = c.Type
		}
	}
	return rowOf(r.Name, r.Spec.PodName, r.Spec.ServiceAccountName, string(r.Spec.NodeName), r.Spec.SignerName, state,
		labels.FormatLabels(r.Spec.UnverifiedUserAnnotations))
}
