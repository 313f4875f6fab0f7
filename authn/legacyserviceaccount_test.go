package authn

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type legacyGetter struct {
	sa     *corev1.ServiceAccount
	secret *corev1.Secret
}

func (g legacyGetter) GetServiceAccount(_ context.Context, _, name string) (*corev1.ServiceAccount, error) {
	if g.sa == nil || g.sa.Name != name {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccounts"}, name)
	}
	return g.sa, nil
}

func (g legacyGetter) GetPod(_ context.Context, _, name string) (*corev1.Pod, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
}

func (g legacyGetter) GetSecret(_ context.Context, _, name string) (*corev1.Secret, error) {
	if g.secret == nil || g.secret.Name != name {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	}
	return g.secret, nil
}

// legacyToken signs a secret-based token of issuer with key.
func legacyToken(t *testing.T, key crypto.Signer, issuer, sub string, claims LegacyClaims) string {
	t.Helper()
	s, err := NewTokenSigner(issuer, key)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.Sign(&jwt.Claims{Subject: sub}, claims)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestLegacyServiceAccountToken(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	claims := LegacyClaims{ServiceAccountName: "robot", ServiceAccountUID: "sa-uid", SecretName: "robot-token", Namespace: "ns"}
	const sub = "system:serviceaccount:ns:robot"
	good := legacyToken(t, key, LegacyIssuer, sub, claims)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", Namespace: "ns", UID: "sa-uid"}}
	secret := func(token string, edit ...func(*corev1.Secret)) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "robot-token", Namespace: "ns", UID: "secret-uid"},
			Type: corev1.SecretTypeServiceAccountToken, Data: map[string][]byte{"token": []byte(token)}}
		for _, e := range edit {
			e(s)
		}
		return s
	}
	day := time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		token    string
		getter   legacyGetter
		want     *User
		noOp     bool
		wantErr  string
		wantMark bool
	}{
		{name: "valid", token: good, getter: legacyGetter{sa, secret(good)}, wantMark: true,
			want: &User{Name: sub, UID: "sa-uid", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns"}}},
		{name: "used today: no relabel", token: good, getter: legacyGetter{sa, secret(good, func(s *corev1.Secret) {
			s.Labels = map[string]string{LegacyTokenLastUsedLabel: "2026-11-30"}
		})}, want: &User{Name: sub, UID: "sa-uid", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns"}}},
		{name: "used tomorrow (another server's clock): no relabel", token: good, getter: legacyGetter{sa, secret(good, func(s *corev1.Secret) {
			s.Labels = map[string]string{LegacyTokenLastUsedLabel: "2026-12-01"}
		})}, want: &User{Name: sub, UID: "sa-uid", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns"}}},
		{name: "secret deleted", token: good, getter: legacyGetter{sa, nil}, wantErr: "Token has been invalidated"},
		{name: "secret being deleted", token: good, getter: legacyGetter{sa, secret(good, func(s *corev1.Secret) { s.DeletionTimestamp = &metav1.Time{Time: day} })},
			wantErr: "Token has been invalidated"},
		{name: "secret holds another token", token: good, getter: legacyGetter{sa, secret("other")}, wantErr: "Token does not match server's copy"},
		{name: "service account deleted", token: good, getter: legacyGetter{nil, secret(good)}, wantErr: "not found"},
		{name: "service account recreated", token: good, getter: legacyGetter{&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot", UID: "new"}}, secret(good)},
			wantErr: "ServiceAccount UID (new) does not match claim (sa-uid)"},
		{name: "marked invalid", token: good, getter: legacyGetter{sa, secret(good, func(s *corev1.Secret) {
			s.Labels = map[string]string{LegacyTokenInvalidSinceLabel: "2026-01-01"}
		})}, wantErr: "the token in secret ns/robot-token for service account ns/robot has been marked invalid", wantMark: true},
		{name: "signed by another key", token: legacyToken(t, other, LegacyIssuer, sub, claims), getter: legacyGetter{sa, secret(good)}, wantErr: "invalid signature"},
		{name: "bound token issuer: no opinion", token: legacyToken(t, key, "https://issuer", sub, claims), getter: legacyGetter{sa, secret(good)}, noOp: true},
		{name: "not a JWT: no opinion", token: "abcdef.0123456789abcdef", noOp: true},
		{name: "missing secret claim", token: legacyToken(t, key, LegacyIssuer, sub, LegacyClaims{ServiceAccountName: "robot", ServiceAccountUID: "sa-uid", Namespace: "ns"}),
			wantErr: "secretName claim is missing"},
		{name: "sub of another account", token: legacyToken(t, key, LegacyIssuer, "system:serviceaccount:ns:other", claims), wantErr: "sub claim is invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var marked string
			a, err := NewLegacyServiceAccountToken(LegacyServiceAccountTokenOptions{
				Keys: []crypto.PublicKey{key.Public()}, Getter: tt.getter, Now: func() time.Time { return day },
				MarkUsed: func(_ context.Context, s *corev1.Secret, today string) error { marked = today; return nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			resp, ok, err := a.AuthenticateToken(context.Background(), tt.token)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case tt.noOp && ok:
				t.Fatal("want no opinion")
			case tt.want != nil && (!ok || !reflect.DeepEqual(resp.User, tt.want)):
				t.Errorf("got %v %+v, want %+v", ok, resp, tt.want)
			}
			if (marked != "") != tt.wantMark || (tt.wantMark && marked != "2026-11-30") {
				t.Errorf("marked %q, want marked: %v", marked, tt.wantMark)
			}
		})
	}
}
