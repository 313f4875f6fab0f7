package e2eutil

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CreateSecret creates a secret holding password=value.
func (e *Env) CreateSecret(t *testing.T, ns, name, value string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string][]byte{"password": []byte(value)}}
	out, err := e.Clientset.CoreV1().Secrets(ns).Create(Ctx(t), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating secret %s/%s: %v", ns, name, err)
	}
	return out
}

// WantSecret reads a secret through the API and checks its password.
func (e *Env) WantSecret(t *testing.T, ns, name, value string) {
	t.Helper()
	s, err := e.Clientset.CoreV1().Secrets(ns).Get(Ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading secret %s/%s: %v", ns, name, err)
	}
	if got := string(s.Data["password"]); got != value {
		t.Fatalf("secret %s/%s: password %q, want %q", ns, name, got, value)
	}
}

// WantRaw checks that the value at an etcd key starts with prefix and does
// not contain plain.
func (e *Env) WantRaw(t *testing.T, key, prefix, plain string) {
	t.Helper()
	raw := e.EtcdValue(t, key)
	if !bytes.HasPrefix(raw, []byte(prefix)) {
		t.Fatalf("etcd value of %s starts with %q, want %q", key, raw[:min(len(raw), 40)], prefix)
	}
	if plain != "" && bytes.Contains(raw, []byte(plain)) {
		t.Fatalf("etcd value of %s contains the plain text %q", key, plain)
	}
}

// Restart restarts the server on its data and takes a client of its new
// address.
func (e *Env) Restart(t *testing.T) {
	t.Helper()
	e.Server.Restart(t)
	e.Clientset = e.Client(t)
}
