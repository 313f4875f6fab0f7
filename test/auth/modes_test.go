package auth

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/app"
	"github.com/capstan-io/capstan/internal/testkit"
)

// TestAlwaysDeny: --authorization-mode=AlwaysDeny refuses everyone, with
// kube's reason, except system:masters, which the server itself and its
// admin belong to.
func TestAlwaysDeny(t *testing.T) {
	s := testkit.StartServer(t, "--authorization-mode=AlwaysDeny")
	if _, err := s.Client(t).CoreV1().Namespaces().List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Fatalf("admin: %v", err)
	}
	alice := newUser(t, s, "alice")
	_, err := alice.client.CoreV1().ConfigMaps("default").List(ctx(t), metav1.ListOptions{})
	want := `configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default": alwaysdeny: Everything is forbidden.`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

// TestModeFlag: kube's modes that capstan does not implement yet are
// refused at start with a clear error.
func TestModeFlag(t *testing.T) {
	for modes, want := range map[string]string{
		"RBAC":             "",
		"AlwaysAllow":      "",
		"Node,RBAC":        "",
		"Node,RBAC,Node":   `has mode specified more than once`,
		"rbac":             `authorization-mode "rbac" is not a valid mode`,
		"RBAC,AlwaysAllow": "",
	} {
		o := app.NewOptions()
		o.Authorization.Modes = strings.Split(modes, ",")
		o.Complete()
		err := o.Validate()
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("--authorization-mode=%s: %v, want %q", modes, err, want)
		}
	}
}
