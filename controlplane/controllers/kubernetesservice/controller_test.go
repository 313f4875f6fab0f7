package kubernetesservice_test

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/controlplane/controllers/kubernetesservice"
	"github.com/capstan-io/capstan/storage/etcd3"
	"github.com/capstan-io/capstan/storage/storagecodec"
	"github.com/capstan-io/capstan/testserver"
)

// TestEndpointsAcrossReplicas: the kubernetes Endpoints and EndpointSlice
// list the address of every replica holding a lease in /masterleases; a
// replica that stops takes its address out, and one that dies drops out
// when its lease expires, as kube's lease endpoint reconciler.
func TestEndpointsAcrossReplicas(t *testing.T) {
	s := testserver.Start(t, testserver.WithFlags("--endpoint-reconciler-type=none"))
	client := kubernetes.NewForConfigOrDie(s.RESTConfig())
	leases, err := etcd3.New(etcd3.Config{
		Client: s.EtcdClient(), Codec: storagecodec.New(scheme.Scheme, scheme.Codecs, corev1.SchemeGroupVersion),
		NewFunc: func() runtime.Object { return &corev1.Endpoints{} }, NewListFunc: func() runtime.Object { return &corev1.EndpointsList{} },
		ResourcePrefix: "/masterleases/", GroupResource: schema.GroupResource{Resource: "masterleases"},
	})
	if err != nil {
		t.Fatal(err)
	}
	replica := func(ip string, ttl time.Duration) *kubernetesservice.Controller {
		return kubernetesservice.New(kubernetesservice.Config{Client: client, ServiceIP: net.ParseIP("10.0.0.1"), ServicePort: 443, PublicIP: net.ParseIP(ip),
			PublicPort: 6443, Leases: leases, Interval: time.Second, LeaseTTL: ttl, Logger: slog.New(slog.DiscardHandler)})
	}
	a, b, dying := replica("192.0.2.10", time.Minute), replica("192.0.2.11", time.Minute), replica("192.0.2.12", 2*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, r := range []*kubernetesservice.Controller{a, b, dying} {
		if err := r.Reconcile(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The dying replica's lease was written last; the others see it.
	if err := a.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	expect(t, client, "192.0.2.10", "192.0.2.11", "192.0.2.12")
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	expect(t, client, "192.0.2.10", "192.0.2.12")
	// The dying replica renews no more: its lease's TTL ends it.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := a.Reconcile(ctx); err != nil {
			return false, err
		}
		ep, err := client.CoreV1().Endpoints(metav1.NamespaceDefault).Get(ctx, kubernetesservice.Name, metav1.GetOptions{})
		return err == nil && slices.Equal(addresses(ep), []string{"192.0.2.10"}), err
	})
	if err != nil {
		t.Fatalf("the expired lease's address stayed: %v", err)
	}
	expect(t, client, "192.0.2.10")
}

// expect checks the Endpoints and the EndpointSlice list want.
func expect(t *testing.T, client kubernetes.Interface, want ...string) {
	t.Helper()
	ctx := context.Background()
	ep, err := client.CoreV1().Endpoints(metav1.NamespaceDefault).Get(ctx, kubernetesservice.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := addresses(ep); !slices.Equal(got, want) {
		t.Errorf("endpoints = %v, want %v", got, want)
	}
	slice, err := client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Get(ctx, kubernetesservice.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range slice.Endpoints {
		got = append(got, e.Addresses...)
	}
	if !slices.Equal(got, want) || slice.Labels[discoveryv1.LabelServiceName] != kubernetesservice.Name {
		t.Errorf("endpoint slice = %v (labels %v), want %v", got, slice.Labels, want)
	}
}

func addresses(ep *corev1.Endpoints) []string {
	var out []string
	for _, s := range ep.Subsets {
		for _, a := range s.Addresses {
			out = append(out, a.IP)
		}
	}
	return out
}
