package storagetest

import (
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/capstan-io/capstan/storage"
)

// testListResourceVersion checks the rules of
// https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions
func testListResourceVersion(ctx context.Context, t *testing.T, s storage.Interface) {
	populate(ctx, t, s, "list-rv", "a")
	rvA := currentRV(ctx, t, s)
	populate(ctx, t, s, "list-rv", "b")
	rvB := currentRV(ctx, t, s)
	at := func(rv string, match storage.ResourceVersionMatch, limit int64) storage.ListOptions {
		return storage.ListOptions{Recursive: true, ResourceVersion: rv, ResourceVersionMatch: match,
			Predicate: storage.SelectionPredicate{Limit: limit}}
	}
	// "0" accepts any state, and N any state not older than N: a cache
	// may answer with one that is older than the backend's latest.
	if got := names(mustList(ctx, t, s, "list-rv", at("0", "", 0)).Items); !slices.Contains([]string{"", "a", "a,b"}, strings.Join(got, ",")) {
		t.Errorf("rv=0: got items %v, want a state of [a b]", got)
	}
	if got := names(mustList(ctx, t, s, "list-rv", at(rvString(rvA), storage.MatchNotOlderThan, 0)).Items); !slices.Contains([]string{"a", "a,b"}, strings.Join(got, ",")) {
		t.Errorf("NotOlderThan %d: got items %v, want [a] or [a b]", rvA, got)
	}
	expectNames(t, "NotOlderThan", mustList(ctx, t, s, "list-rv", at(rvString(rvB), storage.MatchNotOlderThan, 0)), "a", "b")
	expectNames(t, "rv=N without match", mustList(ctx, t, s, "list-rv", at(rvString(rvB), "", 0)), "a", "b")

	exact := mustList(ctx, t, s, "list-rv", at(rvString(rvA), storage.MatchExact, 0))
	expectNames(t, "Exact", exact, "a")
	if exact.ResourceVersion != rvString(rvA) {
		t.Errorf("Exact list at %d has resourceVersion %s", rvA, exact.ResourceVersion)
	}
	// Legacy: a paged list at N without a match reads exactly N.
	paged := mustList(ctx, t, s, "list-rv", at(rvString(rvA), "", 5))
	expectNames(t, "rv=N with limit", paged, "a")

	future := rvString(currentRV(ctx, t, s) + 100)
	for _, match := range []storage.ResourceVersionMatch{"", storage.MatchNotOlderThan, storage.MatchExact} {
		_, err := list(ctx, s, "list-rv", at(future, match, 0))
		expectErr(t, "future resourceVersion, match "+string(match), err, storage.ErrTooLargeResourceVersion)
	}
	_, err := list(ctx, s, "list-rv", at("x", "", 0))
	expectErr(t, "invalid resourceVersion", err, storage.ErrInvalidResourceVersion)
	if _, err := list(ctx, s, "list-rv", at("1", "Bogus", 0)); err == nil {
		t.Error("unknown resourceVersionMatch accepted")
	}
}

func testListInvalidContinue(ctx context.Context, t *testing.T, s storage.Interface) {
	populate(ctx, t, s, "list-badcontinue", "a")
	encode := func(json string) string { return base64.RawURLEncoding.EncodeToString([]byte(json)) }
	for name, token := range map[string]string{
		"not base64":      "!!!",
		"not json":        encode("{"),
		"unknown version": encode(`{"v":"meta.k8s.io/v2","rv":5,"start":"a"}`),
		"no revision":     encode(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`),
		"no start":        encode(`{"v":"meta.k8s.io/v1","rv":5,"start":""}`),
		"escapes prefix":  encode(`{"v":"meta.k8s.io/v1","rv":5,"start":"../../secrets/"}`),
	} {
		opts := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 1, Continue: token}}
		_, err := list(ctx, s, "list-badcontinue", opts)
		expectErr(t, name, err, storage.ErrInvalidContinue)
	}
}

// testListCompacted reads revisions that compaction removed: an exact list
// and a continue token are expired, and the expired continue offers a
// token that goes on at the latest revision.
func testListCompacted(ctx context.Context, t *testing.T, s storage.Interface, compact CompactFunc) {
	populate(ctx, t, s, "list-compact", "a", "b", "c")
	first := mustList(ctx, t, s, "list-compact", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 1}})
	setData(ctx, t, s, "list-compact", "a", "k", "changed")
	setData(ctx, t, s, "list-compact", "b", "k", "changed")
	if err := compact(ctx, currentRV(ctx, t, s)); err != nil {
		t.Fatalf("compact: %v", err)
	}

	exact := storage.ListOptions{Recursive: true, ResourceVersion: first.ResourceVersion, ResourceVersionMatch: storage.MatchExact}
	_, err := list(ctx, s, "list-compact", exact)
	expectErr(t, "Exact at a compacted revision", err, storage.ErrExpired)

	next := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 1, Continue: first.Continue}}
	_, err = list(ctx, s, "list-compact", next)
	expectErr(t, "continue at a compacted revision", err, storage.ErrExpired)
	var serr *storage.Error
	if !errors.As(err, &serr) || serr.Continue == "" {
		t.Fatalf("expired continue offers no new token: %#v", err)
	}
	next.Predicate.Continue = serr.Continue
	resumed := mustList(ctx, t, s, "list-compact", next)
	expectNames(t, "resumed at the latest revision", resumed, "b")
	if resumed.Items[0].Data["k"] != "changed" {
		t.Errorf("resumed list is not at the latest revision: %v", resumed.Items[0].Data)
	}
}
