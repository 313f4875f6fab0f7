package apiextensions

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// StorageVersion returns the name of the version marked as storage. A valid
// CRD has exactly one; an error says there is none.
func StorageVersion(crd *apiextv1.CustomResourceDefinition) (string, error) {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name, nil
		}
	}
	return "", fmt.Errorf("invalid apiextensionsv1.CustomResourceDefinition, no storage version")
}

// HasServedVersion reports whether version is one of crd's versions and
// is served.
func HasServedVersion(crd *apiextv1.CustomResourceDefinition, version string) bool {
	v := GetVersion(crd, version)
	return v != nil && v.Served
}

// GetVersion returns the entry of spec.versions named version, or nil. The
// pointer is into crd: changing it changes crd.
func GetVersion(crd *apiextv1.CustomResourceDefinition, version string) *apiextv1.CustomResourceDefinitionVersion {
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == version {
			return &crd.Spec.Versions[i]
		}
	}
	return nil
}

// IsStoredVersion reports whether version is listed in status.storedVersions.
func IsStoredVersion(crd *apiextv1.CustomResourceDefinition, version string) bool {
	for _, v := range crd.Status.StoredVersions {
		if v == version {
			return true
		}
	}
	return false
}

// IsEstablished reports whether the Established condition is True: the
// resource is served.
func IsEstablished(crd *apiextv1.CustomResourceDefinition) bool {
	return IsConditionTrue(crd, apiextv1.Established)
}

// IsTerminating reports whether the Terminating condition is True: the CRD
// is being deleted and its custom resources are being removed, so no new
// ones may be created.
func IsTerminating(crd *apiextv1.CustomResourceDefinition) bool {
	return IsConditionTrue(crd, apiextv1.Terminating)
}

// IsConditionTrue reports whether the condition of type t is present with
// status True.
func IsConditionTrue(crd *apiextv1.CustomResourceDefinition, t apiextv1.CustomResourceDefinitionConditionType) bool {
	c := FindCondition(crd, t)
	return c != nil && c.Status == apiextv1.ConditionTrue
}

// IsConditionFalse reports whether the condition of type t is present with
// status False.
func IsConditionFalse(crd *apiextv1.CustomResourceDefinition, t apiextv1.CustomResourceDefinitionConditionType) bool {
	c := FindCondition(crd, t)
	return c != nil && c.Status == apiextv1.ConditionFalse
}

// FindCondition returns the condition of type t in crd's status, or nil.
// The pointer is into crd.
func FindCondition(crd *apiextv1.CustomResourceDefinition, t apiextv1.CustomResourceDefinitionConditionType) *apiextv1.CustomResourceDefinitionCondition {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == t {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

// SetCondition adds cond to crd's status or overwrites the condition of
// its type. lastTransitionTime is now when the condition is new or its
// status changes (or it had none); otherwise the old time stays. The time
// given in cond is ignored.
func SetCondition(crd *apiextv1.CustomResourceDefinition, cond apiextv1.CustomResourceDefinitionCondition) {
	now := metav1.NewTime(time.Now())
	existing := FindCondition(crd, cond.Type)
	if existing == nil {
		cond.LastTransitionTime = now
		crd.Status.Conditions = append(crd.Status.Conditions, cond)
		return
	}
	if existing.Status != cond.Status || existing.LastTransitionTime.IsZero() {
		existing.LastTransitionTime = now
	}
	existing.Status = cond.Status
	existing.Reason = cond.Reason
	existing.Message = cond.Message
	existing.ObservedGeneration = cond.ObservedGeneration
}

// RemoveCondition removes the condition of type t from crd's status. The
// conditions become an empty, non-nil list, as kube's helper leaves them.
func RemoveCondition(crd *apiextv1.CustomResourceDefinition, t apiextv1.CustomResourceDefinitionConditionType) {
	kept := []apiextv1.CustomResourceDefinitionCondition{}
	for _, c := range crd.Status.Conditions {
		if c.Type != t {
			kept = append(kept, c)
		}
	}
	crd.Status.Conditions = kept
}

// IsConditionEquivalent reports whether a and b are equal but for their
// times; two nils are equivalent.
func IsConditionEquivalent(a, b *apiextv1.CustomResourceDefinitionCondition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message
}

// IsProtectedCommunityGroup reports whether group is k8s.io, kubernetes.io
// or a subdomain of them: a CRD there needs the api-approved.kubernetes.io
// annotation.
func IsProtectedCommunityGroup(group string) bool {
	for _, d := range []string{"k8s.io", "kubernetes.io"} {
		if group == d || strings.HasSuffix(group, "."+d) {
			return true
		}
	}
	return false
}

// APIApprovalState is what the api-approved.kubernetes.io annotation says.
type APIApprovalState int

// The states of the approval annotation.
const (
	// APIApprovalInvalid: neither a URL nor a reason starting "unapproved".
	APIApprovalInvalid APIApprovalState = iota
	// APIApproved: a URL (of the approving pull request).
	APIApproved
	// APIApprovalBypassed: a value starting "unapproved".
	APIApprovalBypassed
	// APIApprovalMissing: no annotation or an empty one.
	APIApprovalMissing
)

// GetAPIApprovalState returns the approval state that annotations hold, and
// the message kube gives for it (an error message for the invalid and
// missing states, a condition message otherwise).
func GetAPIApprovalState(annotations map[string]string) (APIApprovalState, string) {
	value := annotations[apiextv1.KubeAPIApprovedAnnotation]
	switch {
	case value == "":
		return APIApprovalMissing, fmt.Sprintf("protected groups must have approval annotation %q, see https://github.com/kubernetes/enhancements/pull/1111", apiextv1.KubeAPIApprovedAnnotation)
	case strings.HasPrefix(value, "unapproved"):
		return APIApprovalBypassed, fmt.Sprintf("not approved: %q", value)
	}
	if u, err := url.ParseRequestURI(value); err == nil && u.Host != "" && u.Scheme != "" {
		return APIApproved, fmt.Sprintf("approved in %v", value)
	}
	return APIApprovalInvalid, fmt.Sprintf("protected groups must have approval annotation %q with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111", apiextv1.KubeAPIApprovedAnnotation)
}
