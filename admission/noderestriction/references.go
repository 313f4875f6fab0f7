package noderestriction

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/capstan-io/capstan/admission/internal/podrefs"
)

// apiReference names the first kind of API object pod refers to, in kube's
// words ("" if none): a mirror pod must run without any, since the kubelet
// would read them on behalf of a pod no admin has admitted.
func apiReference(pod *corev1.Pod) (string, error) {
	if pod.Spec.ServiceAccountName != "" {
		return "serviceaccounts", nil
	}
	if refersTo(pod, podrefs.Secrets) {
		return "secrets", nil
	}
	if refersTo(pod, podrefs.ConfigMaps) {
		return "configmaps", nil
	}
	if len(pod.Spec.ResourceClaims) > 0 {
		return "resourceclaims", nil
	}
	for _, v := range pod.Spec.Volumes {
		switch s := v.VolumeSource; {
		case s.ConfigMap != nil:
			return "configmaps (via configmap volumes)", nil
		case s.Secret != nil:
			return "secrets (via secret volumes)", nil
		case s.CSI != nil:
			return "csidrivers (via CSI volumes)", nil
		case s.Glusterfs != nil:
			return "endpoints (via glusterFS volumes)", nil
		case s.PersistentVolumeClaim != nil:
			return "persistentvolumeclaims", nil
		case s.Ephemeral != nil:
			return "persistentvolumeclaims (via ephemeral volumes)", nil
		case s.AzureFile != nil:
			return "secrets (via azureFile volumes)", nil
		case s.Projected != nil:
			for _, p := range s.Projected.Sources {
				switch {
				case p.ConfigMap != nil:
					return "configmaps (via projected volumes)", nil
				case p.Secret != nil:
					return "secrets (via projected volumes)", nil
				case p.ServiceAccountToken != nil:
					return "serviceaccounts (via projected volumes)", nil
				case p.ClusterTrustBundle != nil:
					return "clustertrustbundles", nil
				case p.PodCertificate != nil:
					return "podcertificates", nil
				case p.DownwardAPI != nil:
				default:
					return "", fmt.Errorf("unknown source for projected volume %q", v.Name)
				}
			}
		case s.AWSElasticBlockStore != nil, s.AzureDisk != nil, s.CephFS != nil, s.Cinder != nil,
			s.DownwardAPI != nil, s.EmptyDir != nil, s.FC != nil, s.FlexVolume != nil, s.Flocker != nil,
			s.GCEPersistentDisk != nil, s.GitRepo != nil, s.HostPath != nil, s.Image != nil, s.ISCSI != nil,
			s.NFS != nil, s.PhotonPersistentDisk != nil, s.PortworxVolume != nil, s.Quobyte != nil,
			s.RBD != nil, s.ScaleIO != nil, s.StorageOS != nil, s.VsphereVolume != nil:
		default:
			return "", fmt.Errorf("unknown volume type for volume  %q", v.Name)
		}
	}
	return "", nil
}

// refersTo reports whether pod holds any reference refs finds, named or
// not, as kube counts them.
func refersTo(pod *corev1.Pod, refs func(*corev1.Pod) []string) bool {
	return len(refs(pod)) > 0
}
