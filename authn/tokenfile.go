package authn

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// NewTokenFile reads a static token file (--token-auth-file): CSV records
// of token, user name, user UID and, optionally, a fourth column of groups
// separated by commas (quote it when it holds more than one). Records with
// an empty token are skipped; a repeated token keeps its last record. Both
// are logged as warnings to logger, which may be nil.
func NewTokenFile(path string, logger *slog.Logger) (TokenAuthenticator, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	tokens := map[string]*User{}
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	for n := 1; ; n++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("token file %q: record %d has %d columns, needs at least 3 (token, user name, user uid)", path, n, len(rec))
		}
		if rec[0] == "" {
			logger.Warn("token file has a record with an empty token", "file", path, "record", n)
			continue
		}
		if _, dup := tokens[rec[0]]; dup {
			logger.Warn("token file has a duplicate token; the last record wins", "file", path, "record", n)
		}
		u := &User{Name: rec[1], UID: rec[2]}
		if len(rec) >= 4 {
			u.Groups = strings.Split(rec[3], ",")
		}
		tokens[rec[0]] = u
	}
	return StaticTokens(tokens), nil
}

// StaticTokens authenticates the tokens of a fixed map; other tokens get no
// opinion.
func StaticTokens(tokens map[string]*User) TokenAuthenticator {
	return TokenAuthenticatorFunc(func(_ context.Context, token string) (*Response, bool, error) {
		u, ok := tokens[token]
		if !ok {
			return nil, false, nil
		}
		c := *u
		return &Response{User: &c}, true, nil
	})
}
