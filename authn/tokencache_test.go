package authn

import (
	"context"
	"errors"
	"testing"
	"time"
)

// countingTokens accepts "good", refuses "unknown" with no opinion and
// fails "bad"; it counts its calls per token.
type countingTokens map[string]int

func (c countingTokens) AuthenticateToken(_ context.Context, token string) (*Response, bool, error) {
	c[token]++
	switch token {
	case "good":
		return &Response{User: &User{Name: "good"}}, true, nil
	case "bad":
		return nil, false, errors.New("bad token")
	}
	return nil, false, nil
}

func TestCachedToken(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	tests := []struct {
		name      string
		opts      TokenCacheOptions
		token     string
		advance   time.Duration
		wantCalls int
	}{
		{name: "success cached", opts: TokenCacheOptions{SuccessTTL: 10 * time.Second}, token: "good", wantCalls: 1},
		{name: "success expires", opts: TokenCacheOptions{SuccessTTL: 10 * time.Second}, token: "good", advance: 10 * time.Second, wantCalls: 2},
		{name: "kube's union: failures not cached", opts: TokenCacheOptions{SuccessTTL: TokenSuccessCacheTTL, FailureTTL: TokenFailureCacheTTL, CacheErrors: true}, token: "unknown", wantCalls: 2},
		{name: "no opinion cached as failure", opts: TokenCacheOptions{FailureTTL: time.Minute}, token: "unknown", wantCalls: 1},
		{name: "errors not cached without CacheErrors", opts: TokenCacheOptions{SuccessTTL: time.Minute, FailureTTL: time.Minute}, token: "bad", wantCalls: 2},
		{name: "errors cached with CacheErrors", opts: TokenCacheOptions{FailureTTL: time.Minute, CacheErrors: true}, token: "bad", wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now = time.Unix(1000, 0)
			inner := countingTokens{}
			tt.opts.Now = clock
			c := NewCachedToken(inner, tt.opts)
			first, ok1, err1 := c.AuthenticateToken(context.Background(), tt.token)
			now = now.Add(tt.advance)
			second, ok2, err2 := c.AuthenticateToken(context.Background(), tt.token)
			if inner[tt.token] != tt.wantCalls {
				t.Errorf("calls = %d, want %d", inner[tt.token], tt.wantCalls)
			}
			if ok1 != ok2 || (err1 == nil) != (err2 == nil) || (first == nil) != (second == nil) {
				t.Errorf("answers differ: %v %v %v / %v %v %v", first, ok1, err1, second, ok2, err2)
			}
		})
	}
}

func TestCachedTokenKeyedByAudiences(t *testing.T) {
	inner := countingTokens{}
	c := NewCachedToken(inner, TokenCacheOptions{SuccessTTL: time.Minute})
	for _, ctx := range []context.Context{
		context.Background(),
		WithAudiences(context.Background(), []string{"a"}),
		WithAudiences(context.Background(), []string{"a", "b"}),
		WithAudiences(context.Background(), []string{"ab"}),
		WithAudiences(context.Background(), []string{"a"}),
	} {
		if _, ok, _ := c.AuthenticateToken(ctx, "good"); !ok {
			t.Fatal("good token refused")
		}
	}
	if inner["good"] != 4 {
		t.Errorf("calls = %d, want one per distinct audience list (4)", inner["good"])
	}
}

func TestCachedTokenBounded(t *testing.T) {
	inner := countingTokens{}
	c := NewCachedToken(inner, TokenCacheOptions{FailureTTL: time.Minute, MaxEntries: 3}).(*tokenCache)
	for _, tok := range []string{"t1", "t2", "t3", "t4", "t5"} {
		c.AuthenticateToken(context.Background(), tok)
	}
	if n := len(c.entries); n > 3 {
		t.Errorf("%d entries, want at most 3", n)
	}
	if _, ok := c.get(c.key(context.Background(), "t5")); !ok {
		t.Error("the newest entry was evicted")
	}
}

func TestCachedTokenDisabled(t *testing.T) {
	inner := countingTokens{}
	if _, cached := NewCachedToken(inner, TokenCacheOptions{}).(*tokenCache); cached {
		t.Error("a cache with no TTL should be the authenticator itself")
	}
}
