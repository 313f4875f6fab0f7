package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/internal/testkit"
)

func TestSmoke(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Data: map[string]string{"k": "v"}}
	got, err := c.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion == "" || got.UID == "" {
		t.Fatalf("created object lacks server fields: %+v", got.ObjectMeta)
	}
	s.Restart(t)
	c = s.Client(t)
	again, err := c.CoreV1().ConfigMaps("default").Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != got.ResourceVersion {
		t.Fatalf("resourceVersion after restart = %s, want %s", again.ResourceVersion, got.ResourceVersion)
	}
}
