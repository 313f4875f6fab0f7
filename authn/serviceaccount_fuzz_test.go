package authn

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzServiceAccountToken: any bearer token, and any claims signed with
// the server's own key, are refused or name the one service account that
// exists, with its UID, within the token's lifetime. A token cannot
// become another user by its claims alone.
func FuzzServiceAccountToken(f *testing.F) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	kid, err := KeyID(key.Public())
	if err != nil {
		f.Fatal(err)
	}
	now := time.Now()
	for _, claims := range []string{
		`{"iss":"https://iss","aud":["https://iss"],"sub":"system:serviceaccount:ns:sa","kubernetes.io":{"namespace":"ns","serviceaccount":{"name":"sa","uid":"sa-uid"}}}`,
		`{"iss":"https://iss","aud":"https://iss","sub":"system:serviceaccount:ns:sa","kubernetes.io":{"namespace":"ns","serviceaccount":{"name":"sa","uid":"sa-uid"},"pod":{"name":"p","uid":"pod-uid"}}}`,
		`{"iss":"https://iss","sub":"system:serviceaccount:kube-system:admin","kubernetes.io":{"namespace":"kube-system","serviceaccount":{"name":"admin","uid":"x"}}}`,
		`{"iss":"https://iss","aud":["https://iss"],"sub":"system:serviceaccount:ns:sa","exp":1,"kubernetes.io":{"namespace":"ns","serviceaccount":{"name":"sa","uid":"sa-uid"}}}`,
		`{"iss":"https://iss","kubernetes.io/serviceaccount/namespace":"ns","kubernetes.io/serviceaccount/service-account.name":"sa"}`,
		`{"iss":"https://iss","nbf":1e30,"exp":-1,"kubernetes.io":{"warnafter":"x"}}`,
	} {
		f.Add("", []byte(claims))
	}
	f.Add("eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL2lzcyJ9.", []byte(nil))
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sa", UID: "sa-uid"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "pod-uid"}}
	g := fakeGetter{sas: map[string]*corev1.ServiceAccount{"ns/sa": sa}, pods: map[string]*corev1.Pod{"ns/p": pod}}
	auth, err := NewServiceAccountToken(ServiceAccountTokenOptions{Issuers: []string{"https://iss"},
		Keys: []crypto.PublicKey{key.Public()}, ImplicitAudiences: []string{"https://iss"}, Getter: g, Now: func() time.Time { return now }})
	if err != nil {
		f.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, token string, claims []byte) {
		check := func(token string) {
			resp, ok, err := auth.AuthenticateToken(context.Background(), token)
			if !ok {
				return
			}
			if err != nil || resp.User.Name != "system:serviceaccount:ns:sa" || resp.User.UID != "sa-uid" {
				t.Fatalf("token %q accepted as %+v (%v)", token, resp.User, err)
			}
			var c struct{ Exp, Nbf *float64 }
			if json.Unmarshal(claims, &c) == nil && (c.Exp != nil && *c.Exp < float64(now.Unix()-60) || c.Nbf != nil && *c.Nbf > float64(now.Unix()+60)) {
				t.Fatalf("claims %s accepted outside their lifetime", claims)
			}
		}
		check(token)
		if len(claims) == 0 {
			return
		}
		signed, err := signer.Sign(claims)
		if err != nil {
			return
		}
		compact, err := signed.CompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		check(compact)
	})
}
