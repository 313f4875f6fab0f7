package printers

import (
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/capstan-io/capstan/registry/rest"
)

var certificatesConvertors = map[schema.GroupVersionKind]rest.TableConvertor{
	certificatesKind("CertificateSigningRequest"): New(csrColumns, csrRow),
	certificatesKind("ClusterTrustBundle"):        New(clusterTrustBundleColumns, clusterTrustBundleRow),
}

func certificatesKind(kind string) schema.GroupVersionKind {
	return certificatesv1.SchemeGroupVersion.WithKind(kind)
}

// csrColumns are described by the fields of v1beta1, as kube's are.
var csrColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	ageColumn(),
	column("SignerName", "string", certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["signerName"]),
	column("Requestor", "string", certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["request"]),
	column("RequestedDuration", "string", certificatesv1beta1.CertificateSigningRequestSpec{}.SwaggerDoc()["expirationSeconds"]),
	column("Condition", "string", certificatesv1beta1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]),
}

func csrRow(csr *certificatesv1.CertificateSigningRequest, now time.Time) (metav1.TableRow, error) {
	requested := "<none>"
	if s := csr.Spec.ExpirationSeconds; s != nil {
		requested = duration.HumanDuration(time.Duration(*s) * time.Second)
	}
	return rowOf(csr.Name, since(csr.CreationTimestamp, now), orNone(csr.Spec.SignerName), csr.Spec.Username, requested, csrCondition(csr))
}

// csrCondition is Denied, Approved or Pending, then Failed and Issued when
// they apply.
func csrCondition(csr *certificatesv1.CertificateSigningRequest) string {
	var approved, denied, failed bool
	for _, c := range csr.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			approved = true
		case certificatesv1.CertificateDenied:
			denied = true
		case certificatesv1.CertificateFailed:
			failed = true
		}
	}
	status := "Pending"
	if denied {
		status = "Denied"
	} else if approved {
		status = "Approved"
	}
	if failed {
		status += ",Failed"
	}
	if len(csr.Status.Certificate) > 0 {
		status += ",Issued"
	}
	return status
}

var clusterTrustBundleColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("SignerName", "string", certificatesv1.ClusterTrustBundleSpec{}.SwaggerDoc()["signerName"]),
}

func clusterTrustBundleRow(b *certificatesv1.ClusterTrustBundle, _ time.Time) (metav1.TableRow, error) {
	return rowOf(b.Name, orNone(b.Spec.SignerName))
}
