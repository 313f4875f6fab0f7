package authn

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"github.com/go-jose/go-jose/v4/jwt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type fakeGetter struct {
	sas  map[string]*corev1.ServiceAccount
	pods map[string]*corev1.Pod
}

func (g fakeGetter) GetServiceAccount(_ context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	if sa, ok := g.sas[ns+"/"+name]; ok {
		return sa, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccounts"}, name)
}

func (g fakeGetter) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	if p, ok := g.pods[ns+"/"+name]; ok {
		return p, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
}

func (g fakeGetter) GetSecret(_ context.Context, _, name string) (*corev1.Secret, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func TestServiceAccountToken(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sa", UID: "sa-uid"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "pod-uid"}}
	g := fakeGetter{sas: map[string]*corev1.ServiceAccount{"ns/sa": sa}, pods: map[string]*corev1.Pod{"ns/p": pod}}
	auth, err := NewServiceAccountToken(ServiceAccountTokenOptions{
		Issuers: []string{"https://iss", "https://old"}, Keys: []crypto.PublicKey{ec.Public(), rk.Public()},
		ImplicitAudiences: []string{"https://iss"}, Getter: g})
	if err != nil {
		t.Fatal(err)
	}
	mint := func(key crypto.Signer, iss string, b TokenBinding, exp time.Duration, auds ...string) string {
		t.Helper()
		s, err := NewTokenSigner(iss, key)
		if err != nil {
			t.Fatal(err)
		}
		pub, priv := ServiceAccountClaimsFor(sa, b, time.Now(), exp, auds)
		tok, err := s.Sign(pub, priv)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	ctx := context.Background()

	resp, ok, err := auth.AuthenticateToken(ctx, mint(ec, "https://iss", TokenBinding{Pod: pod}, time.Hour, "https://iss"))
	if err != nil || !ok {
		t.Fatalf("good token: %v %v", ok, err)
	}
	u := resp.User
	if u.Name != "system:serviceaccount:ns:sa" || u.UID != "sa-uid" || len(u.Groups) != 2 || u.Extra[PodNameKey][0] != "p" ||
		u.Extra[PodUIDKey][0] != "pod-uid" || !strings.HasPrefix(u.Extra[CredentialIDKey][0], "JTI=") {
		t.Errorf("user %+v", u)
	}
	if _, ok, err := auth.AuthenticateToken(ctx, mint(rk, "https://old", TokenBinding{}, time.Hour, "https://iss")); !ok || err != nil {
		t.Errorf("RSA token of the old issuer: %v %v", ok, err)
	}
	for name, tc := range map[string]struct {
		token string
		want  string // "" for no opinion
	}{
		"other issuer":  {mint(ec, "https://else", TokenBinding{}, time.Hour, "https://iss"), ""},
		"not a JWT":     {"abc", ""},
		"expired":       {mint(ec, "https://iss", TokenBinding{}, -2*time.Minute, "https://iss"), "has expired"},
		"audience":      {mint(ec, "https://iss", TokenBinding{}, time.Hour, "vault"), "token audiences"},
		"pod gone":      {mint(ec, "https://iss", TokenBinding{Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gone", UID: "x"}}}, time.Hour, "https://iss"), "invalidated"},
		"pod recreated": {mint(ec, "https://iss", TokenBinding{Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "old"}}}, time.Hour, "https://iss"), "does not match"},
	} {
		_, ok, err := auth.AuthenticateToken(ctx, tc.token)
		if ok || (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: ok %v err %v, want %q", name, ok, err, tc.want)
		}
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if _, ok, err := auth.AuthenticateToken(ctx, mint(other, "https://iss", TokenBinding{}, time.Hour, "https://iss")); ok || err == nil {
		t.Errorf("unknown key: %v %v", ok, err)
	}
	delete(g.sas, "ns/sa")
	if _, ok, err := auth.AuthenticateToken(ctx, mint(ec, "https://iss", TokenBinding{}, time.Hour, "https://iss")); ok || !apierrors.IsNotFound(err) {
		t.Errorf("deleted service account: %v %v", ok, err)
	}
}

// TestStaleTokenAnnotated: a token used past its warnafter claim (an
// extended one) is accepted and annotated for the audit log, as kube
// records the uses clients should have refreshed.
func TestStaleTokenAnnotated(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sa", UID: "sa-uid"}}
	g := fakeGetter{sas: map[string]*corev1.ServiceAccount{"ns/sa": sa}}
	issued := time.Now().Add(-2 * time.Hour)
	later := issued.Add(3607*time.Second + 93*time.Second)
	auth, err := NewServiceAccountToken(ServiceAccountTokenOptions{Issuers: []string{"https://iss"}, Keys: []crypto.PublicKey{key.Public()},
		ImplicitAudiences: []string{"https://iss"}, Getter: g, Now: func() time.Time { return later }})
	if err != nil {
		t.Fatal(err)
	}
	signer, err := NewTokenSigner("https://iss", key)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		warnAfter *jwt.NumericDate
		want      string
	}{
		{"past warnafter", jwt.NewNumericDate(issued.Add(3607 * time.Second)), "subject: system:serviceaccount:ns:sa, seconds after warning threshold: 93"},
		{"before warnafter", jwt.NewNumericDate(later.Add(time.Minute)), ""},
		{"no warnafter", nil, ""},
	} {
		pub, priv := ServiceAccountClaimsFor(sa, TokenBinding{}, issued, 365*24*time.Hour, []string{"https://iss"})
		priv.Kubernetes.WarnAfter = tc.warnAfter
		tok, err := signer.Sign(pub, priv)
		if err != nil {
			t.Fatal(err)
		}
		resp, ok, err := auth.AuthenticateToken(context.Background(), tok)
		if !ok || err != nil {
			t.Fatalf("%s: %v %v", tc.name, ok, err)
		}
		if got := resp.AuditAnnotations["authentication.k8s.io/stale-token"]; got != tc.want {
			t.Errorf("%s: stale-token annotation %q, want %q", tc.name, got, tc.want)
		}
	}
}
