package storage

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// continueAPIVersion is the only version of continue token there is.
const continueAPIVersion = "meta.k8s.io/v1"

// continueToken is the JSON inside a continue token. Its format is kube's,
// so that tokens mean the same thing to capstan and kube-apiserver.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

// EncodeContinue returns the continue token that resumes a list of
// keyPrefix at key (the first key not yet returned) at revision rv. rv -1
// means "at the latest revision" (offered after a compaction).
func EncodeContinue(key, keyPrefix string, rv int64) (string, error) {
	start, ok := strings.CutPrefix(key, keyPrefix)
	if !ok {
		return "", fmt.Errorf("continue key %q is not under the list prefix %q", key, keyPrefix)
	}
	data, err := json.Marshal(continueToken{APIVersion: continueAPIVersion, ResourceVersion: rv, StartKey: start})
	if err != nil {
		return "", fmt.Errorf("encoding continue token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(data), nil
}

// DecodeContinue returns the key a list of keyPrefix resumes at and the
// revision to read at (negative: the latest). The key is always under
// keyPrefix: a token cannot steer a read outside the list. Errors wrap
// ErrInvalidContinue.
func DecodeContinue(token, keyPrefix string) (fromKey string, rv int64, err error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, invalidContinue("continue key is not valid: %v", err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, invalidContinue("continue key is not valid: %v", err)
	}
	switch {
	case c.APIVersion != continueAPIVersion:
		return "", 0, invalidContinue("continue key is not valid: server does not recognize this encoded version %v", c.APIVersion)
	case c.ResourceVersion == 0:
		return "", 0, invalidContinue("continue key is not valid: incorrect encoded start resourceVersion (version %s)", continueAPIVersion)
	case c.StartKey == "":
		return "", 0, invalidContinue("continue key is not valid: encoded start key empty (version %s)", continueAPIVersion)
	}
	// A start key that path.Clean would change ("..", "//", "/./") could
	// climb out of keyPrefix once appended to it.
	key := c.StartKey
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	if path.Clean(key) != key {
		return "", 0, invalidContinue("continue key is not valid: %v", c.StartKey)
	}
	return keyPrefix + key[1:], c.ResourceVersion, nil
}

// continueError is a token's defect in kube's words; it is an
// ErrInvalidContinue.
type continueError struct{ msg string }

func (e *continueError) Error() string { return e.msg }
func (e *continueError) Unwrap() error { return ErrInvalidContinue }

func invalidContinue(format string, args ...any) error {
	return &continueError{fmt.Sprintf(format, args...)}
}
