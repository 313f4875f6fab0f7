package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// TestServiceAccountTokenController: a kubernetes.io/service-account-token
// secret gets its account's legacy token, the CA and the namespace, and
// the token authenticates as the account; a secret naming a missing
// account, and an account's secrets once it is deleted, go.
func TestServiceAccountTokenController(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	sa, err := e.Clientset.CoreV1().ServiceAccounts(ns).Create(e2eutil.Ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secrets := e.Clientset.CoreV1().Secrets(ns)
	tokenSecret := func(name, account string) {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{corev1.ServiceAccountNameKey: account}},
			Type: corev1.SecretTypeServiceAccountToken}
		if _, err := secrets.Create(e2eutil.Ctx(t), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tokenSecret("robot-token", "robot")
	tokenSecret("orphan-token", "nobody")
	var filled *corev1.Secret
	e2eutil.Eventually(t, 30*time.Second, "token secret filled", func(ctx context.Context) (bool, error) {
		filled, err = secrets.Get(ctx, "robot-token", metav1.GetOptions{})
		return err == nil && len(filled.Data["token"]) > 0, err
	})
	if string(filled.Data["namespace"]) != ns || len(filled.Data["ca.crt"]) == 0 || filled.Annotations[corev1.ServiceAccountUIDKey] != string(sa.UID) {
		t.Errorf("filled secret: namespace %q, ca.crt %d bytes, annotations %v", filled.Data["namespace"], len(filled.Data["ca.crt"]), filled.Annotations)
	}
	cfg := rest.AnonymousClientConfig(e.Config)
	cfg.BearerToken = string(filled.Data["token"])
	c := e.ClientWith(t, func(c *rest.Config) { *c = *cfg })
	_, err = c.CoreV1().Nodes().List(e2eutil.Ctx(t), metav1.ListOptions{})
	if want := `User "system:serviceaccount:` + ns + `:robot" cannot list resource "nodes"`; !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("request with the legacy token: %v, want a 403 naming %s", err, want)
	}
	gone := func(name string) {
		e2eutil.Eventually(t, 30*time.Second, name+" deleted", func(ctx context.Context) (bool, error) {
			_, err := secrets.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
	}
	gone("orphan-token")
	if err := e.Clientset.CoreV1().ServiceAccounts(ns).Delete(e2eutil.Ctx(t), "robot", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gone("robot-token")
}
