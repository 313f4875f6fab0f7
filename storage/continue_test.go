package storage

import (
	"encoding/base64"
	"errors"
	"testing"
)

func TestContinueRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		key string
		rv  int64
	}{
		{"/registry/configmaps/ns/a\x00", 42},
		{"/registry/configmaps/ns/b/c", 1},
		{"/registry/configmaps/x\x00", -1},
	} {
		token, err := EncodeContinue(tc.key, "/registry/configmaps/", tc.rv)
		if err != nil {
			t.Fatal(err)
		}
		key, rv, err := DecodeContinue(token, "/registry/configmaps/")
		if err != nil || key != tc.key || rv != tc.rv {
			t.Errorf("round trip of (%q, %d) gave (%q, %d, %v)", tc.key, tc.rv, key, rv, err)
		}
	}
	if _, err := EncodeContinue("/registry/secrets/a", "/registry/configmaps/", 1); err == nil {
		t.Error("encoded a key outside the prefix")
	}
}

// TestContinueKubeFormat pins the token format to kube's: a token made by
// kube-apiserver means the same here.
func TestContinueKubeFormat(t *testing.T) {
	const kube = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDIsInN0YXJ0IjoiYVx1MDAwMCJ9"
	token, err := EncodeContinue("/registry/configmaps/ns/a\x00", "/registry/configmaps/ns/", 42)
	if err != nil {
		t.Fatal(err)
	}
	if token != kube {
		raw, _ := base64.RawURLEncoding.DecodeString(token)
		t.Fatalf("token %q (%s), want kube's %q", token, raw, kube)
	}
}

// TestDecodeContinueRefuses: every defect is an ErrInvalidContinue with
// kube's message (which the 400 shows after "invalid continue token: ").
func TestDecodeContinueRefuses(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for name, tt := range map[string]struct{ token, msg string }{
		"not base64":      {"%%%", "continue key is not valid: illegal base64 data at input byte 0"},
		"padded base64":   {base64.URLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":1,"start":"a"}`)), "continue key is not valid: illegal base64 data at input byte 55"},
		"not json":        {enc("nope"), "continue key is not valid: invalid character 'o' in literal null (expecting 'u')"},
		"unknown version": {enc(`{"v":"v2","rv":1,"start":"a"}`), "continue key is not valid: server does not recognize this encoded version v2"},
		"zero revision":   {enc(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`), "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"},
		"empty start":     {enc(`{"v":"meta.k8s.io/v1","rv":1,"start":""}`), "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"},
		"parent":          {enc(`{"v":"meta.k8s.io/v1","rv":1,"start":"../secrets/a"}`), "continue key is not valid: ../secrets/a"},
		"inner parent":    {enc(`{"v":"meta.k8s.io/v1","rv":1,"start":"ns/../../a"}`), "continue key is not valid: ns/../../a"},
		"double slash":    {enc(`{"v":"meta.k8s.io/v1","rv":1,"start":"ns//a"}`), "continue key is not valid: ns//a"},
		"dot":             {enc(`{"v":"meta.k8s.io/v1","rv":1,"start":"./a"}`), "continue key is not valid: ./a"},
	} {
		_, _, err := DecodeContinue(tt.token, "/registry/configmaps/")
		if !errors.Is(err, ErrInvalidContinue) || err.Error() != tt.msg {
			t.Errorf("%s: got %v, want ErrInvalidContinue %q", name, err, tt.msg)
		}
	}
}
