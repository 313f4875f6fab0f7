package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/gentype"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/capstan-io/capstan/apis/scheme"
)

// crdClient reads and writes CustomResourceDefinitions in JSON.
type crdClient = gentype.ClientWithList[*apiextv1.CustomResourceDefinition, *apiextv1.CustomResourceDefinitionList]

// newCRDClient returns a client of apiextensions.k8s.io/v1
// customresourcedefinitions over cfg.
func newCRDClient(cfg *rest.Config) (*crdClient, error) {
	c := rest.CopyConfig(cfg)
	gv := apiextv1.SchemeGroupVersion
	c.GroupVersion = &gv
	c.APIPath = "/apis"
	c.ContentType = runtime.ContentTypeJSON
	c.AcceptContentTypes = runtime.ContentTypeJSON
	c.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return gentype.NewClientWithList("customresourcedefinitions", rc, scheme.ParameterCodec, "",
		func() *apiextv1.CustomResourceDefinition { return &apiextv1.CustomResourceDefinition{} },
		func() *apiextv1.CustomResourceDefinitionList { return &apiextv1.CustomResourceDefinitionList{} },
	), nil
}

// metadataOnly asks the server to answer with the object's metadata only
// (a PartialObjectMetadata), not the object.
const metadataOnly = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

// updateStatus writes crd's status and returns the resourceVersion the
// write got. The server answers with the metadata only: most of a CRD is
// its schemas, which a status write leaves as they were, and which the
// server would otherwise encode and this client scan.
func updateStatus(ctx context.Context, client *crdClient, crd *apiextv1.CustomResourceDefinition) (string, error) {
	raw, err := client.GetClient().Put().Resource("customresourcedefinitions").Name(crd.Name).SubResource("status").
		SetHeader("Accept", metadataOnly).Body(crd).Do(ctx).Raw()
	if err != nil {
		return "", err
	}
	var answer struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return "", fmt.Errorf("reading the answer to the status update of %s: %w", crd.Name, err)
	}
	if answer.Metadata.ResourceVersion == "" {
		return "", fmt.Errorf("the answer to the status update of %s has no resourceVersion", crd.Name)
	}
	return answer.Metadata.ResourceVersion, nil
}

// GroupIndex indexes CRDs by spec.group (with IndexByGroup): the naming
// controller compares a CRD with the others of its group only.
const GroupIndex = "group"

// IndexByGroup is the index function of GroupIndex.
func IndexByGroup(obj any) ([]string, error) {
	crd, ok := obj.(*apiextv1.CustomResourceDefinition)
	if !ok {
		return nil, nil
	}
	return []string{crd.Spec.Group}, nil
}

// newCRDInformer returns the one informer on CRDs the controllers share.
func newCRDInformer(client *crdClient, resync time.Duration) cache.SharedIndexInformer {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return client.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return client.Watch(ctx, opts)
		},
	}
	return cache.NewSharedIndexInformer(lw, &apiextv1.CustomResourceDefinition{}, resync,
		cache.Indexers{GroupIndex: IndexByGroup})
}

// crdFrom returns the CRD of an informer event, unwrapping tombstones.
func crdFrom(obj any) (*apiextv1.CustomResourceDefinition, bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	crd, ok := obj.(*apiextv1.CustomResourceDefinition)
	return crd, ok
}

// getCRD returns the informer's copy of a CRD; it must not be modified.
func getCRD(store cache.Store, name string) (*apiextv1.CustomResourceDefinition, bool) {
	obj, exists, err := store.GetByKey(name)
	if err != nil || !exists {
		return nil, false
	}
	crd, ok := obj.(*apiextv1.CustomResourceDefinition)
	return crd, ok
}

// newerThan reports whether a's resourceVersion is after b's; capstan's
// resourceVersions are etcd revisions. Unparsable versions are not newer.
func newerThan(a, b *apiextv1.CustomResourceDefinition) bool {
	av, errA := strconv.ParseUint(a.ResourceVersion, 10, 64)
	bv, errB := strconv.ParseUint(b.ResourceVersion, 10, 64)
	return errA == nil && errB == nil && av > bv
}

// queueLoop drains one work queue of CRD names with a sync function.
type queueLoop struct {
	name   string
	queue  workqueue.TypedRateLimitingInterface[string]
	logger *slog.Logger
	// handle syncs one CRD. A positive retry asks for another look after
	// that delay; an error retries with the queue's backoff.
	handle func(ctx context.Context, name string) (retry time.Duration, err error)
}

func newQueueLoop(name string, logger *slog.Logger) *queueLoop {
	return &queueLoop{
		name: name,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: name}),
		logger: logger.With("controller", name),
	}
}

// run starts workers goroutines on wg; they stop once the queue is shut
// down.
func (l *queueLoop) run(ctx context.Context, wg *sync.WaitGroup, workers int) {
	l.logger.Debug("starting", "workers", workers)
	for range workers {
		wg.Go(func() {
			for l.processNext(ctx) {
			}
		})
	}
}

func (l *queueLoop) processNext(ctx context.Context) bool {
	name, quit := l.queue.Get()
	if quit {
		return false
	}
	defer l.queue.Done(name)

	retry, err := l.handle(ctx, name)
	switch {
	case err == nil:
		l.queue.Forget(name)
		if retry > 0 {
			l.queue.AddAfter(name, retry)
		}
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		// Shutting down.
	default:
		l.logger.Error("sync failed", "crd", name, "err", err)
		l.queue.AddRateLimited(name)
	}
	return true
}
