package aggregator

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/capstan-io/capstan/internal/testkit"
)

// BenchmarkAPIServiceMemory is the Go heap one remote APIService adds to an
// in-process capstan once it is available: its route and transports (and
// their connections), the discovery document of its server (one resource)
// and its listing in discovery. 200 are registered, all reaching one
// backend, each through a Service of its own or all through one Service
// (whose APIServices share their transports); B/APIService is the heap's
// growth divided by them (the test process's heap: the client's share is a
// few objects).
func BenchmarkAPIServiceMemory(b *testing.B) {
	for _, services := range []int{200, 1} {
		b.Run(fmt.Sprintf("services=%d", services), func(b *testing.B) { benchmarkAPIServiceMemory(b, 200, services) })
	}
}

func benchmarkAPIServiceMemory(b *testing.B, apiservices, services int) {
	s := testkit.StartServer(b, "--controllers=*,-root-ca-cert-publisher")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var conns atomic.Int64
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		if len(parts) != 3 || parts[0] != "apis" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, fmt.Sprintf(`{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"%s/%s","resources":[{"name":"things","namespaced":true,"kind":"Thing","verbs":["get","list","watch"]}]}`, parts[1], parts[2]))
	}))
	backend.EnableHTTP2 = true
	backend.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	backend.StartTLS()
	defer backend.Close()
	u, _ := url.Parse(backend.URL)
	port, _ := strconv.Atoi(u.Port())
	for i := range services {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("backend-", i)},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}
		if _, err := s.Client(b).CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	agg, err := aggregatorclient.NewForConfig(s.Config)
	if err != nil {
		b.Fatal(err)
	}
	before := heapInUse()
	for i := range apiservices {
		as := &apiregv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("v1.g%d.example.com", i)}, Spec: apiregv1.APIServiceSpec{
			Group: fmt.Sprintf("g%d.example.com", i), Version: "v1", GroupPriorityMinimum: 1000, VersionPriority: 15, InsecureSkipTLSVerify: true,
			Service: &apiregv1.ServiceReference{Namespace: "default", Name: fmt.Sprint("backend-", i%services), Port: ptrInt32(int32(port))}}}
		if _, err := agg.ApiregistrationV1().APIServices().Create(ctx, as, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	err = pollUntil(ctx, 5*time.Minute, func(ctx context.Context) bool {
		list, err := agg.ApiregistrationV1().APIServices().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		available := 0
		for _, as := range list.Items {
			for _, c := range as.Status.Conditions {
				if as.Spec.Service != nil && c.Type == apiregv1.Available && c.Status == apiregv1.ConditionTrue {
					available++
				}
			}
		}
		return available == apiservices
	})
	if err != nil {
		b.Fatalf("the APIServices did not all become available: %v", err)
	}
	for b.Loop() {
		// The work is the registrations above, done once.
	}
	b.ReportMetric(float64(heapInUse()-before)/float64(apiservices), "B/APIService")
	b.ReportMetric(float64(conns.Load())/float64(apiservices), "conns/APIService")
}

// heapInUse is the Go heap in use after two garbage collections (the
// second collects what the first's cleanups and finalizers freed).
func heapInUse() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
