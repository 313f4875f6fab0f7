package authn

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzTokenFile: any --token-auth-file is refused with an error or
// authenticates exactly the tokens of its records, never the empty one.
func FuzzTokenFile(f *testing.F) {
	for _, seed := range []string{
		"t1,alice,uid1\nt2,bob,uid2,\"g1,g2\"\n",
		",empty,uid\nt,a,u\nt,b,v\n",
		"t1,alice\n",
		"\"unterminated,a,b\n",
		"t\x00,a,b,c,d,e\r\n",
	} {
		f.Add([]byte(seed), "t1")
	}
	f.Fuzz(func(t *testing.T, data []byte, token string) {
		path := filepath.Join(t.TempDir(), "tokens.csv")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		auth, err := NewTokenFile(path, nil)
		if err != nil {
			return
		}
		resp, ok, err := auth.AuthenticateToken(context.Background(), token)
		if err != nil {
			t.Fatalf("token %q: %v", token, err)
		}
		if !ok {
			return
		}
		if token == "" || !fileHasToken(data, token, resp.User.Name) {
			t.Fatalf("token %q accepted as %+v, not a record of %q", token, resp.User, data)
		}
	})
}

// fileHasToken reports whether a record of the CSV data has token and name.
func fileHasToken(data []byte, token, name string) bool {
	r := csv.NewReader(strings.NewReader(string(data)))
	r.FieldsPerRecord = -1
	recs, _ := r.ReadAll()
	for _, rec := range recs {
		if len(rec) >= 3 && rec[0] == token && rec[1] == name {
			return true
		}
	}
	return false
}
