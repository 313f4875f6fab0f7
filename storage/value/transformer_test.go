package value

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// suffix is a test transformer: it appends its tag on write and requires
// it on read.
type suffix string

func (s suffix) TransformToStorage(_ context.Context, data, _ []byte) ([]byte, error) {
	return append(append([]byte{}, data...), s...), nil
}

func (s suffix) TransformFromStorage(_ context.Context, data, _ []byte) ([]byte, bool, error) {
	if !strings.HasSuffix(string(data), string(s)) {
		return nil, false, errors.New("bad " + string(s))
	}
	return data[:len(data)-len(s)], false, nil
}

func TestPrefixUnion(t *testing.T) {
	ctx := context.Background()
	noMatch := errors.New("no matching prefix found")
	u := NewPrefixUnion(noMatch,
		Prefixed{Prefix: []byte("k8s:enc:a:v1:"), Transformer: suffix("-a")},
		Prefixed{Prefix: []byte("k8s:enc:b:v1:"), Transformer: suffix("-b")},
		Prefixed{Prefix: []byte{}, Transformer: Identity})
	stored, err := u.TransformToStorage(ctx, []byte("v"), nil)
	if err != nil || string(stored) != "k8s:enc:a:v1:v-a" {
		t.Fatalf("write: %q %v", stored, err)
	}
	for _, tc := range []struct {
		in, out string
		stale   bool
		err     string
	}{
		{in: "k8s:enc:a:v1:v-a", out: "v"},
		{in: "k8s:enc:b:v1:v-b", out: "v", stale: true},
		{in: "plain", out: "plain", stale: true},
		{in: "k8s:enc:a:v1:v-b", err: "bad -a"},
		// identity's refusal is passed over: the error is the union's.
		{in: "k8s:enc:c:v1:v", err: "no matching prefix found"},
	} {
		out, stale, err := u.TransformFromStorage(ctx, []byte(tc.in), nil)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || string(out) != tc.out || stale != tc.stale {
			t.Errorf("%q: got %q stale=%v %v", tc.in, out, stale, err)
		}
	}
}

func TestPrefixUnionErrors(t *testing.T) {
	ctx := context.Background()
	// Two transformers with the same prefix both fail: kube's aggregate.
	u := NewPrefixUnion(nil,
		Prefixed{Prefix: []byte("p:"), Transformer: suffix("-a")},
		Prefixed{Prefix: []byte("p:"), Transformer: suffix("-b")})
	_, _, err := u.TransformFromStorage(ctx, []byte("p:x"), nil)
	if err == nil || err.Error() != "[bad -a, bad -b]" {
		t.Fatalf("got %v", err)
	}
	_, _, err = u.TransformFromStorage(ctx, []byte("q:x"), nil)
	if err == nil || err.Error() != "the provided value does not match any of the supported transformers" {
		t.Fatalf("got %v", err)
	}
}

func TestIdentity(t *testing.T) {
	ctx := context.Background()
	if out, stale, err := Identity.TransformFromStorage(ctx, []byte("k8s\x00abc"), nil); err != nil || stale || string(out) != "k8s\x00abc" {
		t.Fatalf("got %q %v %v", out, stale, err)
	}
	if _, _, err := Identity.TransformFromStorage(ctx, []byte("k8s:enc:aescbc:v1:k:x"), nil); !errors.Is(err, ErrEncryptedData) {
		t.Fatalf("got %v", err)
	}
}
