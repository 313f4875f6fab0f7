package noderestriction

import (
	"crypto/x509"
	"encoding/pem"
	"errors"

	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/capstan-io/capstan/admission"
)

// admitCSR: a kubelet asks for serving and client certificates of its own
// node only. Other signers' requests are their signers' business.
func admitCSR(nodeName string, a *admission.Attributes) error {
	if a.Operation != admission.Create {
		return nil
	}
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return forbidden(a, "unexpected type %T", a.Object)
	}
	if csr.Spec.SignerName != certificatesv1.KubeletServingSignerName && csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		return nil
	}
	req, err := parseCSR(csr.Spec.Request)
	if err != nil {
		return forbidden(a, "unable to parse csr: %v", err)
	}
	if req.Subject.CommonName != "system:node:"+nodeName {
		return forbidden(a, "can only create a node CSR with CN=system:node:%s", nodeName)
	}
	return nil
}

func parseCSR(data []byte) (*x509.CertificateRequest, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("PEM block type must be CERTIFICATE REQUEST")
	}
	return x509.ParseCertificateRequest(block.Bytes)
}
