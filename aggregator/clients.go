package aggregator

import (
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/capstan-io/capstan/apis/scheme"
)

// restClient reaches gv's resources through the loopback client with
// capstan's scheme: kube-aggregator's own clientset is server code.
func restClient(loopback *rest.Config, gv schema.GroupVersion) (*rest.RESTClient, error) {
	c := rest.CopyConfig(loopback)
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	if gv.Group == "" {
		c.APIPath = "/api"
	}
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	return rest.RESTClientFor(c)
}

// informer lists and watches resource through client, decoding into
// objects like example.
func informer(client *rest.RESTClient, resource string, example runtime.Object) cache.SharedIndexInformer {
	lw := cache.NewListWatchFromClient(client, resource, "", fields.Everything())
	return cache.NewSharedIndexInformer(lw, example, 0, cache.Indexers{})
}
