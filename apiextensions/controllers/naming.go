package controllers

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// namingController reserves the names of CRDs: it copies spec.names into
// status.acceptedNames when no other CRD of the group holds them, and
// reports conflicts in the NamesAccepted condition. Names are reserved
// within a group: the CRDs of one group are synced one at a time (as
// kube's single worker does for all), those of different groups
// concurrently.
type namingController struct {
	*queueLoop
	client  *crdClient
	indexer cache.Indexer
	now     func() time.Time
	groups  groupLocks
	// serve, when set, makes the CRD Established in the write that
	// accepts its names (Config.Serve).
	serve func(crd *apiextv1.CustomResourceDefinition) (done func(written bool))

	// written holds the CRDs this controller updated that the informer has
	// not shown yet, so that back-to-back syncs see the names just
	// reserved.
	mu      sync.Mutex
	written map[string]*apiextv1.CustomResourceDefinition
}

func newNamingController(client *crdClient, informer cache.SharedIndexInformer, logger *slog.Logger) (*namingController, error) {
	c := &namingController{
		queueLoop: newQueueLoop("crd_naming_condition_controller", logger),
		client:    client,
		indexer:   informer.GetIndexer(),
		now:       time.Now,
		written:   map[string]*apiextv1.CustomResourceDefinition{},
	}
	c.handle = c.sync
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { c.observe(obj, false) },
		UpdateFunc: func(_, obj any) {
			c.observe(obj, false)
		},
		DeleteFunc: func(obj any) { c.observe(obj, true) },
	})
	return c, err
}

// observe queues a CRD the informer reports and forgets the write of it it
// has caught up with.
func (c *namingController) observe(obj any, deleted bool) {
	crd, ok := crdFrom(obj)
	if !ok {
		return
	}
	c.mu.Lock()
	if w, ok := c.written[crd.Name]; ok && (deleted || w.UID != crd.UID || !newerThan(w, crd)) {
		delete(c.written, crd.Name)
	}
	c.mu.Unlock()
	c.queue.Add(crd.Name)
}

// latest returns the newest copy of crd the controller knows of.
func (c *namingController) latest(crd *apiextv1.CustomResourceDefinition) *apiextv1.CustomResourceDefinition {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w, ok := c.written[crd.Name]; ok && w.UID == crd.UID && newerThan(w, crd) {
		return w
	}
	return crd
}

// usedNames returns the resource names (plural, singular, short names) and
// kinds (kind, list kind) the CRDs of group have been granted.
func (c *namingController) usedNames(group string) (resources, kinds sets.Set[string]) {
	resources, kinds = sets.New[string](), sets.New[string]()
	objs, _ := c.indexer.ByIndex(GroupIndex, group)
	for _, obj := range objs {
		crd, ok := obj.(*apiextv1.CustomResourceDefinition)
		if !ok {
			continue
		}
		accepted := c.latest(crd).Status.AcceptedNames
		resources.Insert(accepted.Plural, accepted.Singular)
		resources.Insert(accepted.ShortNames...)
		kinds.Insert(accepted.Kind, accepted.ListKind)
	}
	return resources, kinds
}

// requeueGroup queues every CRD of group but the named one: a name one of
// them gave up may be another's now.
func (c *namingController) requeueGroup(group, except string) {
	objs, _ := c.indexer.ByIndex(GroupIndex, group)
	for _, obj := range objs {
		if crd, ok := obj.(*apiextv1.CustomResourceDefinition); ok && crd.Name != except {
			c.queue.Add(crd.Name)
		}
	}
}

func (c *namingController) sync(ctx context.Context, name string) (time.Duration, error) {
	// A CRD's name is <plural>.<group>.
	_, group, _ := strings.Cut(name, ".")
	defer c.groups.lock(group)()
	crd, ok := getCRD(c.indexer, name)
	if !ok {
		// Deleted: its names are free for the rest of its group.
		c.requeueGroup(group, name)
		return 0, nil
	}
	if equality.Semantic.DeepEqual(crd.Spec.Names, crd.Status.AcceptedNames) {
		return 0, nil
	}

	resources, kinds := c.usedNames(crd.Spec.Group)
	names, namesAccepted, established := acceptNames(crd, resources, kinds)
	if reflect.DeepEqual(crd.Status.AcceptedNames, names) &&
		sameCondition(&namesAccepted, findCondition(crd, apiextv1.NamesAccepted)) {
		return 0, nil
	}

	update := statusCopy(crd)
	update.Status.AcceptedNames = names
	now := metav1.NewTime(c.now())
	// Kube writes Established False (Installing) here and True in a
	// second write once its handler serves the resource; with serve, the
	// server serves it before this write, and no client waits on
	// Installing.
	var served func(written bool)
	if c.serve != nil && namesAccepted.Status == apiextv1.ConditionTrue && established.Status != apiextv1.ConditionTrue {
		established = establishedCondition(crd)
	}
	setCondition(update, namesAccepted, now)
	setCondition(update, established, now)
	if c.serve != nil && established.Status == apiextv1.ConditionTrue && !conditionTrue(crd, apiextv1.Established) {
		served = c.serve(update)
	}
	rv, err := updateStatus(ctx, c.client, update)
	if served != nil {
		served(err == nil)
	}
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		// The informer will bring the newer state, and the CRD back here.
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	// update may be served: a copy takes the new resourceVersion.
	written := *update
	written.ResourceVersion = rv
	c.mu.Lock()
	c.written[written.Name] = &written
	c.mu.Unlock()
	// The update may have released names others of the group asked for.
	c.requeueGroup(crd.Spec.Group, name)
	return 0, nil
}

// acceptNames decides which of the requested names of in it gets, given the
// resource names and kinds granted in its group (its own included). A name
// is granted when it is the one already accepted, or free; each conflict
// keeps the accepted name and makes NamesAccepted False, the last conflict
// found giving the reason. It also returns the Established condition to
// write along: the present one, or False until the names are accepted.
func acceptNames(in *apiextv1.CustomResourceDefinition, resources, kinds sets.Set[string]) (apiextv1.CustomResourceDefinitionNames, apiextv1.CustomResourceDefinitionCondition, apiextv1.CustomResourceDefinitionCondition) {
	requested, accepted := in.Spec.Names, in.Status.AcceptedNames
	names := accepted
	cond := apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.NamesAccepted, Status: apiextv1.ConditionUnknown}
	conflict := func(reason string, err error) {
		cond.Status, cond.Reason, cond.Message = apiextv1.ConditionFalse, reason, err.Error()
	}

	if err := grantable(requested.Plural, accepted.Plural, resources); err != nil {
		conflict("PluralConflict", err)
	} else {
		names.Plural = requested.Plural
	}
	if err := grantable(requested.Singular, accepted.Singular, resources); err != nil {
		conflict("SingularConflict", err)
	} else {
		names.Singular = requested.Singular
	}
	if !reflect.DeepEqual(requested.ShortNames, accepted.ShortNames) {
		owned := sets.New(accepted.ShortNames...)
		var errs []error
		for _, short := range requested.ShortNames {
			if owned.Has(short) {
				continue
			}
			if err := grantable(short, "", resources); err != nil {
				errs = append(errs, err)
			}
		}
		if err := utilerrors.NewAggregate(errs); err != nil {
			conflict("ShortNamesConflict", err)
		} else {
			names.ShortNames = requested.ShortNames
		}
	}
	if err := grantable(requested.Kind, accepted.Kind, kinds); err != nil {
		conflict("KindConflict", err)
	} else {
		names.Kind = requested.Kind
	}
	if err := grantable(requested.ListKind, accepted.ListKind, kinds); err != nil {
		conflict("ListKindConflict", err)
	} else {
		names.ListKind = requested.ListKind
	}
	names.Categories = requested.Categories

	if cond.Status == apiextv1.ConditionUnknown {
		cond.Status, cond.Reason, cond.Message = apiextv1.ConditionTrue, "NoConflicts", "no conflicts found"
	}

	// Established turns True in the establishing controller only, once the
	// accepted names have reached the informers: setting it here would let
	// clients see it before the resource is served.
	established := apiextv1.CustomResourceDefinitionCondition{
		Type: apiextv1.Established, Status: apiextv1.ConditionFalse,
		Reason: "NotAccepted", Message: "not all names are accepted",
	}
	if old := findCondition(in, apiextv1.Established); old != nil {
		established = *old
	}
	if established.Status != apiextv1.ConditionTrue && cond.Status == apiextv1.ConditionTrue {
		established = apiextv1.CustomResourceDefinitionCondition{
			Type: apiextv1.Established, Status: apiextv1.ConditionFalse,
			Reason: "Installing", Message: "the initial names have been accepted",
		}
	}
	return names, cond, established
}

// grantable returns an error when requested is neither the accepted name
// nor free.
func grantable(requested, accepted string, used sets.Set[string]) error {
	if requested == accepted || !used.Has(requested) {
		return nil
	}
	return fmt.Errorf("%q is already in use", requested)
}

// groupLocks serializes the work on each group.
type groupLocks struct {
	mu    sync.Mutex
	locks map[string]*groupLock
}

type groupLock struct {
	sync.Mutex
	users int
}

// lock locks group and returns its unlock.
func (g *groupLocks) lock(group string) func() {
	g.mu.Lock()
	if g.locks == nil {
		g.locks = map[string]*groupLock{}
	}
	l := g.locks[group]
	if l == nil {
		l = &groupLock{}
		g.locks[group] = l
	}
	l.users++
	g.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		g.mu.Lock()
		if l.users--; l.users == 0 {
			delete(g.locks, group)
		}
		g.mu.Unlock()
	}
}
