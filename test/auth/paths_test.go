package auth

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestPathTricks: a user who may read pods in one namespace cannot reach
// secrets or cluster-scoped objects by dressing up the path (.., encoded
// slashes, a cluster-scoped resource under a namespace): what authorization
// saw is what the handler serves, or nothing.
func TestPathTricks(t *testing.T) {
	s := testkit.StartServer(t)
	admin := s.Client(t)
	ns := namespace(t, admin)
	if _, err := admin.CoreV1().Secrets(ns).Create(ctx(t), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hidden"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bind(t, admin, ns, "pod-reader", []rbacv1.PolicyRule{{Verbs: []string{"get", "list"}, APIGroups: []string{""}, Resources: []string{"pods"}}}, "paula")
	paula := newUser(t, s, "paula")
	eventually(t, "paula reads pods", func(ctx context.Context) error {
		_, err := paula.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err
	})
	for _, path := range []string{
		"/api/v1/namespaces/" + ns + "/pods/../secrets",
		"/api/v1/namespaces/" + ns + "/pods/..%2Fsecrets",
		"/api/v1/namespaces/" + ns + "/pods/%2E%2E/secrets/hidden",
		"/api/v1/namespaces/" + ns + "/pods%2F..%2Fsecrets",
		"/api/v1/namespaces/" + ns + "/pods/x/../../secrets/hidden",
		"/api/v1/namespaces/" + ns + "/nodes",
		"/api/v1/namespaces/" + ns + "/namespaces",
	} {
		body, err := paula.client.CoreV1().RESTClient().Get().AbsPath("/").RequestURI(path).DoRaw(ctx(t))
		if err == nil || strings.Contains(string(body), `"kind":"SecretList"`) || strings.Contains(string(body), `"kind":"Secret"`) ||
			strings.Contains(string(body), `"kind":"NodeList"`) || strings.Contains(string(body), `"kind":"NamespaceList"`) {
			t.Errorf("%s: %v\n%s", path, err, body)
		}
	}
}
