package auth

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/keyutil"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/controlplane"
	"github.com/capstan-io/capstan/internal/testkit"
)

// tokenWebhook is a TokenReview webhook over HTTPS: "hook-alice" is alice,
// "hook-denied" is refused with an error, "hook-broken" answers 500.
type tokenWebhook struct {
	*httptest.Server
	calls atomic.Int32
}

func newTokenWebhook(t *testing.T) *tokenWebhook {
	w := &tokenWebhook{}
	w.Server = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.calls.Add(1)
		var review authenticationv1.TokenReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.APIVersion != "authentication.k8s.io/v1" {
			http.Error(rw, fmt.Sprintf("bad review %s: %v", review.APIVersion, err), http.StatusBadRequest)
			return
		}
		out := authenticationv1.TokenReview{TypeMeta: review.TypeMeta}
		switch review.Spec.Token {
		case "hook-alice":
			out.Status = authenticationv1.TokenReviewStatus{Authenticated: true,
				User: authenticationv1.UserInfo{Username: "alice", UID: "alice-uid", Groups: []string{"hook-users"}}}
		case "hook-denied":
			out.Status = authenticationv1.TokenReviewStatus{Error: "token revoked"}
		case "hook-broken":
			http.Error(rw, "broken", http.StatusInternalServerError)
			return
		}
		json.NewEncoder(rw).Encode(out)
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *tokenWebhook) kubeconfig(t *testing.T) string {
	return testkit.WebhookKubeconfig(t, t.TempDir(), "webhook.kubeconfig", w.URL+"/authenticate", testkit.CertificatePEM(w.Server))
}

// TestTokenAuthenticators: bootstrap tokens, secret-based service account
// tokens and a token webhook, end to end with client-go.
func TestTokenAuthenticators(t *testing.T) {
	hook := newTokenWebhook(t)
	s := testkit.StartServer(t, "--enable-bootstrap-token-auth",
		"--authentication-token-webhook-config-file", hook.kubeconfig(t), "--authentication-token-webhook-version", "v1")
	admin := s.Client(t)
	t.Run("bootstrap", func(t *testing.T) { testBootstrapTokens(t, s, admin) })
	t.Run("legacy service account", func(t *testing.T) { testLegacyServiceAccountTokens(t, s, admin) })
	t.Run("webhook", func(t *testing.T) { testTokenWebhook(t, s, hook) })
}

func testBootstrapTokens(t *testing.T, s *testkit.Server, admin kubernetes.Interface) {
	secret := func(id, secret, expiration string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"},
			Type: "bootstrap.kubernetes.io/token",
			StringData: map[string]string{"token-id": id, "token-secret": secret, "expiration": expiration,
				"usage-bootstrap-authentication": "true", "auth-extra-groups": "system:bootstrappers:worker"}}
	}
	for _, sec := range []*corev1.Secret{
		secret("abcdef", "0123456789abcdef", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)),
		secret("expird", "0123456789abcdef", time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)),
	} {
		if _, err := admin.CoreV1().Secrets("kube-system").Create(ctx(t), sec, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var got authenticationv1.UserInfo
	eventually(t, "the bootstrap token authenticates", func(ctx context.Context) (err error) {
		got, err = whoami(ctx, tokenClient(t, s, "abcdef.0123456789abcdef"))
		return err
	})
	if got.Username != "system:bootstrap:abcdef" || !slices.Equal(got.Groups, []string{"system:bootstrappers", "system:bootstrappers:worker", "system:authenticated"}) {
		t.Errorf("bootstrap user: %+v", got)
	}
	for name, token := range map[string]string{
		"expired":      "expird.0123456789abcdef",
		"wrong secret": "abcdef.0123456789abcdee",
		"malformed":    "abcdef.0123456789",
		"unknown id":   "zzzzzz.0123456789abcdef",
	} {
		if _, err := whoami(ctx(t), tokenClient(t, s, token)); !apierrors.IsUnauthorized(err) {
			t.Errorf("%s bootstrap token: want 401, got %v", name, err)
		}
	}
}

// legacyToken signs the token kube-controller-manager's tokens controller
// would put in the secret, with the server's service account key.
func legacyToken(t *testing.T, s *testkit.Server, sa *corev1.ServiceAccount, secretName string) string {
	t.Helper()
	key, err := keyutil.PrivateKeyFromFile(filepath.Join(s.DataDir, "pki", controlplane.ServiceAccountKeyName))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := authn.NewTokenSigner(authn.LegacyIssuer, key.(crypto.Signer))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := signer.Sign(&jwt.Claims{Subject: authn.ServiceAccountUsername(sa.Namespace, sa.Name)}, authn.LegacyClaims{
		Namespace: sa.Namespace, ServiceAccountName: sa.Name, ServiceAccountUID: string(sa.UID), SecretName: secretName})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func testLegacyServiceAccountTokens(t *testing.T, s *testkit.Server, admin kubernetes.Interface) {
	sa := createSA(t, admin, "default", "legacy")
	token := legacyToken(t, s, sa, "legacy-token")
	_, err := admin.CoreV1().Secrets("default").Create(ctx(t), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy-token", Annotations: map[string]string{corev1.ServiceAccountNameKey: "legacy"}},
		Type:       corev1.SecretTypeServiceAccountToken, Data: map[string][]byte{"token": []byte(token)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got authenticationv1.UserInfo
	eventually(t, "the legacy token authenticates", func(ctx context.Context) (err error) {
		got, err = whoami(ctx, tokenClient(t, s, token))
		return err
	})
	if got.Username != "system:serviceaccount:default:legacy" || got.UID != string(sa.UID) ||
		!slices.Equal(got.Groups, []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}) {
		t.Errorf("legacy token user: %+v", got)
	}
	today := time.Now().UTC().Format(time.DateOnly)
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	eventually(t, "the secret is labelled with the day of use", func(ctx context.Context) error {
		sec, err := admin.CoreV1().Secrets("default").Get(ctx, "legacy-token", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if l := sec.Labels[authn.LegacyTokenLastUsedLabel]; l != today && l != tomorrow {
			return fmt.Errorf("labels %v", sec.Labels)
		}
		return nil
	})

	// A token of the right key and claims that is not the secret's.
	other := legacyToken(t, s, sa, "legacy-token") + "x"
	if _, err := whoami(ctx(t), tokenClient(t, s, other)); !apierrors.IsUnauthorized(err) {
		t.Errorf("a token not in the secret: want 401, got %v", err)
	}
	if err := admin.CoreV1().Secrets("default").Delete(ctx(t), "legacy-token", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "401 once the secret is deleted", func(ctx context.Context) error { return wantUnauthorized(ctx, tokenClient(t, s, token)) })
}

func testTokenWebhook(t *testing.T, s *testkit.Server, hook *tokenWebhook) {
	got, err := whoami(ctx(t), tokenClient(t, s, "hook-alice"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Username != "alice" || got.UID != "alice-uid" || !slices.Equal(got.Groups, []string{"hook-users", "system:authenticated"}) {
		t.Errorf("webhook user: %+v", got)
	}
	// Answers are cached: a second request within the TTL asks nobody.
	before := hook.calls.Load()
	if _, err := whoami(ctx(t), tokenClient(t, s, "hook-alice")); err != nil {
		t.Fatal(err)
	}
	if after := hook.calls.Load(); after != before {
		t.Errorf("the webhook was asked again (%d calls, then %d)", before, after)
	}
	for _, token := range []string{"hook-denied", "hook-unknown", "hook-broken"} {
		if _, err := whoami(ctx(t), tokenClient(t, s, token)); !apierrors.IsUnauthorized(err) {
			t.Errorf("%s: want 401, got %v", token, err)
		}
	}
	// A broken webhook is asked again, with backoff, before giving up.
	before = hook.calls.Load()
	if _, err := whoami(ctx(t), tokenClient(t, s, "hook-broken")); !apierrors.IsUnauthorized(err) {
		t.Errorf("hook-broken: want 401, got %v", err)
	}
	if n := hook.calls.Load() - before; n < 2 {
		t.Errorf("a failing webhook was called %d times, want retries", n)
	}
	// TokenReview goes through the same authenticators.
	r, err := s.Client(t).AuthenticationV1().TokenReviews().Create(ctx(t), &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: "hook-denied"}}, metav1.CreateOptions{})
	if err != nil || r.Status.Authenticated || !strings.Contains(r.Status.Error, "token revoked") {
		t.Errorf("review of a denied token: %v %+v", err, r)
	}
}

// TestAnonymousDisabled: with --anonymous-auth=false a request without
// credentials gets 401, even on the public paths, as in kube.
func TestAnonymousDisabled(t *testing.T) {
	s := testkit.StartServer(t, "--anonymous-auth=false")
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: insecureTLS()}}
	for _, path := range []string{"/healthz", "/version", "/api"} {
		resp, err := client.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s: %d, want 401", path, resp.StatusCode)
		}
	}
}
