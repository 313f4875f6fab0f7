package perns_test

import (
	"context"
	"log/slog"
	"maps"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/controlplane/controllers/perns"
	"github.com/capstan-io/capstan/internal/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.Main(m)) }

const (
	rootCA      = "-----BEGIN CERTIFICATE-----\nperns test\n-----END CERTIFICATE-----\n"
	description = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// TestLoops runs the serviceaccount and root-ca-cert-publisher loops on a
// server whose own are off: every active namespace gets a default account
// and the CA config map, which are put back when deleted or changed.
func TestLoops(t *testing.T) {
	s := testkit.StartServer(t, "--controllers=")
	cfg := rest.CopyConfig(s.Config)
	cfg.QPS = -1 // the test polls
	client := kubernetes.NewForConfigOrDie(cfg)
	loopClient := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := slog.New(slog.DiscardHandler)
	accounts, err := perns.NewServiceAccounts(loopClient, logger)
	if err != nil {
		t.Fatal(err)
	}
	cas, err := perns.NewRootCA(loopClient, []byte(rootCA), logger)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}, 2)
	for _, c := range []*perns.Controller{accounts, cas} {
		go func() { c.Run(ctx, 1); done <- struct{}{} }()
	}
	defer func() { cancel(); <-done; <-done }()

	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "perns"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A namespace there before the loops started, and one made since.
	for _, ns := range []string{metav1.NamespaceDefault, "perns"} {
		eventually(t, "the default account in "+ns, func(ctx context.Context) (bool, error) {
			_, err := client.CoreV1().ServiceAccounts(ns).Get(ctx, perns.DefaultServiceAccount, metav1.GetOptions{})
			return err == nil, ignoreNotFound(err)
		})
		cm := published(t, client, ns, "")
		if cm.Annotations["kubernetes.io/description"] != description {
			t.Errorf("%s: description %q", ns, cm.Annotations["kubernetes.io/description"])
		}
	}

	cms := client.CoreV1().ConfigMaps("perns")
	cm := published(t, client, "perns", "")
	delete(cm.Annotations, "kubernetes.io/description")
	if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the description put back", func(ctx context.Context) (bool, error) {
		got, err := cms.Get(ctx, perns.RootCAConfigMap, metav1.GetOptions{})
		return err == nil && got.Annotations["kubernetes.io/description"] == description, err
	})

	cm = published(t, client, "perns", "")
	cm.Data = map[string]string{"ca.crt": "tampered", "extra": "x"}
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	published(t, client, "perns", "")

	if err := cms.Delete(ctx, perns.RootCAConfigMap, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	published(t, client, "perns", cm.UID)

	sas := client.CoreV1().ServiceAccounts("perns")
	sa, err := sas.Get(ctx, perns.DefaultServiceAccount, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sas.Delete(ctx, perns.DefaultServiceAccount, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the default account made again", func(ctx context.Context) (bool, error) {
		got, err := sas.Get(ctx, perns.DefaultServiceAccount, metav1.GetOptions{})
		return err == nil && got.UID != sa.UID, ignoreNotFound(err)
	})
}

// published waits until the namespace's CA config map holds exactly the
// CA, and is not the object of UID notUID, and returns it.
func published(t *testing.T, client kubernetes.Interface, ns string, notUID types.UID) *corev1.ConfigMap {
	t.Helper()
	var cm *corev1.ConfigMap
	eventually(t, "the CA published in "+ns, func(ctx context.Context) (bool, error) {
		var err error
		cm, err = client.CoreV1().ConfigMaps(ns).Get(ctx, perns.RootCAConfigMap, metav1.GetOptions{})
		return err == nil && maps.Equal(cm.Data, map[string]string{"ca.crt": rootCA}) && cm.UID != notUID, ignoreNotFound(err)
	})
	return cm
}

func eventually(t *testing.T, what string, cond wait.ConditionWithContextFunc) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
