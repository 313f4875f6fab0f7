package storage

import (
	"fmt"
	"strconv"
	"strings"
)

// PrepareKey validates key as a key of the resource whose keys start with
// resourcePrefix ("/configmaps") and returns it in the form a backend
// reads: a recursive key (a collection) ends in "/", so that listing "/a"
// never returns "/ab/x". Every implementation of Interface checks its keys
// here, so that a key refused by one is refused by all. Errors wrap
// ErrInvalidKey.
func PrepareKey(resourcePrefix, key string, recursive bool) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	resourcePrefix = strings.TrimSuffix(resourcePrefix, "/")
	if key != resourcePrefix && !strings.HasPrefix(key, resourcePrefix+"/") {
		return "", NewError(ErrInvalidKey, key, 0, fmt.Sprintf("outside the resource prefix %q", resourcePrefix))
	}
	if recursive && !strings.HasSuffix(key, "/") {
		key += "/"
	}
	return key, nil
}

// ValidateKey refuses any key that could name something else than what it
// spells once appended to a backend's prefix: relative keys, empty or
// "."/".." segments, and NUL bytes (which sort keys around a range
// boundary). A trailing "/" is allowed: it names a collection.
func ValidateKey(key string) error {
	invalid := func(why string) error { return NewError(ErrInvalidKey, key, 0, why) }
	switch {
	case key == "" || key == "/":
		return invalid("empty key")
	case !strings.HasPrefix(key, "/"):
		return invalid("key must start with /")
	case strings.ContainsRune(key, 0):
		return invalid("key contains a NUL byte")
	}
	for _, s := range strings.Split(strings.TrimSuffix(key[1:], "/"), "/") {
		switch s {
		case "":
			return invalid("empty path segment")
		case ".", "..":
			return invalid("relative path segment")
		}
	}
	return nil
}

// ParseResourceVersion parses a resourceVersion: "" and "0" are 0. Errors
// wrap ErrInvalidResourceVersion.
func ParseResourceVersion(rv string) (uint64, error) {
	if rv == "" || rv == "0" {
		return 0, nil
	}
	v, err := strconv.ParseUint(rv, 10, 64)
	if err == nil && v > 1<<63-1 {
		err = fmt.Errorf("must be at most %d", int64(1<<63-1))
	}
	if err != nil {
		// kube's wording: the field error of the parse.
		return 0, fmt.Errorf("%w: resourceVersion: Invalid value: %q: %v", ErrInvalidResourceVersion, rv, err)
	}
	return v, nil
}
