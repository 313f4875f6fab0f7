package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/internal/testkit"
)

const defaultIssuer = "https://kubernetes.default.svc.cluster.local"

// createToken runs kubectl create token with args and returns the token.
func createToken(t *testing.T, s *testkit.Server, args ...string) string {
	t.Helper()
	out, stderr, err := testkit.RunKubectl(t, s.Kubeconfig, nil, append([]string{"create", "token"}, args...)...)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	return strings.TrimSpace(out)
}

// claimsOf decodes a JWT's payload without verifying it.
func claimsOf(t *testing.T, token string) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// whoami is the user a client authenticates as.
func whoami(ctx context.Context, c kubernetes.Interface) (authenticationv1.UserInfo, error) {
	r, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return r.Status.UserInfo, nil
}

func createSA(t *testing.T, admin kubernetes.Interface, ns, name string) *corev1.ServiceAccount {
	t.Helper()
	sa, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return sa
}

// TestServiceAccountToken: kubectl create token issues a token with kube's
// claims that authenticates as the service account, to which RBAC applies,
// and which stops working once the service account is deleted.
func TestServiceAccountToken(t *testing.T) {
	s := testkit.StartServer(t)
	admin := s.Client(t)
	sa := createSA(t, admin, "default", "robot")

	token := createToken(t, s, "robot", "--duration", "20m")
	c := claimsOf(t, token)
	if c["iss"] != defaultIssuer || c["sub"] != "system:serviceaccount:default:robot" {
		t.Errorf("claims: %v", c)
	}
	if aud, _ := c["aud"].([]any); len(aud) != 1 || aud[0] != defaultIssuer {
		t.Errorf("aud: %v", c["aud"])
	}
	if exp, iat := c["exp"].(float64), c["iat"].(float64); exp-iat != 1200 || c["nbf"] != c["iat"] {
		t.Errorf("exp %v iat %v nbf %v", exp, iat, c["nbf"])
	}
	jti, _ := c["jti"].(string)
	k8s, _ := c["kubernetes.io"].(map[string]any)
	if jti == "" || k8s["namespace"] != "default" {
		t.Errorf("claims: %v", c)
	}
	if ref, _ := k8s["serviceaccount"].(map[string]any); ref["name"] != "robot" || ref["uid"] != string(sa.UID) {
		t.Errorf("serviceaccount claim: %v", k8s)
	}

	out, stderr, err := testkit.RunKubectl(t, tokenKubeconfig(t, s, token), nil, "auth", "whoami", "-o", "json")
	if err != nil {
		t.Fatalf("whoami: %v: %s", err, stderr)
	}
	var review authenticationv1.SelfSubjectReview
	if err := json.Unmarshal([]byte(out), &review); err != nil {
		t.Fatal(err)
	}
	u := review.Status.UserInfo
	if u.Username != "system:serviceaccount:default:robot" || u.UID != string(sa.UID) ||
		!slices.Equal(u.Groups, []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}) {
		t.Errorf("whoami: %+v", u)
	}
	if got := u.Extra["authentication.kubernetes.io/credential-id"]; len(got) != 1 || got[0] != "JTI="+jti {
		t.Errorf("credential id: %v", u.Extra)
	}

	robot := tokenClient(t, s, token)
	if _, err := robot.CoreV1().ConfigMaps("default").List(ctx(t), metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("before the binding: want 403, got %v", err)
	}
	if _, stderr, err := testkit.RunKubectl(t, s.Kubeconfig, nil, "create", "rolebinding", "robot-view", "--clusterrole", "view",
		"--serviceaccount", "default:robot"); err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	eventually(t, "robot may list configmaps", func(ctx context.Context) error {
		_, err := robot.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
		return err
	})

	// A token of another audience is not for the API.
	other := createToken(t, s, "robot", "--audience", "vault")
	if _, err := whoami(ctx(t), tokenClient(t, s, other)); !apierrors.IsUnauthorized(err) {
		t.Errorf("token for audience vault: want 401, got %v", err)
	}

	// Too short a duration is refused as kube refuses it.
	if _, stderr, err := testkit.RunKubectl(t, s.Kubeconfig, nil, "create", "token", "robot", "--duration", "5m"); err == nil ||
		!strings.Contains(stderr, "may not specify a duration less than 10 minutes") {
		t.Errorf("5m token: %v: %s", err, stderr)
	}
	// No token for a service account that does not exist.
	if _, stderr, err := testkit.RunKubectl(t, s.Kubeconfig, nil, "create", "token", "ghost"); err == nil || !strings.Contains(stderr, "not found") {
		t.Errorf("token for a missing service account: %v: %s", err, stderr)
	}

	if err := admin.CoreV1().ServiceAccounts("default").Delete(ctx(t), "robot", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The authenticator reads the watch cache, as kube's reads informers:
	// a deletion reaches it a moment later.
	eventually(t, "401 after deleting the service account", func(ctx context.Context) error { return wantUnauthorized(ctx, robot) })
	// A new service account of the same name has another UID.
	createSA(t, admin, "default", "robot")
	time.Sleep(200 * time.Millisecond)
	if err := wantUnauthorized(ctx(t), robot); err != nil {
		t.Errorf("after recreating the service account: %v", err)
	}
}

// wantUnauthorized is nil when c gets 401.
func wantUnauthorized(ctx context.Context, c kubernetes.Interface) error {
	if _, err := whoami(ctx, c); !apierrors.IsUnauthorized(err) {
		return fmt.Errorf("want 401, got %v", err)
	}
	return nil
}
