package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/keyutil"

	"github.com/capstan-io/capstan/internal/testkit"
)

// TestPodBoundToken: a token bound to a pod carries the pod's name and UID
// and stops working when the pod is deleted.
func TestPodBoundToken(t *testing.T) {
	s := testkit.StartServer(t)
	admin := s.Client(t)
	createSA(t, admin, "default", "worker")
	pod, err := admin.CoreV1().Pods("default").Create(ctx(t), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec: corev1.PodSpec{ServiceAccountName: "worker", NodeName: "node-1",
			Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := createToken(t, s, "worker", "--bound-object-kind", "Pod", "--bound-object-name", "p")
	k8s, _ := claimsOf(t, token)["kubernetes.io"].(map[string]any)
	if ref, _ := k8s["pod"].(map[string]any); ref["name"] != "p" || ref["uid"] != string(pod.UID) {
		t.Errorf("pod claim: %v", k8s)
	}
	if ref, _ := k8s["node"].(map[string]any); ref["name"] != "node-1" {
		t.Errorf("node claim: %v", k8s)
	}
	worker := tokenClient(t, s, token)
	u, err := whoami(ctx(t), worker)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Extra["authentication.kubernetes.io/pod-name"]; !slices.Equal(got, []string{"p"}) {
		t.Errorf("extra: %v", u.Extra)
	}
	if got := u.Extra["authentication.kubernetes.io/pod-uid"]; !slices.Equal(got, []string{string(pod.UID)}) {
		t.Errorf("extra: %v", u.Extra)
	}
	if got := u.Extra["authentication.kubernetes.io/node-name"]; !slices.Equal(got, []string{"node-1"}) {
		t.Errorf("extra: %v", u.Extra)
	}

	// Binding to a pod of another service account, or to a missing pod, fails.
	createSA(t, admin, "default", "other")
	if _, stderr, err := testkit.RunKubectl(t, s.Kubeconfig, nil, "create", "token", "other", "--bound-object-kind", "Pod", "--bound-object-name", "p"); err == nil ||
		!strings.Contains(stderr, "different serviceaccount name") {
		t.Errorf("other service account: %v: %s", err, stderr)
	}
	if _, stderr, err := testkit.RunKubectl(t, s.Kubeconfig, nil, "create", "token", "worker", "--bound-object-kind", "Pod", "--bound-object-name", "nope"); err == nil ||
		!strings.Contains(stderr, "not found") {
		t.Errorf("missing pod: %v: %s", err, stderr)
	}

	zero := int64(0)
	if err := admin.CoreV1().Pods("default").Delete(ctx(t), "p", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "401 after deleting the pod", func(ctx context.Context) error { return wantUnauthorized(ctx, worker) })
}

// TestTokenReview reviews a good service account token, a static token, a
// bad token and a token of another audience.
func TestTokenReview(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens.csv")
	if err := os.WriteFile(file, []byte("static-tok,carol,uid-carol,admins\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testkit.StartServer(t, "--token-auth-file", file)
	admin := s.Client(t)
	sa := createSA(t, admin, "kube-system", "reviewer")
	token := createToken(t, s, "-n", "kube-system", "reviewer")

	review := func(token string, auds ...string) *authenticationv1.TokenReview {
		t.Helper()
		r, err := admin.AuthenticationV1().TokenReviews().Create(ctx(t), &authenticationv1.TokenReview{
			Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: auds}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := review(token)
	if !r.Status.Authenticated || r.Status.Error != "" || r.Status.User.Username != "system:serviceaccount:kube-system:reviewer" ||
		r.Status.User.UID != string(sa.UID) || !slices.Equal(r.Status.Audiences, []string{defaultIssuer}) ||
		!slices.Contains(r.Status.User.Groups, "system:authenticated") || !slices.Contains(r.Status.User.Groups, "system:serviceaccounts:kube-system") {
		t.Errorf("good token: %+v", r.Status)
	}
	r = review("static-tok")
	if !r.Status.Authenticated || r.Status.User.Username != "carol" || !slices.Equal(r.Status.User.Groups, []string{"admins", "system:authenticated"}) {
		t.Errorf("static token: %+v", r.Status)
	}
	r = review("not-a-token")
	if r.Status.Authenticated || r.Status.Error == "" || r.Status.User.Username != "" {
		t.Errorf("bad token: %+v", r.Status)
	}
	r = review(token, "vault")
	if r.Status.Authenticated || !strings.Contains(r.Status.Error, "token audiences") {
		t.Errorf("token of the API reviewed for vault: %+v", r.Status)
	}
	vault := createToken(t, s, "-n", "kube-system", "reviewer", "--audience", "vault")
	r = review(vault, "vault")
	if !r.Status.Authenticated || !slices.Equal(r.Status.Audiences, []string{"vault"}) {
		t.Errorf("vault token for vault: %+v", r.Status)
	}
	if _, err := admin.AuthenticationV1().TokenReviews().Create(ctx(t), &authenticationv1.TokenReview{}, metav1.CreateOptions{}); !apierrors.IsBadRequest(err) {
		t.Errorf("empty token: want 400, got %v", err)
	}
	// Non-admins may not review tokens.
	if _, err := tokenClient(t, s, token).AuthenticationV1().TokenReviews().Create(ctx(t), &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("review by a service account: want 403, got %v", err)
	}
}

// TestServiceAccountIssuerDiscovery: the discovery document names the
// issuer and the JWKS, whose key verifies the tokens; tokens signed with a
// given --service-account-signing-key-file and expired are refused.
func TestServiceAccountIssuerDiscovery(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "sa.key")
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	const issuer = "https://issuer.example.com"
	s := testkit.StartServer(t, "--service-account-signing-key-file", keyFile, "--service-account-issuer", issuer,
		"--service-account-max-token-expiration", "2h")
	admin := s.Client(t)
	sa := createSA(t, admin, "default", "robot")
	token := createToken(t, s, "robot", "--duration", "10h")
	if c := claimsOf(t, token); c["exp"].(float64)-c["iat"].(float64) != 7200 || c["iss"] != issuer {
		t.Errorf("max expiration: %v", c)
	}

	robot := tokenClient(t, s, token)
	raw, err := robot.CoreV1().RESTClient().Get().AbsPath("/.well-known/openid-configuration").DoRaw(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Issuer  string   `json:"issuer"`
		JWKSURI string   `json:"jwks_uri"`
		Algs    []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Issuer != issuer || !strings.HasSuffix(doc.JWKSURI, "/openid/v1/jwks") || !slices.Equal(doc.Algs, []string{"ES256"}) {
		t.Errorf("discovery: %s", raw)
	}
	raw, err = robot.CoreV1().RESTClient().Get().AbsPath("/openid/v1/jwks").DoRaw(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	keys := set.Key(parsed.Headers[0].KeyID)
	if len(keys) != 1 || keys[0].Use != "sig" {
		t.Fatalf("jwks %s has no key %q", raw, parsed.Headers[0].KeyID)
	}
	var claims jwt.Claims
	if err := parsed.Claims(keys[0].Key, &claims); err != nil {
		t.Errorf("the JWKS key does not verify the token: %v", err)
	}
	if claims.Subject != "system:serviceaccount:default:robot" {
		t.Errorf("sub %q", claims.Subject)
	}

	// A token signed with the same key that has expired is refused; one
	// still valid works.
	sign := func(exp time.Time) string {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: parsed.Headers[0].KeyID}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		iat := exp.Add(-time.Hour)
		tok, err := jwt.Signed(signer).Claims(jwt.Claims{Issuer: issuer, Subject: "system:serviceaccount:default:robot",
			Audience: jwt.Audience{issuer}, IssuedAt: jwt.NewNumericDate(iat), NotBefore: jwt.NewNumericDate(iat), Expiry: jwt.NewNumericDate(exp)}).
			Claims(map[string]any{"kubernetes.io": map[string]any{"namespace": "default",
				"serviceaccount": map[string]any{"name": "robot", "uid": string(sa.UID)}}}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	if _, err := whoami(ctx(t), tokenClient(t, s, sign(time.Now().Add(10*time.Minute)))); err != nil {
		t.Errorf("valid hand-made token: %v", err)
	}
	expired := sign(time.Now().Add(-2 * time.Minute))
	if err := wantUnauthorized(ctx(t), tokenClient(t, s, expired)); err != nil {
		t.Errorf("expired token: %v", err)
	}
	r, err := admin.AuthenticationV1().TokenReviews().Create(ctx(t), &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: expired}}, metav1.CreateOptions{})
	if err != nil || r.Status.Authenticated || !strings.Contains(r.Status.Error, "service account token has expired") {
		t.Errorf("review of an expired token: %v %+v", err, r)
	}
	// Anonymous users may not read the discovery documents.
	if _, err := tokenClient(t, s, "").CoreV1().RESTClient().Get().AbsPath("/openid/v1/jwks").DoRaw(ctx(t)); !apierrors.IsForbidden(err) {
		t.Errorf("anonymous jwks: want 403, got %v", err)
	}
}
