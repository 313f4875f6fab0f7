package cache

import (
	"time"

	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/storage"
)

// listPlan is what a list served by the cache reads.
type listPlan struct {
	state *tree
	rv    uint64 // the list's resourceVersion
	start string // the first key to read
}

// GetList lists key's objects that match opts.Predicate with etcd3's
// semantics, from a snapshot: "" (a consistent read) once the cache has
// seen the backend's current revision; "0" from the cache as it is (the
// limit is ignored, as in kube); Exact N, a legacy paged N and a continue
// token from the snapshot of that revision while the history has it;
// NotOlderThan N once the cache has reached N. Continue tokens are
// etcd3's, so pages may alternate between the two. What the cache cannot
// serve (not ready, a revision older than its history, a revision it does
// not reach within 3s) the backend does.
func (c *Cacher) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	prepared, err := storage.PrepareKey(c.resourcePrefix, key, opts.Recursive)
	if err != nil {
		return err
	}
	ctx, span := c.startSpan(ctx, "cacher.GetList")
	defer span.End()
	plan, ok, err := c.planList(ctx, key, prepared, opts)
	if err != nil {
		return err
	}
	if !ok {
		return c.backend.storage.GetList(ctx, key, opts, listObj)
	}
	return c.listFrom(plan, prepared, opts, listObj)
}

// planList applies the resourceVersion rules and the continue token; ok
// false sends the list to the backend.
func (c *Cacher) planList(ctx context.Context, key, prepared string, opts storage.ListOptions) (listPlan, bool, error) {
	if opts.Recursive && opts.Predicate.Continue != "" {
		// The token's revision wins over opts.ResourceVersion, as in etcd3.
		start, rv, err := storage.DecodeContinue(opts.Predicate.Continue, prepared)
		if err != nil {
			return listPlan{}, false, storage.NewError(storage.ErrInvalidContinue, key, 0, err.Error())
		}
		var p listPlan
		var ok bool
		if rv > 0 {
			p, ok, err = c.planExact(ctx, uint64(rv))
		} else {
			p, ok, err = c.planConsistent(ctx)
		}
		p.start = start
		return p, ok, err
	}
	rv, err := storage.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return listPlan{}, false, err
	}
	switch opts.ResourceVersionMatch {
	case storage.MatchExact:
		if rv == 0 {
			return listPlan{}, false, nil
		}
		return c.planExact(ctx, rv)
	case storage.MatchNotOlderThan:
		return c.planNotOlderThan(ctx, rv)
	case storage.MatchDefault:
		switch {
		case opts.ResourceVersion == "":
			return c.planConsistent(ctx)
		case rv > 0 && opts.Recursive && opts.Predicate.Limit > 0:
			// Legacy: a paged list at resourceVersion N reads exactly N.
			return c.planExact(ctx, rv)
		}
		return c.planNotOlderThan(ctx, rv)
	}
	return listPlan{}, false, fmt.Errorf("%w: unknown resourceVersionMatch %q", storage.ErrInvalidResourceVersion, opts.ResourceVersionMatch)
}

// planExact reads the state at revision rv.
func (c *Cacher) planExact(ctx context.Context, rv uint64) (listPlan, bool, error) {
	if ok, err := c.waitFresh(ctx, rv, true); !ok || err != nil {
		return listPlan{}, false, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	state, ok := c.hist.snapshotAt(rv)
	return listPlan{state: state, rv: rv}, ok && c.status.ready, nil
}

// planNotOlderThan reads the latest state, once it is not older than rv.
func (c *Cacher) planNotOlderThan(ctx context.Context, rv uint64) (listPlan, bool, error) {
	if ok, err := c.waitFresh(ctx, rv, true); !ok || err != nil {
		return listPlan{}, false, err
	}
	return c.planLatest(), true, nil
}

// planConsistent reads the latest state once it is at least as new as
// the backend's.
func (c *Cacher) planConsistent(ctx context.Context) (listPlan, bool, error) {
	began := time.Now()
	ok, err := c.waitConsistent(ctx)
	c.backend.metrics.ConsistentRead(began, ok, err)
	if !ok || err != nil {
		return listPlan{}, false, err
	}
	return c.planLatest(), true, nil
}

func (c *Cacher) planLatest() listPlan {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return listPlan{state: c.hist.latest(), rv: c.rv}
}

// listFrom reads the plan's snapshot into listObj, without a lock: the
// snapshot never changes.
func (c *Cacher) listFrom(p listPlan, prefix string, opts storage.ListOptions, listObj runtime.Object) error {
	if !opts.Recursive {
		var elems []*element
		if e, ok := get(p.state, prefix); ok && c.selector(opts.Predicate).selects(e) {
			elems = append(elems, e)
		}
		if err := c.fillList(listObj, elems, opts); err != nil {
			return err
		}
		return setListMeta(listObj, p.rv, "", nil)
	}
	limit := opts.Predicate.Limit
	if opts.ResourceVersion == "0" && opts.Predicate.Continue == "" {
		limit = 0
	}
	if p.start == "" {
		p.start = prefix
	}
	page := c.readPage(p.state, prefix, p.start, limit, opts.Predicate)
	c.backend.metrics.List(page.evaluated, page.evaluated, len(page.elems))
	if err := c.fillList(listObj, page.elems, opts); err != nil {
		return err
	}
	var token string
	if page.hasMore {
		var err error
		if token, err = storage.EncodeContinue(page.elems[len(page.elems)-1].key+"\x00", prefix, int64(p.rv)); err != nil {
			return err
		}
	}
	return setListMeta(listObj, p.rv, token, page.remaining)
}

// page is what readPage found.
type page struct {
	elems     []*element
	hasMore   bool   // keys remain after the last element
	remaining *int64 // how many, for an unfiltered page
	evaluated int    // elements tested against the predicate
}

// readPage reads up to limit (0: no limit) selected elements of the
// prefix from start. Like etcd3, a page that reaches the limit has more
// if any key follows, selected or not, and counts those that follow only
// when nothing is filtered out.
func (c *Cacher) readPage(state *tree, prefix, start string, limit int64, pred storage.SelectionPredicate) page {
	var p page
	var rest int64
	sel := c.selector(pred)
	ascendPrefix(state, prefix, start, func(e *element) bool {
		if limit > 0 && int64(len(p.elems)) >= limit {
			p.hasMore = true
			rest++
			return pred.Empty()
		}
		p.evaluated++
		if sel.selects(e) {
			p.elems = append(p.elems, e)
		}
		return true
	})
	if p.hasMore && pred.Empty() {
		p.remaining = &rest
	}
	return p
}

// matches reports whether obj is selected; an object whose attributes
// cannot be read is not, as in etcd3.
func matches(pred storage.SelectionPredicate, obj runtime.Object) bool {
	if pred.Empty() {
		return true
	}
	ok, err := pred.Matches(obj)
	return err == nil && ok
}
