package etcd3

import (
	"context"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/storage"
)

// maxPageSize caps how far a filtered list grows its etcd pages.
const maxPageSize = 10000

// listPlan is what a list reads: from which key, at which revision.
type listPlan struct {
	start     string // first etcd key to read
	rev       int64  // revision to read at; 0: the latest
	minRV     uint64 // the latest revision must be at least this
	continued bool   // start comes from a continue token
}

// planList applies the resourceVersion rules of the API concepts page and
// the continue token to a list of the etcd prefix keyPrefix.
func planList(key, keyPrefix string, opts storage.ListOptions) (listPlan, error) {
	p := listPlan{start: keyPrefix}
	if opts.Recursive && opts.Predicate.Continue != "" {
		// The token's revision wins over opts.ResourceVersion: the API
		// layer refuses requests that set both.
		start, rev, err := storage.DecodeContinue(opts.Predicate.Continue, keyPrefix)
		if err != nil {
			return p, storage.NewError(storage.ErrInvalidContinue, key, 0, err.Error())
		}
		p.start, p.continued = start, true
		if rev > 0 {
			p.rev = rev
		}
		return p, nil
	}
	rv, err := parseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return p, err
	}
	p.minRV = rv
	switch opts.ResourceVersionMatch {
	case storage.MatchNotOlderThan:
	case storage.MatchExact:
		p.rev = int64(rv)
	case storage.MatchDefault:
		// Legacy: a paged list at resourceVersion N reads exactly N.
		if opts.Recursive && opts.Predicate.Limit > 0 && rv > 0 {
			p.rev = int64(rv)
		}
	default:
		return p, fmt.Errorf("%w: unknown resourceVersionMatch %q", storage.ErrInvalidResourceVersion, opts.ResourceVersionMatch)
	}
	return p, nil
}

// GetList lists key's objects that match opts.Predicate. With a limit it
// reads pages from etcd, doubling them while the predicate filters items
// out, until it has limit items; the continue token resumes at the same
// revision, so all pages of a list show one snapshot.
func (s *Store) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	keyPrefix, err := s.keys.etcdKey(key, opts.Recursive)
	if err != nil {
		return err
	}
	items, err := newListItems(listObj)
	if err != nil {
		return err
	}
	plan, err := planList(key, keyPrefix, opts)
	if err != nil {
		return err
	}
	ctx, span := startListSpan(ctx, key, opts)
	defer span.End()
	res, err := s.readList(ctx, key, keyPrefix, plan, opts, items)
	if err != nil {
		return err
	}
	var token string
	var remaining *int64
	if res.hasMore {
		if token, err = storage.EncodeContinue(res.lastKey+"\x00", keyPrefix, res.rev); err != nil {
			return err
		}
		// etcd counts the keys left, not the matching ones: only an
		// unfiltered list can tell how many items remain.
		if opts.Predicate.Empty() {
			n := res.count - opts.Predicate.Limit
			remaining = &n
		}
	}
	items.finish()
	metrics.StorageList(s.groupResource.Group, s.groupResource.Resource, "etcd", "", res.fetched, res.fetched, items.len())
	return setListMeta(listObj, res.rev, token, remaining)
}

// listResult is what readList found beside the items.
type listResult struct {
	rev     int64  // the revision read at
	lastKey string // the last key examined
	hasMore bool   // keys remain after lastKey
	count   int64  // keys in the last page's range, from its start
	fetched int    // keys read from etcd
}

// readList reads the pages of a list into items.
func (s *Store) readList(ctx context.Context, key, keyPrefix string, plan listPlan, opts storage.ListOptions, items *listItems) (listResult, error) {
	res := listResult{rev: plan.rev}
	var errs listErrors
	limit := opts.Predicate.Limit
	pageSize := limit
	start := plan.start
	for {
		began := time.Now()
		resp, err := s.client.Get(ctx, start, listOptions(keyPrefix, opts.Recursive, res.rev, pageSize)...)
		s.record("listWithCount", began, err)
		if err != nil {
			return res, s.listError(ctx, err, key, keyPrefix, start, res.rev, plan.continued)
		}
		if res.rev == 0 {
			if plan.minRV > uint64(resp.Header.Revision) {
				return res, tooLarge(key, plan.minRV, resp.Header.Revision)
			}
			res.rev = resp.Header.Revision
		}
		res.count = resp.Count
		res.fetched += len(resp.Kvs)
		s.sizes.observe(resp.Kvs...)
		for i, kv := range resp.Kvs {
			if limit > 0 && int64(items.len()) >= limit {
				res.hasMore = true
				return res, errs.status(s, false)
			}
			res.lastKey = string(kv.Key)
			stop, err := s.appendIfMatches(ctx, items, &errs, kv.Value, kv.ModRevision, res.lastKey, opts.Predicate)
			if err != nil {
				return res, err
			}
			if stop {
				return res, errs.status(s, true)
			}
			resp.Kvs[i] = nil // let a long list's decoded bytes go early
		}
		res.hasMore = resp.More
		if !resp.More || (limit > 0 && int64(items.len()) >= limit) {
			return res, errs.status(s, false)
		}
		start = res.lastKey + "\x00"
		pageSize = min(pageSize*2, max(maxPageSize, limit))
	}
}

// listOptions are the etcd options of one page.
func listOptions(keyPrefix string, recursive bool, rev, limit int64) []clientv3.OpOption {
	var opts []clientv3.OpOption
	if recursive {
		opts = append(opts, clientv3.WithRange(clientv3.GetPrefixRangeEnd(keyPrefix)))
	}
	if limit > 0 {
		opts = append(opts, clientv3.WithLimit(limit))
	}
	if rev > 0 {
		opts = append(opts, clientv3.WithRev(rev))
	}
	return opts
}

// appendIfMatches decodes one stored value and appends it if selected.
// A value that does not decrypt or decode is collected in errs rather than
// ending the list, as kube does; stop tells that errs is full.
func (s *Store) appendIfMatches(ctx context.Context, items *listItems, errs *listErrors, stored []byte, rev int64, etcdKey string, p storage.SelectionPredicate) (stop bool, err error) {
	data, _, err := s.fromStorage(ctx, stored, etcdKey, etcdKey)
	if err != nil {
		return errs.add(err.(*corruptObjectError)), nil
	}
	obj := items.newItem()
	if err := s.decode(data, obj, rev, etcdKey); err != nil {
		var corrupt *corruptObjectError
		if errors.As(err, &corrupt) {
			return errs.add(corrupt), nil
		}
		return false, err
	}
	// An object whose attributes cannot be read does not match, as in kube.
	if ok, err := p.Matches(obj); err == nil && ok {
		items.append(obj)
	}
	return false, nil
}

// listError translates the error of a page read.
func (s *Store) listError(ctx context.Context, err error, key, keyPrefix, start string, rev int64, continued bool) error {
	switch {
	case isCompacted(err) && continued:
		e := storage.NewError(storage.ErrExpired, key, rev, continueExpiredMessage)
		// Offer to go on from the same key at the latest revision.
		if token, terr := storage.EncodeContinue(start, keyPrefix, -1); terr == nil {
			e.Continue = token
		}
		return e
	case isCompacted(err):
		return storage.NewError(storage.ErrExpired, key, rev, listExpiredMessage)
	case isFutureRev(err):
		current, cerr := s.currentRevision(ctx)
		if cerr != nil {
			current = 0
		}
		return tooLarge(key, uint64(rev), current)
	}
	return etcdError("list", key, err)
}
