package e2e

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const dns1123Subdomain = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', ` +
	`and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is ` +
	`'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`

// TestErrorStatuses: errors are metav1.Status objects with kube's codes,
// reasons, messages and details.
func TestErrorStatuses(t *testing.T) {
	e := start(t)
	ns := e.namespace(t)
	cms := e.c.CoreV1().ConfigMaps(ns)
	_, err := cms.Get(ctx(t), "x", metav1.GetOptions{})
	s := wantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "x" not found`)
	if s.Details == nil || s.Details.Name != "x" || s.Details.Kind != "configmaps" || s.Details.Group != "" {
		t.Fatalf("not found details = %+v", s.Details)
	}
	_, err = e.c.CoordinationV1().Leases(ns).Get(ctx(t), "x", metav1.GetOptions{})
	wantStatus(t, err, 404, metav1.StatusReasonNotFound, `leases.coordination.k8s.io "x" not found`)
	e.configMap(t, ns, "a", nil)
	_, err = cms.Create(ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	s = wantStatus(t, err, 409, metav1.StatusReasonAlreadyExists, `configmaps "a" already exists`)
	if s.Details == nil || s.Details.Name != "a" || s.Details.Kind != "configmaps" {
		t.Fatalf("already exists details = %+v", s.Details)
	}

	bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}
	_, err = cms.Create(ctx(t), bad, metav1.CreateOptions{})
	s = wantStatus(t, err, 422, metav1.StatusReasonInvalid,
		`ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": `+dns1123Subdomain)
	wantCause(t, s, metav1.CauseTypeFieldValueInvalid, "metadata.name")
	if s.Details.Name != "Bad_Name" || s.Details.Kind != "ConfigMap" {
		t.Fatalf("invalid details = %+v", s.Details)
	}
	bad = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:        "b",
		Labels:      map[string]string{"bad key!": "v", "k": "bad value!"},
		Annotations: map[string]string{"Bad/Annotation/Key": "v"},
	}, Data: map[string]string{"bad key": "v"}}
	_, err = cms.Create(ctx(t), bad, metav1.CreateOptions{})
	s = wantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	for _, field := range []string{"metadata.labels", "metadata.annotations", "data[bad key]"} {
		wantCause(t, s, metav1.CauseTypeFieldValueInvalid, field)
	}

	// Methods and paths nothing serves.
	const notAllowed = "the server does not allow this method on the requested resource"
	e.do(t, http.MethodPatch, "/api/v1/namespaces/"+ns+"/finalize", []byte(`{}`), "Content-Type", "application/merge-patch+json").
		wantStatus(t, 405, metav1.StatusReasonMethodNotAllowed, notAllowed)
	e.do(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/finalize", nil).
		wantStatus(t, 405, metav1.StatusReasonMethodNotAllowed, notAllowed)
	e.do(t, http.MethodPost, cmPath(ns, "a"), []byte(`{}`)).
		wantStatus(t, 405, metav1.StatusReasonMethodNotAllowed, notAllowed)
	const notFound = "the server could not find the requested resource"
	for _, path := range []string{
		"/api/v1/namespaces/" + ns + "/widgets",
		"/api/v1/widgets/x",
		"/apis/example.com/v1/widgets",
		"/apis/coordination.k8s.io/v9/leases",
		"/api/v2/namespaces",
		"/api/v1/namespaces/" + ns + "/configmaps/a/bogus",
		"/no/such/path",
	} {
		e.do(t, http.MethodGet, path, nil).wantStatus(t, 404, metav1.StatusReasonNotFound, notFound)
	}
	// A cluster-scoped resource does not live in a namespace, a namespaced
	// one needs one for a name.
	e.do(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/namespaces", nil).wantStatus(t, 404, metav1.StatusReasonNotFound, notFound)
	e.do(t, http.MethodGet, "/api/v1/configmaps/a", nil).wantStatus(t, 404, metav1.StatusReasonNotFound, notFound)
}
