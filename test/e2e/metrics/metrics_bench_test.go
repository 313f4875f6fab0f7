package metrics

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/internal/testkit"
)

// BenchmarkGetConfigMap is one GET of a config map through client-go
// against an in-process capstan; cpu-ns/op is the process's CPU time
// (server and client together) per GET, what BenchmarkRequestMetrics'
// cost is compared with in docs/benchmarks.md.
func BenchmarkGetConfigMap(b *testing.B) {
	s := testkit.StartServer(b, "--controllers=*,-root-ca-cert-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cms := s.Client(b).CoreV1().ConfigMaps("default")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bench"}, Data: map[string]string{"k": "v"}}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	before := e2eutil.CPUTime()
	for b.Loop() {
		if _, err := cms.Get(ctx, "bench", metav1.GetOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	e2eutil.ReportCPU(b, before)
}
