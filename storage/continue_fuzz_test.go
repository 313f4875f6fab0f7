package storage

import (
	"errors"
	"path"
	"strings"
	"testing"
)

// FuzzDecodeContinue: a client's continue token, however garbled, is
// either refused with ErrInvalidContinue or names a key under the list's
// prefix that encodes back to a token meaning the same.
func FuzzDecodeContinue(f *testing.F) {
	const prefix = "/registry/configmaps/ns/"
	good, err := EncodeContinue(prefix+"cm-1", prefix, 42)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		good, "", "!!", "e30", // {}
		"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIuLi8uLi9zZWNyZXRzL3gifQ", // start ../../secrets/x
		"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiYSJ9",                   // rv -1
		"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MWUxMDAsInN0YXJ0IjoiYSJ9",               // rv 1e100
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		key, rv, err := DecodeContinue(token, prefix)
		if err != nil {
			if !errors.Is(err, ErrInvalidContinue) {
				t.Fatalf("error %v is not ErrInvalidContinue", err)
			}
			return
		}
		if !strings.HasPrefix(key, prefix) || rv == 0 {
			t.Fatalf("token %q: key %q rv %d", token, key, rv)
		}
		if rest := key[len(prefix)-1:]; path.Clean(rest) != rest {
			t.Fatalf("token %q: key %q climbs out of %q", token, key, prefix)
		}
		again, err := EncodeContinue(key, prefix, rv)
		if err != nil {
			t.Fatal(err)
		}
		key2, rv2, err := DecodeContinue(again, prefix)
		if err != nil || key2 != key || rv2 != rv {
			t.Fatalf("round trip of %q: %q %d %v, want %q %d", token, key2, rv2, err, key, rv)
		}
	})
}
