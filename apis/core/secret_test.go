package core

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestValidateSecret(t *testing.T) {
	big := []byte(strings.Repeat("x", MaxSecretSize/2+1))
	saAnnotation := map[string]string{corev1.ServiceAccountNameKey: "default"}
	tests := []struct {
		name        string
		typ         corev1.SecretType
		annotations map[string]string
		data        map[string][]byte
		want        []wantErr
	}{
		{"opaque", corev1.SecretTypeOpaque, nil, map[string][]byte{"a": {1}}, nil},
		{"unknown type", "example.com/custom", nil, nil, nil},
		{"bad key", corev1.SecretTypeOpaque, nil, map[string][]byte{"a/b": nil}, []wantErr{inv("data[a/b]")}},
		{"too big", corev1.SecretTypeOpaque, nil, map[string][]byte{"a": big, "b": big}, []wantErr{long("data")}},
		{"sa token", corev1.SecretTypeServiceAccountToken, saAnnotation, nil, nil},
		{"sa token without name", corev1.SecretTypeServiceAccountToken, nil, nil,
			[]wantErr{req("metadata.annotations[kubernetes.io/service-account.name]")}},
		{"dockercfg", corev1.SecretTypeDockercfg, nil, map[string][]byte{".dockercfg": []byte(`{"r":{}}`)}, nil},
		{"dockercfg missing", corev1.SecretTypeDockercfg, nil, nil, []wantErr{req("data[.dockercfg]")}},
		{"dockercfg bad json", corev1.SecretTypeDockercfg, nil, map[string][]byte{".dockercfg": []byte(`{`)}, []wantErr{inv("data[.dockercfg]")}},
		{"dockerconfigjson", corev1.SecretTypeDockerConfigJson, nil, map[string][]byte{".dockerconfigjson": []byte(`{}`)}, nil},
		{"dockerconfigjson missing", corev1.SecretTypeDockerConfigJson, nil, nil, []wantErr{req("data[.dockerconfigjson]")}},
		{"dockerconfigjson not object", corev1.SecretTypeDockerConfigJson, nil, map[string][]byte{".dockerconfigjson": []byte(`[]`)},
			[]wantErr{inv("data[.dockerconfigjson]")}},
		{"basic auth user only", corev1.SecretTypeBasicAuth, nil, map[string][]byte{"username": nil}, nil},
		{"basic auth password only", corev1.SecretTypeBasicAuth, nil, map[string][]byte{"password": {}}, nil},
		{"basic auth neither", corev1.SecretTypeBasicAuth, nil, nil, []wantErr{req("data[username]"), req("data[password]")}},
		{"ssh auth", corev1.SecretTypeSSHAuth, nil, map[string][]byte{"ssh-privatekey": {1}}, nil},
		{"ssh auth empty", corev1.SecretTypeSSHAuth, nil, map[string][]byte{"ssh-privatekey": {}}, []wantErr{req("data[ssh-privatekey]")}},
		{"tls", corev1.SecretTypeTLS, nil, map[string][]byte{"tls.crt": nil, "tls.key": nil}, nil},
		{"tls missing both", corev1.SecretTypeTLS, nil, nil, []wantErr{req("data[tls.crt]"), req("data[tls.key]")}},
		{"tls missing key", corev1.SecretTypeTLS, nil, map[string][]byte{"tls.crt": {1}}, []wantErr{req("data[tls.key]")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: tt.annotations}, Type: tt.typ, Data: tt.data}
			checkErrs(t, SecretStrategy{}.Validate(context.Background(), s), tt.want...)
		})
	}
	bad := &corev1.Secret{Type: corev1.SecretTypeDockercfg, Data: map[string][]byte{".dockercfg": []byte("secret{")}}
	if errs := ValidateSecret(bad); len(errs) != 1 || errs[0].BadValue != "<secret contents redacted>" {
		t.Errorf("secret contents not redacted: %v", errs)
	}
}

func TestValidateSecretUpdate(t *testing.T) {
	secret := func(typ corev1.SecretType, immutable *bool, data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{Type: typ, Immutable: immutable, Data: data}
	}
	d1, d2 := map[string][]byte{"a": {1}}, map[string][]byte{"a": {2}}
	opaque := corev1.SecretTypeOpaque
	tests := []struct {
		name     string
		new, old *corev1.Secret
		want     []wantErr
	}{
		{"data change", secret(opaque, nil, d2), secret(opaque, nil, d1), nil},
		{"type change", secret("example.com/x", nil, d1), secret(opaque, nil, d1), []wantErr{inv("type")}},
		{"immutable unchanged", secret(opaque, ptr(true), d1), secret(opaque, ptr(true), d1), nil},
		{"immutable data change", secret(opaque, ptr(true), d2), secret(opaque, ptr(true), d1), []wantErr{forb("data")}},
		{"immutable unset", secret(opaque, nil, d1), secret(opaque, ptr(true), d1), []wantErr{forb("immutable")}},
		{"new object validated", secret(opaque, nil, map[string][]byte{"a/b": nil}), secret(opaque, nil, nil), []wantErr{inv("data[a/b]")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, SecretStrategy{}.ValidateUpdate(context.Background(), tt.new, tt.old), tt.want...)
		})
	}
	checkDetail(t, ValidateSecretUpdate(secret("x/y", nil, nil), secret(opaque, nil, nil)), "field is immutable")
}

func TestSecretDefaultAndPrepare(t *testing.T) {
	s := &corev1.Secret{
		Data:       map[string][]byte{"a": []byte("old"), "b": []byte("kept")},
		StringData: map[string]string{"a": "new", "c": "added"},
	}
	SecretStrategy{}.Default(s)
	if s.Type != corev1.SecretTypeOpaque || s.StringData != nil {
		t.Errorf("defaulted = %+v", s)
	}
	for k, want := range map[string]string{"a": "new", "b": "kept", "c": "added"} {
		if string(s.Data[k]) != want {
			t.Errorf("data[%s] = %q, want %q", k, s.Data[k], want)
		}
	}

	untyped := &corev1.Secret{}
	SecretStrategy{}.PrepareForUpdate(context.Background(), untyped, &corev1.Secret{Type: corev1.SecretTypeTLS})
	if untyped.Type != corev1.SecretTypeTLS {
		t.Errorf("type = %q, want the old type", untyped.Type)
	}
}

func TestSecretWarnings(t *testing.T) {
	tlsSecret := &corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("x"), "tls.key": []byte("y")}}
	if w := (SecretStrategy{}).WarningsOnCreate(context.Background(), tlsSecret); len(w) != 1 {
		t.Errorf("warnings for a bad key pair = %v", w)
	}
	if w := (SecretStrategy{}).WarningsOnUpdate(context.Background(), &corev1.Secret{Type: corev1.SecretTypeOpaque}, tlsSecret); len(w) != 0 {
		t.Errorf("warnings for an opaque secret = %v", w)
	}
}
