package encrypt

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/capstan-io/capstan/storage/value"
)

var key32 = []byte("0123456789abcdef0123456789abcdef")

func ciphers(t testing.TB) map[string]value.Transformer {
	t.Helper()
	out := map[string]value.Transformer{}
	for name, f := range map[string]func([]byte) (value.Transformer, error){
		"aescbc": NewCBC, "aesgcm": NewGCM, "secretbox": NewSecretbox, "hkdfgcm": NewHKDFGCM,
	} {
		tr, err := f(key32)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = tr
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	ad := []byte("/registry/secrets/default/s")
	for name, tr := range ciphers(t) {
		for _, size := range []int{0, 1, 15, 16, 17, 1024} {
			plain := bytes.Repeat([]byte{'x'}, size)
			stored, err := tr.TransformToStorage(ctx, plain, ad)
			if err != nil {
				t.Fatalf("%s/%d: %v", name, size, err)
			}
			if size >= 16 && bytes.Contains(stored, plain) {
				t.Fatalf("%s/%d: stored value holds the plain text", name, size)
			}
			again, _ := tr.TransformToStorage(ctx, plain, ad)
			if bytes.Equal(stored, again) {
				t.Fatalf("%s/%d: two encryptions are equal: no random nonce", name, size)
			}
			out, stale, err := tr.TransformFromStorage(ctx, stored, ad)
			if err != nil || stale || !bytes.Equal(out, plain) {
				t.Fatalf("%s/%d: got %q %v %v", name, size, out, stale, err)
			}
		}
	}
}

// TestTampered: every changed, cut or extended value is an error, never a
// panic or wrong plain text, except where the format cannot tell (CBC
// authenticates nothing: it only fails when the padding breaks).
func TestTampered(t *testing.T) {
	ctx := context.Background()
	ad := []byte("/registry/secrets/default/s")
	plain := []byte("the plain text of a secret value")
	for name, tr := range ciphers(t) {
		stored, err := tr.TransformToStorage(ctx, plain, ad)
		if err != nil {
			t.Fatal(err)
		}
		cases := map[string][]byte{"empty": {}, "short": stored[:5], "cut": stored[:len(stored)-1], "longer": append(bytes.Clone(stored), 0)}
		for i := range stored {
			flipped := bytes.Clone(stored)
			flipped[i] ^= 0x01
			cases[fmt.Sprintf("flip %d", i)] = flipped
		}
		for what, data := range cases {
			out, _, err := tr.TransformFromStorage(ctx, data, ad)
			if name == "aescbc" && err == nil {
				if bytes.Equal(out, plain) {
					t.Errorf("%s %s: read as the original", name, what)
				}
				continue
			}
			if err == nil {
				t.Errorf("%s %s: no error", name, what)
			}
		}
	}
}

// TestAuthenticatedData: GCM values are bound to their etcd key, as kube's;
// CBC and secretbox values are not.
func TestAuthenticatedData(t *testing.T) {
	ctx := context.Background()
	for name, tr := range ciphers(t) {
		stored, err := tr.TransformToStorage(ctx, []byte("v"), []byte("/registry/secrets/a/s"))
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = tr.TransformFromStorage(ctx, stored, []byte("/registry/secrets/b/s"))
		if bound := name == "aesgcm" || name == "hkdfgcm"; bound != (err != nil) {
			t.Errorf("%s: read under another key: %v", name, err)
		}
	}
}

func TestKeySizes(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func([]byte) (value.Transformer, error)
		size int
		ok   bool
	}{
		{"aescbc", NewCBC, 16, true}, {"aescbc", NewCBC, 24, true}, {"aescbc", NewCBC, 20, false},
		{"aesgcm", NewGCM, 32, true}, {"aesgcm", NewGCM, 31, false},
		{"secretbox", NewSecretbox, 32, true}, {"secretbox", NewSecretbox, 16, false},
		{"hkdfgcm", NewHKDFGCM, 32, true}, {"hkdfgcm", NewHKDFGCM, 16, false},
	} {
		_, err := tc.f(make([]byte, tc.size))
		if (err == nil) != tc.ok {
			t.Errorf("%s with a %d-byte key: %v", tc.name, tc.size, err)
		}
	}
}

// BenchmarkTransform measures the cost of encryption at rest per 1 KiB
// value, on writes and reads.
func BenchmarkTransform(b *testing.B) {
	ctx := context.Background()
	ad := []byte("/registry/secrets/default/s")
	plain := bytes.Repeat([]byte{'x'}, 1024)
	all := ciphers(b)
	all["identity"] = value.Identity
	for _, name := range []string{"identity", "aescbc", "aesgcm", "secretbox", "hkdfgcm"} {
		tr := all[name]
		stored, err := tr.TransformToStorage(ctx, plain, ad)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/write", func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			for b.Loop() {
				if _, err := tr.TransformToStorage(ctx, plain, ad); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/read", func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			for b.Loop() {
				if _, _, err := tr.TransformFromStorage(ctx, stored, ad); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
