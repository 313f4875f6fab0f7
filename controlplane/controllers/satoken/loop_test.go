package satoken_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/controlplane/controllers/satoken"
	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

const (
	ns     = "tokens"
	rootCA = "-----BEGIN CERTIFICATE-----\nsatoken test\n-----END CERTIFICATE-----\n"
)

// TestLoop runs the loop on a server whose own is off: a token secret of
// an account is filled, and given back what it loses; one of an account
// that does not exist, or no longer, or was made again, is deleted.
func TestLoop(t *testing.T) {
	s := testkit.StartServer(t, "--controllers=")
	cfg := rest.CopyConfig(s.Config)
	cfg.QPS = -1
	client := kubernetes.NewForConfigOrDie(cfg)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := authn.NewTokenSigner(authn.LegacyIssuer, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := satoken.New(satoken.Config{Client: kubernetes.NewForConfigOrDie(cfg), Signer: signer, RootCA: []byte(rootCA),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx, 1) }()
	defer func() { cancel(); <-done }()

	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "builder"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secrets := client.CoreV1().Secrets(ns)
	tokenSecret(t, client, "builder-token", "builder", "")
	filled := func(ctx context.Context) (bool, error) {
		s, err := secrets.Get(ctx, "builder-token", metav1.GetOptions{})
		return err == nil && len(s.Data["token"]) > 0 && string(s.Data["ca.crt"]) == rootCA, err
	}
	eventually(t, "the secret filled", filled)
	secret, err := secrets.Get(ctx, "builder-token", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(secret.Data["namespace"]) != ns || secret.Annotations[corev1.ServiceAccountUIDKey] != string(sa.UID) {
		t.Errorf("namespace %q, account UID %q; want %s, %s", secret.Data["namespace"], secret.Annotations[corev1.ServiceAccountUIDKey], ns, sa.UID)
	}
	verify(t, key, string(secret.Data["token"]), authn.LegacyClaims{ServiceAccountName: "builder", ServiceAccountUID: string(sa.UID),
		SecretName: "builder-token", Namespace: ns})

	// The CA taken out comes back; the token stays the one signed.
	token := secret.Data["token"]
	delete(secret.Data, "ca.crt")
	if _, err := secrets.Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the CA given back", filled)
	if secret, err = secrets.Get(ctx, "builder-token", metav1.GetOptions{}); err != nil || !bytes.Equal(secret.Data["token"], token) {
		t.Errorf("the token changed when the CA came back (%v)", err)
	}

	tokenSecret(t, client, "ghost-token", "ghost", "")
	gone(t, client, "ghost-token")
	tokenSecret(t, client, "recreated-token", "builder", "uid-of-an-older-builder")
	gone(t, client, "recreated-token")
	if err := client.CoreV1().ServiceAccounts(ns).Delete(ctx, "builder", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone(t, client, "builder-token")
}

// tokenSecret makes a token secret of the account, of the account's UID
// if uid is set.
func tokenSecret(t *testing.T, client kubernetes.Interface, name, account, uid string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{corev1.ServiceAccountNameKey: account}},
		Type: corev1.SecretTypeServiceAccountToken}
	if uid != "" {
		s.Annotations[corev1.ServiceAccountUIDKey] = uid
	}
	if _, err := client.CoreV1().Secrets(ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// verify checks the token's signature and claims.
func verify(t *testing.T, key *ecdsa.PrivateKey, token string, want authn.LegacyClaims) {
	t.Helper()
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	var public jwt.Claims
	var private authn.LegacyClaims
	if err := tok.Claims(&key.PublicKey, &public, &private); err != nil {
		t.Fatalf("the token does not verify: %v", err)
	}
	if public.Issuer != "kubernetes/serviceaccount" || public.Subject != "system:serviceaccount:tokens:builder" || private != want {
		t.Errorf("claims iss %q sub %q %+v; want kubernetes/serviceaccount, system:serviceaccount:tokens:builder, %+v",
			public.Issuer, public.Subject, private, want)
	}
}

func gone(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	eventually(t, name+" deleted", func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

func eventually(t *testing.T, what string, cond wait.ConditionWithContextFunc) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
