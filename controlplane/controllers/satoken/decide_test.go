package satoken

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestNeedsUpdate(t *testing.T) {
	ca := []byte("the CA")
	full := map[string][]byte{"ca.crt": ca, "namespace": []byte("ns"), "token": []byte("t")}
	without := func(key string) map[string][]byte {
		d := map[string][]byte{}
		for k, v := range full {
			if k != key {
				d[k] = v
			}
		}
		return d
	}
	for _, tc := range []struct {
		name   string
		rootCA []byte
		data   map[string][]byte
		want   bool
	}{
		{"complete", ca, full, false},
		{"no token", ca, without("token"), true},
		{"empty token", ca, map[string][]byte{"ca.crt": ca, "namespace": []byte("ns"), "token": {}}, true},
		{"no CA", ca, without("ca.crt"), true},
		{"another CA", ca, map[string][]byte{"ca.crt": []byte("old CA"), "namespace": []byte("ns"), "token": []byte("t")}, true},
		{"no CA configured, none in the secret", nil, without("ca.crt"), false},
		{"no CA configured, one in the secret", nil, full, false},
		{"no namespace", ca, without("namespace"), true},
		{"another namespace", ca, map[string][]byte{"ca.crt": ca, "namespace": []byte("other"), "token": []byte("t")}, true},
	} {
		c := &Controller{cfg: Config{RootCA: tc.rootCA}}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}, Data: tc.data}
		if got := c.needsUpdate(s); got != tc.want {
			t.Errorf("%s: needsUpdate = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestClient404(t *testing.T) {
	other := errors.New("boom")
	for _, tc := range []struct{ err, want error }{
		{nil, nil},
		{apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "s"), nil},
		{other, other},
	} {
		if got := client404(tc.err); got != tc.want {
			t.Errorf("client404(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
