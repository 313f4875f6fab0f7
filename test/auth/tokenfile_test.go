package auth

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestStaticTokenFile: --token-auth-file users authenticate with their
// bearer token (kubectl auth whoami --token), unknown tokens get 401 and
// the users' groups reach RBAC.
func TestStaticTokenFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens.csv")
	content := "tok-alice,alice,uid-alice,\"dev,ops\"\ntok-bob,bob,uid-bob\n"
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testkit.StartServer(t, "--token-auth-file", file)
	ctx := context.Background()

	out, stderr, err := testkit.RunKubectl(t, "", nil, "--server", s.URL,
		"--certificate-authority", filepath.Join(s.DataDir, "pki", "ca.crt"), "--token", "tok-alice", "auth", "whoami", "-o", "json")
	if err != nil {
		t.Fatalf("whoami: %v\n%s", err, stderr)
	}
	for _, want := range []string{`"username": "alice"`, `"uid": "uid-alice"`, `"dev"`, `"ops"`, `"system:authenticated"`} {
		if !strings.Contains(out, want) {
			t.Errorf("whoami misses %s:\n%s", want, out)
		}
	}

	review, err := tokenClient(t, s, "tok-bob").AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := review.Status.UserInfo; u.Username != "bob" || u.UID != "uid-bob" || len(u.Groups) != 1 || u.Groups[0] != "system:authenticated" {
		t.Errorf("bob is %+v", u)
	}

	_, err = tokenClient(t, s, "tok-nobody").CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Errorf("bad token: want 401, got %v", err)
	}
	_, stderr, err = testkit.RunKubectl(t, tokenKubeconfig(t, s, "tok-nobody"), nil, "auth", "whoami")
	if err == nil || !strings.Contains(stderr, "Unauthorized") {
		t.Errorf("kubectl with a bad token: err %v, stderr %s", err, stderr)
	}

	// Authenticated, not authorized: RBAC applies to token users.
	_, err = tokenClient(t, s, "tok-alice").CoreV1().Secrets("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("alice listing secrets: want 403, got %v", err)
	}
	if _, stderr, err := testkit.RunKubectl(t, s.Kubeconfig, nil, "create", "clusterrolebinding", "dev-view", "--clusterrole", "view", "--group", "dev"); err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	eventually(t, "group dev may list configmaps", func(ctx context.Context) error {
		_, err := tokenClient(t, s, "tok-alice").CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return err
	})
}
