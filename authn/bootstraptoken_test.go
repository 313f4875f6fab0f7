package authn

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func bootstrapSecret(edit func(*corev1.Secret)) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: "kube-system"},
		Type:       "bootstrap.kubernetes.io/token",
		Data: map[string][]byte{
			"token-id": []byte("abcdef"), "token-secret": []byte("0123456789abcdef"),
			"usage-bootstrap-authentication": []byte("true"), "expiration": []byte("2030-01-01T00:00:00Z"),
		},
	}
	if edit != nil {
		edit(s)
	}
	return s
}

func TestBootstrapToken(t *testing.T) {
	now := func() time.Time { return time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC) }
	const token = "abcdef.0123456789abcdef"
	tests := []struct {
		name    string
		secret  *corev1.Secret
		getErr  error
		token   string
		want    *User
		wantErr bool
	}{
		{name: "valid", secret: bootstrapSecret(nil), token: token,
			want: &User{Name: "system:bootstrap:abcdef", Groups: []string{"system:bootstrappers"}}},
		{name: "extra groups", secret: bootstrapSecret(func(s *corev1.Secret) {
			s.Data["auth-extra-groups"] = []byte("system:bootstrappers:worker,system:bootstrappers:kubeadm:default-node-token")
		}), token: token, want: &User{Name: "system:bootstrap:abcdef",
			Groups: []string{"system:bootstrappers", "system:bootstrappers:kubeadm:default-node-token", "system:bootstrappers:worker"}}},
		{name: "no expiration", secret: bootstrapSecret(func(s *corev1.Secret) { delete(s.Data, "expiration") }), token: token,
			want: &User{Name: "system:bootstrap:abcdef", Groups: []string{"system:bootstrappers"}}},
		{name: "expired", secret: bootstrapSecret(func(s *corev1.Secret) { s.Data["expiration"] = []byte("2028-12-31T23:59:59Z") }), token: token},
		{name: "unreadable expiration counts as expired", secret: bootstrapSecret(func(s *corev1.Secret) { s.Data["expiration"] = []byte("tomorrow") }), token: token},
		{name: "wrong secret", secret: bootstrapSecret(nil), token: "abcdef.0123456789abcdee"},
		{name: "malformed: upper case", secret: bootstrapSecret(nil), token: "ABCDEF.0123456789abcdef"},
		{name: "malformed: short secret", secret: bootstrapSecret(nil), token: "abcdef.0123456789"},
		{name: "malformed: no dot", secret: bootstrapSecret(nil), token: "abcdef0123456789abcdef"},
		{name: "no secret", token: token},
		{name: "wrong type", secret: bootstrapSecret(func(s *corev1.Secret) { s.Type = corev1.SecretTypeOpaque }), token: token},
		{name: "token-id differs", secret: bootstrapSecret(func(s *corev1.Secret) { s.Data["token-id"] = []byte("zzzzzz") }), token: token},
		{name: "not for authentication", secret: bootstrapSecret(func(s *corev1.Secret) { delete(s.Data, "usage-bootstrap-authentication") }), token: token},
		{name: "being deleted", secret: bootstrapSecret(func(s *corev1.Secret) { s.DeletionTimestamp = &metav1.Time{Time: now()} }), token: token},
		{name: "bad extra group", secret: bootstrapSecret(func(s *corev1.Secret) { s.Data["auth-extra-groups"] = []byte("system:masters") }), token: token},
		{name: "store failure", getErr: errors.New("etcd is down"), token: token, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			get := func(_ context.Context, name string) (*corev1.Secret, error) {
				if tt.getErr != nil {
					return nil, tt.getErr
				}
				if tt.secret == nil || tt.secret.Name != name {
					return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
				}
				return tt.secret, nil
			}
			resp, ok, err := NewBootstrapToken(get, nil, now).AuthenticateToken(context.Background(), tt.token)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			if ok != (tt.want != nil) {
				t.Fatalf("ok = %v", ok)
			}
			if ok && !reflect.DeepEqual(resp.User, tt.want) {
				t.Errorf("user = %+v, want %+v", resp.User, tt.want)
			}
		})
	}
}
