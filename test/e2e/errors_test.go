package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

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
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	_, err := cms.Get(e2eutil.Ctx(t), "x", metav1.GetOptions{})
	s := e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `configmaps "x" not found`)
	if s.Details == nil || s.Details.Name != "x" || s.Details.Kind != "configmaps" || s.Details.Group != "" {
		t.Fatalf("not found details = %+v", s.Details)
	}
	_, err = e.Clientset.CoordinationV1().Leases(ns).Get(e2eutil.Ctx(t), "x", metav1.GetOptions{})
	e2eutil.WantStatus(t, err, 404, metav1.StatusReasonNotFound, `leases.coordination.k8s.io "x" not found`)
	e.ConfigMap(t, ns, "a", nil)
	_, err = cms.Create(e2eutil.Ctx(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, metav1.CreateOptions{})
	s = e2eutil.WantStatus(t, err, 409, metav1.StatusReasonAlreadyExists, `configmaps "a" already exists`)
	if s.Details == nil || s.Details.Name != "a" || s.Details.Kind != "configmaps" {
		t.Fatalf("already exists details = %+v", s.Details)
	}

	bad := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}
	_, err = cms.Create(e2eutil.Ctx(t), bad, metav1.CreateOptions{})
	s = e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid,
		`ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": `+dns1123Subdomain)
	e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, "metadata.name")
	if s.Details.Name != "Bad_Name" || s.Details.Kind != "ConfigMap" {
		t.Fatalf("invalid details = %+v", s.Details)
	}
	bad = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:        "b",
		Labels:      map[string]string{"bad key!": "v", "k": "bad value!"},
		Annotations: map[string]string{"Bad/Annotation/Key": "v"},
	}, Data: map[string]string{"bad key": "v"}}
	_, err = cms.Create(e2eutil.Ctx(t), bad, metav1.CreateOptions{})
	s = e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	for _, field := range []string{"metadata.labels", "metadata.annotations", "data[bad key]"} {
		e2eutil.WantCause(t, s, metav1.CauseTypeFieldValueInvalid, field)
	}

	// Methods and paths nothing serves.
	const notAllowed = "the server does not allow this method on the requested resource"
	e.Do(t, http.MethodPatch, "/api/v1/namespaces/"+ns+"/finalize", []byte(`{}`), "Content-Type", "application/merge-patch+json").
		WantStatus(t, 405, metav1.StatusReasonMethodNotAllowed, notAllowed)
	e.Do(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/finalize", nil).
		WantStatus(t, 405, metav1.StatusReasonMethodNotAllowed, notAllowed)
	e.Do(t, http.MethodPost, e2eutil.CMPath(ns, "a"), []byte(`{}`)).
		WantStatus(t, 405, metav1.StatusReasonMethodNotAllowed, notAllowed)
	const notFound = "the server could not find the requested resource"
	for _, path := range []string{
		"/api/v1/namespaces/" + ns + "/widgets",
		"/api/v1/widgets/x",
		"/apis/coordination.k8s.io/v9/leases",
		"/api/v2/namespaces",
		"/api/v1/namespaces/" + ns + "/configmaps/a/bogus",
	} {
		e.Do(t, http.MethodGet, path, nil).WantStatus(t, 404, metav1.StatusReasonNotFound, notFound)
	}
	// Paths no API router takes (a group no server has, no API at all,
	// an empty segment) get kube's plain 404.
	for _, path := range []string{"/apis/example.com/v1/widgets", "/no/such/path", "//api/v1/namespaces"} {
		if r := e.Do(t, http.MethodGet, path, nil); r.Code != 404 || string(r.Body) != "404 page not found\n" {
			t.Errorf("GET %s = %d %q, want kube's plain 404", path, r.Code, r.Body)
		}
	}
	// A cluster-scoped resource does not live in a namespace, a namespaced
	// one needs one for a name.
	e.Do(t, http.MethodGet, "/api/v1/namespaces/"+ns+"/namespaces", nil).WantStatus(t, 404, metav1.StatusReasonNotFound, notFound)
	e.Do(t, http.MethodGet, "/api/v1/configmaps/a", nil).WantStatus(t, 404, metav1.StatusReasonNotFound, notFound)
}
