package aggregator

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/capstan-io/capstan/internal/parallel"
	"github.com/capstan-io/capstan/internal/workloop"
	"github.com/capstan-io/capstan/server"
)

// Kube's label of the APIServices the server keeps: "onstart" ones are
// made right at start and left alone after, "true" ones (CRDs') follow
// their source for good.
const (
	automanagedLabel = "kube-aggregator.kubernetes.io/automanaged"
	manageOnStart    = "onstart"
	manageAlways     = "true"
)

// autoregister keeps a Local APIService for every group version the chain
// serves, as kube's autoregister and CRD registration controllers do: the
// built-in ones as of the start, and the served versions of every CRD as
// CRDs come and go. APIServices it did not make are never touched.
type autoregister struct {
	client   *rest.RESTClient // apiregistration.k8s.io/v1
	services cache.SharedIndexInformer
	crds     cache.SharedIndexInformer
	queue    workqueue.TypedRateLimitingInterface[string]
	onStart  map[string]*apiregv1.APIService // by name; read only

	mu     sync.Mutex      // guards the fields below
	synced map[string]bool // names synced once
	// startDone is closed once every onStart name has synced.
	startDone chan struct{}
}

func newAutoregister(loopback *rest.Config, builtIn []schema.GroupVersion) (*autoregister, error) {
	client, err := restClient(loopback, apiregv1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	crdClient, err := restClient(loopback, apiextv1.SchemeGroupVersion)
	if err != nil {
		return nil, err
	}
	a := &autoregister{client: client, onStart: map[string]*apiregv1.APIService{}, synced: map[string]bool{},
		services: informer(client, "apiservices", &apiregv1.APIService{}),
		crds:     informer(crdClient, "customresourcedefinitions", &apiextv1.CustomResourceDefinition{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "autoregister"}),
		startDone: make(chan struct{})}
	for _, gv := range builtIn {
		if p, ok := kubePriorities[gv]; ok {
			svc := localAPIService(gv, p, manageOnStart)
			a.onStart[svc.Name] = svc
		}
	}
	if len(a.onStart) == 0 {
		close(a.startDone)
	}
	_, _ = a.services.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { a.enqueueService(obj) },
		UpdateFunc: func(_, obj any) { a.enqueueService(obj) },
		DeleteFunc: func(obj any) { a.enqueueService(obj) },
	})
	_, _ = a.crds.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { a.enqueueCRD(obj) },
		UpdateFunc: func(old, obj any) { a.enqueueCRD(old); a.enqueueCRD(obj) },
		DeleteFunc: func(obj any) { a.enqueueCRD(obj) },
	})
	for name := range a.onStart {
		a.queue.Add(name)
	}
	return a, nil
}

// localAPIService is kube's APIService for a group version served in process.
func localAPIService(gv schema.GroupVersion, p priority, manage string) *apiregv1.APIService {
	return &apiregv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: gv.Version + "." + gv.Group, Labels: map[string]string{automanagedLabel: manage}},
		Spec:       apiregv1.APIServiceSpec{Group: gv.Group, Version: gv.Version, GroupPriorityMinimum: p.group, VersionPriority: p.version},
	}
}

func (a *autoregister) enqueueService(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if svc, ok := obj.(*apiregv1.APIService); ok {
		a.queue.Add(svc.Name)
	}
}

func (a *autoregister) enqueueCRD(obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if crd, ok := obj.(*apiextv1.CustomResourceDefinition); ok {
		for _, v := range crd.Spec.Versions {
			a.queue.Add(v.Name + "." + crd.Spec.Group)
		}
	}
}

// run syncs until ctx is done.
func (a *autoregister) run(ctx context.Context) {
	workloop.Run(ctx, a.queue, 5, a.processNext, a.services, a.crds)
}

func (a *autoregister) processNext(ctx context.Context) bool {
	name, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(name)
	if err := a.sync(ctx, name); err != nil {
		a.queue.AddRateLimited(name)
		return true
	}
	a.queue.Forget(name)
	a.markSynced(name)
	return true
}

func (a *autoregister) markSynced(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.synced[name] {
		return
	}
	a.synced[name] = true
	for n := range a.onStart {
		if !a.synced[n] {
			return
		}
	}
	select {
	case <-a.startDone:
	default:
		close(a.startDone)
	}
}

func (a *autoregister) hasSynced(name string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.synced[name]
}

// desired is the APIService name should be, nil for none: a built-in one,
// or a CRD's served version.
func (a *autoregister) desired(name string) *apiregv1.APIService {
	if svc := a.onStart[name]; svc != nil {
		return svc
	}
	for _, obj := range a.crds.GetStore().List() {
		crd := obj.(*apiextv1.CustomResourceDefinition)
		for _, v := range crd.Spec.Versions {
			if v.Served && v.Name+"."+crd.Spec.Group == name {
				return localAPIService(schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}, crdPriority, manageAlways)
			}
		}
	}
	return nil
}

// sync brings name's APIService to what it should be, following kube's
// rules for who owns which.
func (a *autoregister) sync(ctx context.Context, name string) error {
	want := a.desired(name)
	obj, exists, err := a.services.GetStore().GetByKey(name)
	if err != nil {
		return err
	}
	onStart := want != nil && want.Labels[automanagedLabel] == manageOnStart
	switch {
	case !exists && want == nil:
		return nil
	case onStart && a.hasSynced(name):
		return nil // kept at start only: an admin's later change stays
	case !exists:
		err := a.client.Post().Resource("apiservices").Body(want).Do(ctx).Error()
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	}
	cur := obj.(*apiregv1.APIService)
	switch manage := cur.Labels[automanagedLabel]; {
	case manage == "":
		return nil // not ours
	case manage == manageOnStart && (a.onStart[name] == nil || a.hasSynced(name)):
		return nil
	case want == nil:
		opts := metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(cur.UID))}
		err := a.client.Delete().Resource("apiservices").Name(name).Body(&opts).Do(ctx).Error()
		return ignoreRace(err)
	case reflect.DeepEqual(cur.Spec, want.Spec):
		return nil
	}
	update := cur.DeepCopy()
	update.Spec = want.Spec
	return ignoreRace(a.client.Put().Resource("apiservices").Name(name).Body(update).Do(ctx).Error())
}

// ignoreRace drops the errors of a write that lost to another writer: the
// informer brings the change and the name back into the queue.
func ignoreRace(err error) error {
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// startAutoregistration runs the controller from a post-start hook, which
// returns, and so lets /readyz pass, once the built-in APIServices exist.
func (c Config) startAutoregistration(s *server.Server, builtIn []schema.GroupVersion) {
	s.AddPostStartHook("kube-apiserver-autoregistration", func(hc server.HookContext) error {
		a, err := newAutoregister(hc.LoopbackClientConfig, builtIn)
		if err != nil {
			return err
		}
		created := a.createAtStart(hc)
		go a.run(hc)
		if created {
			return nil
		}
		select {
		case <-a.startDone:
			return nil
		case <-hc.Done():
			return fmt.Errorf("autoregistration: %w", hc.Err())
		}
	})
}

// createAtStart creates the built-in APIServices at once, all together,
// without waiting for the controller's informers: readiness waits for them
// to exist (they are Available from their creation), and the informers'
// first sync would add to every start. It reports whether each exists now;
// the controller then brings those that existed before to their spec.
func (a *autoregister) createAtStart(ctx context.Context) bool {
	work := make([]func() error, 0, len(a.onStart))
	for _, svc := range a.onStart {
		work = append(work, func() error {
			err := a.client.Post().Resource("apiservices").Body(svc).Do(ctx).Error()
			if apierrors.IsAlreadyExists(err) {
				return nil
			}
			return err
		})
	}
	return parallel.Do(0, work...) == nil
}
