package aggregator

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/capstan-io/capstan/apis/apiregistration"
	"github.com/capstan-io/capstan/internal/workloop"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/proxy/serviceresolver"
)

// recheckEvery is how often every remote APIService is checked again, as
// kube's availability controller resyncs.
const recheckEvery = 30 * time.Second

// availability keeps the Available condition of every APIService: Local
// ones are always available, remote ones are checked as kube checks them
// (available.go). It also keeps the routes and the remote groups'
// discovery in step with the APIServices.
type availability struct {
	client    *rest.RESTClient // apiregistration.k8s.io/v1
	informer  cache.SharedIndexInformer
	resolver  serviceresolver.Resolver
	routes    *routes
	discovery *remoteDiscovery
	openAPI   *remoteOpenAPI
	queue     workqueue.TypedRateLimitingInterface[string]
	logger    *slog.Logger
}

func newAvailability(client *rest.RESTClient, informer cache.SharedIndexInformer, resolver serviceresolver.Resolver,
	routes *routes, published published, logger *slog.Logger) *availability {
	a := &availability{client: client, informer: informer, resolver: resolver, routes: routes,
		discovery: published.discovery, openAPI: published.openAPI, logger: logger,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "apiservice-availability"})}
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { a.changed(obj.(*apiregv1.APIService)) },
		UpdateFunc: func(old, obj any) {
			if o := old.(*apiregv1.APIService); o.Spec.Group != obj.(*apiregv1.APIService).Spec.Group ||
				o.Spec.Version != obj.(*apiregv1.APIService).Spec.Version {
				a.gone(o)
			}
			a.changed(obj.(*apiregv1.APIService))
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if svc, ok := obj.(*apiregv1.APIService); ok {
				a.gone(svc)
			}
		},
	})
	return a
}

func (a *availability) changed(svc *apiregv1.APIService) {
	a.routes.set(svc)
	if svc.Spec.Service != nil && !apiregistration.IsAvailable(svc) {
		a.discovery.stale(svc)
		a.openAPI.drop(svc)
	}
	a.queue.Add(svc.Name)
}

func (a *availability) gone(svc *apiregv1.APIService) {
	metrics.ForgetAPIService(svc.Name)
	a.routes.remove(svc)
	a.discovery.drop(svc)
	a.openAPI.drop(svc)
}

// serviceChanged checks again the APIServices of a Service whose spec or
// endpoints changed.
func (a *availability) serviceChanged(namespace, name string) {
	for _, obj := range a.informer.GetStore().List() {
		svc := obj.(*apiregv1.APIService)
		if s := svc.Spec.Service; s != nil && s.Namespace == namespace && s.Name == name {
			a.queue.Add(svc.Name)
		}
	}
}

// run checks until ctx is done; the informer is run by the caller.
func (a *availability) run(ctx context.Context) {
	go func() {
		tick := time.NewTicker(recheckEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				for _, key := range a.informer.GetStore().ListKeys() {
					a.queue.Add(key)
				}
			}
		}
	}()
	workloop.Run(ctx, a.queue, 2, a.processNext)
}

func (a *availability) processNext(ctx context.Context) bool {
	name, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(name)
	failed, err := a.sync(ctx, name)
	if err != nil {
		a.logger.Error("apiservice availability", "apiservice", name, "err", err)
	}
	if err != nil || failed {
		a.queue.AddRateLimited(name)
		return true
	}
	a.queue.Forget(name)
	return true
}

// sync checks one APIService and writes its condition when it changed;
// failed tells a remote one that did not pass, to be checked again soon.
func (a *availability) sync(ctx context.Context, name string) (failed bool, err error) {
	obj, exists, err := a.informer.GetStore().GetByKey(name)
	if err != nil || !exists {
		return false, err
	}
	svc := obj.(*apiregv1.APIService)
	var cond apiregv1.APIServiceCondition
	if svc.Spec.Service == nil {
		cond = apiregistration.LocalAvailable()
	} else {
		var doc *metav1.APIResourceList
		cond, doc = a.condition(ctx, svc)
		if cond.Status == apiregv1.ConditionTrue {
			a.discovery.set(svc, doc)
			if err := a.publishOpenAPI(ctx, svc); err != nil {
				a.logger.Info("an APIService's OpenAPI document", "apiservice", svc.Name, "err", err)
			}
		} else {
			a.discovery.stale(svc)
			a.openAPI.drop(svc)
		}
	}
	failed = cond.Status != apiregv1.ConditionTrue
	// The proxy acts on the check at once, not when the informer brings
	// the status written below back: a client that read Available True
	// from this server is proxied, not answered 503.
	a.routes.setAvailable(svc, !failed)
	metrics.APIServiceAvailability(svc.Name, apiregistration.IsAvailable(svc), !failed, cond.Reason)
	if sameCondition(svc, cond) {
		return failed, nil
	}
	update := svc.DeepCopy()
	apiregistration.SetCondition(update, cond)
	err = a.client.Put().Resource("apiservices").Name(name).SubResource("status").Body(update).Do(ctx).Error()
	return failed, ignoreRace(err)
}

// published is where the groups and kinds of available remote APIServices
// are listed.
type published struct {
	discovery *remoteDiscovery
	openAPI   *remoteOpenAPI
}

// publishOpenAPI publishes svc's kinds from its server's OpenAPI v3
// document.
func (a *availability) publishOpenAPI(ctx context.Context, svc *apiregv1.APIService) error {
	t := a.routes.get(schema.GroupVersion{Group: svc.Spec.Group, Version: svc.Spec.Version})
	if t == nil || t.err != nil {
		return nil
	}
	loc, err := a.resolver.Resolve(ctx, t.namespace, t.service, t.port)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	client := &http.Client{Transport: t.transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return a.openAPI.update(ctx, svc, client, "https://"+loc.Host)
}
