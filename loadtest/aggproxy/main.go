// Command aggproxy measures GETs and watch events through an API server's
// aggregator proxy: -c workers GET one object of an extension server's
// resource for -d, then one watcher counts the events of -n creates. Run
// by bench/aggregator.sh against capstan and kube-apiserver in front of
// the same sample-apiserver.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

var flunders = schema.GroupVersionResource{Group: "wardle.example.com", Version: "v1alpha1", Resource: "flunders"}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the server's admin kubeconfig")
	name := flag.String("name", "server", "the server's name in the output")
	workers := flag.Int("c", 16, "concurrent GET workers")
	duration := flag.Duration("d", 20*time.Second, "how long the GETs run")
	events := flag.Int("n", 500, "creates whose watch events are timed")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	cfg.QPS, cfg.Burst = -1, 0
	// sample-apiserver's v1alpha1 is deprecated: one warning per request.
	cfg.WarningHandler = rest.NoWarnings{}
	client := dynamic.NewForConfigOrDie(cfg).Resource(flunders).Namespace("default")
	ctx := context.Background()
	obj := func(n string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "wardle.example.com/v1alpha1", "kind": "Flunder",
			"metadata": map[string]any{"name": n}}}
	}
	_, _ = client.Create(ctx, obj("bench"), metav1.CreateOptions{})
	lat := gets(ctx, client, *workers, *duration)
	slices.Sort(lat)
	fmt.Printf("%s GET: %d requests in %v with %d workers: %.0f/s, p50 %v, p99 %v\n", *name, len(lat), *duration, *workers,
		float64(len(lat))/duration.Seconds(), lat[len(lat)/2], lat[len(lat)*99/100])
	wl := watchEvents(ctx, client, *events, obj)
	slices.Sort(wl)
	fmt.Printf("%s watch: %d events, create-to-event p50 %v, p99 %v\n", *name, len(wl), wl[len(wl)/2], wl[len(wl)*99/100])
}

func gets(ctx context.Context, client dynamic.ResourceInterface, workers int, d time.Duration) []time.Duration {
	var mu sync.Mutex
	var all []time.Duration
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var mine []time.Duration
			for time.Now().Before(end) {
				start := time.Now()
				if _, err := client.Get(ctx, "bench", metav1.GetOptions{}); err != nil {
					fail(err)
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return all
}

// watchEvents creates n objects one after the other and times each from
// its create call to its ADDED event on a watch through the proxy.
func watchEvents(ctx context.Context, client dynamic.ResourceInterface, n int, obj func(string) *unstructured.Unstructured) []time.Duration {
	w, err := client.Watch(ctx, metav1.ListOptions{ResourceVersion: "0", LabelSelector: ""})
	if err != nil {
		fail(err)
	}
	defer w.Stop()
	prefix := fmt.Sprintf("w%d-", time.Now().UnixNano())
	var out []time.Duration
	for i := range n {
		name := fmt.Sprintf("%s%d", prefix, i)
		start := time.Now()
		if _, err := client.Create(ctx, obj(name), metav1.CreateOptions{}); err != nil {
			fail(err)
		}
		for seen := false; !seen; {
			select {
			case ev := <-w.ResultChan():
				if u, ok := ev.Object.(*unstructured.Unstructured); ok && u.GetName() == name {
					out = append(out, time.Since(start))
					seen = true
				}
			case <-time.After(30 * time.Second):
				fail(fmt.Errorf("no event for %s", name))
			}
		}
	}
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "aggproxy:", err)
	os.Exit(1)
}
