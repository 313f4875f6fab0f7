package testserver_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/capstan-io/capstan/testserver"
)

// TestParallelServers: two servers of parallel tests do not share objects,
// and the kubeconfig bytes reach the same server as the config.
func TestParallelServers(t *testing.T) {
	t.Parallel()
	a, b := testserver.Start(t), testserver.Start(t)
	if a.URL == b.URL {
		t.Fatalf("both servers at %s", a.URL)
	}
	ctx := context.Background()
	ca := kubernetes.NewForConfigOrDie(a.RESTConfig())
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "only-in-a"}}
	if _, err := ca.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	fromBytes, err := clientcmd.RESTConfigFromKubeConfig(b.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cb := kubernetes.NewForConfigOrDie(fromBytes)
	if _, err := cb.CoreV1().ConfigMaps("default").Get(ctx, "only-in-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("server b: %v, want NotFound", err)
	}
}

// TestFlagsAndStop: extra flags reach the server (--controllers), and a
// stopped server no longer answers.
func TestFlagsAndStop(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.WithFlags("--controllers=-namespace,*"), testserver.WithAuthorizationMode("RBAC"))
	c := kubernetes.NewForConfigOrDie(s.RESTConfig())
	ctx := context.Background()
	body, err := c.Discovery().RESTClient().Get().AbsPath("/readyz").Param("verbose", "1").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), "start-namespace-controller") || !strings.Contains(string(body), "start-garbage-collector") {
		t.Errorf("--controllers=-namespace,*: /readyz lists\n%s", body)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := c.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(cctx); err == nil {
		t.Error("a stopped server answered")
	}
}

// fatalTB records Fatalf instead of ending the test.
type fatalTB struct {
	*testing.T
	fatal string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	panic(f)
}

func startError(t *testing.T, opts ...testserver.Option) string {
	f := &fatalTB{T: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != any(f) {
				panic(r)
			}
		}()
		testserver.Start(f, opts...)
	}()
	return f.fatal
}

func TestBadStarts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []testserver.Option
		want string
	}{
		{"missing CRD path", []testserver.Option{testserver.WithCRDPaths("testdata/nope")}, "testdata/nope: no such file or directory"},
		{"bad CRD", []testserver.Option{testserver.WithCRDs([]byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: bad}\nspec: {}\n"))}, "installing CRD bad"},
		{"unknown flag", []testserver.Option{testserver.WithFlags("--nope")}, "unknown flag: --nope"},
		{"bad controller", []testserver.Option{testserver.WithFlags("--controllers=nope")}, `"nope" is not in the list of known controllers`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := startError(t, tc.opts...); !strings.Contains(got, tc.want) {
				t.Errorf("start failed with %q, want %q", got, tc.want)
			}
		})
	}
}

// BenchmarkTestServerStart measures Start to ready (and the stop after
// it, outside the timer): the median is reported as median-ms.
func BenchmarkTestServerStart(b *testing.B) {
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		s, err := testserver.StartInDir(b.TempDir(), false)
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		b.StopTimer()
		if err := s.Stop(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
}
