package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/internal/testkit"
)

// BenchmarkList100 is capstan-load's reads workload's list: consistent
// lists of a namespace of 100 config maps (256 bytes of data each) through
// the whole server (TLS, HTTP/2, authentication by client certificate,
// APF, authorization, the watch cache, encoding), read by a plain HTTP
// client. "serial" sends one list at a time; "concurrent" 16 at once, as
// the workload does, so that concurrent lists share revision reads.
// cpu-us/op is the process's CPU time (server, client and the embedded
// etcd) per list: on a shared machine it is steadier than ns/op.
func BenchmarkList100(b *testing.B) {
	s := testkit.StartServer(b)
	ns := "bench-list"
	kube := s.Client(b)
	ctx := context.Background()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("reads-%07d", i), Labels: map[string]string{"app": "capstan-load"}},
			Data:       map[string]string{"payload": strings.Repeat("x", 256)},
		}
		if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	hc, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		b.Fatal(err)
	}
	url := s.URL + "/api/v1/namespaces/" + ns + "/configmaps"
	for _, media := range []string{"application/vnd.kubernetes.protobuf", "application/json"} {
		format := media[strings.LastIndex(media, "/")+1:]
		list := func(b *testing.B) {
			if err := getAll(hc, url, media); err != nil {
				b.Error(err)
			}
		}
		b.Run(format+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			cpu := e2eutil.CPUTime()
			for b.Loop() {
				list(b)
			}
			e2eutil.ReportCPU(b, cpu)
		})
		b.Run(format+"/concurrent", func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(8) // with 2 CPUs: 16 clients
			cpu := e2eutil.CPUTime()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					list(b)
				}
			})
			e2eutil.ReportCPU(b, cpu)
		})
	}
}

// getAll reads url whole and fails unless it answers 200.
func getAll(hc *http.Client, url, accept string) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
