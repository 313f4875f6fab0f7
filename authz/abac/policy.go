// Package abac is kube's Attribute-Based Access Control authorizer
// (--authorization-mode=ABAC): a file of JSON policies, one a line, each
// allowing a user or group some resources, non-resource paths, or both.
package abac

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// The group of the policy file's objects and the versions kube reads.
const (
	Group   = "abac.authorization.kubernetes.io"
	v1beta1 = Group + "/v1beta1"
	v0      = Group + "/v0"
	// allAuthenticated is who "*" and, in v0, no subject at all mean.
	allAuthenticated = "system:authenticated"
)

// Spec is one policy, in the v1beta1 form every version is read into.
type Spec struct {
	User            string `json:"user,omitempty"`
	Group           string `json:"group,omitempty"`
	Readonly        bool   `json:"readonly,omitempty"`
	APIGroup        string `json:"apiGroup,omitempty"`
	Resource        string `json:"resource,omitempty"`
	Namespace       string `json:"namespace,omitempty"`
	NonResourcePath string `json:"nonResourcePath,omitempty"`
}

// line is one line of the file: a v1beta1 Policy ({"apiVersion", "kind",
// "spec"}) or a v0 one (its fields at the top, with or without apiVersion).
type line struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       Spec   `json:"spec"`
	// v0's fields.
	User      string `json:"user"`
	Group     string `json:"group"`
	Readonly  bool   `json:"readonly"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace"`
}

// Load reads a policy file: blank lines and lines starting with # are
// skipped; an error names the line, as kube's does.
func Load(path string) ([]Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		out []Spec
		n   int
	)
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		n++
		b := scanner.Bytes()
		if t := bytes.TrimSpace(b); len(t) == 0 || t[0] == '#' {
			continue
		}
		p, err := parse(b)
		if err != nil {
			return nil, fmt.Errorf("error reading policy file %s, line %d: %s: %v", path, n, b, err)
		}
		out = append(out, p)
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("error reading policy file %s: %v", path, err)
	}
	return out, nil
}

// parse reads one policy line.
func parse(b []byte) (Spec, error) {
	var l line
	if err := json.Unmarshal(b, &l); err != nil {
		return Spec{}, err
	}
	switch {
	case l.APIVersion == v1beta1 && l.Kind == "Policy":
		s := l.Spec
		if s.User == "*" || s.Group == "*" {
			s.Group, s.User = allAuthenticated, ""
		}
		return s, nil
	case l.APIVersion == "" || l.Kind == "" || (l.APIVersion == v0 && l.Kind == "Policy"):
		return fromV0(l), nil
	}
	return Spec{}, fmt.Errorf("no kind %q is registered for version %q", l.Kind, l.APIVersion)
}

// fromV0 gives a v0 policy its v1beta1 meaning: no subject or "*" is every
// authenticated user, no namespace or resource is all of them, every API
// group, and neither namespace nor resource also allows non-resource paths.
func fromV0(l line) Spec {
	s := Spec{User: l.User, Group: l.Group, Readonly: l.Readonly, Resource: l.Resource, Namespace: l.Namespace, APIGroup: "*"}
	if l.User == "" && l.Group == "" {
		s.Group = allAuthenticated
	}
	if l.User == "*" || l.Group == "*" {
		s.Group, s.User = allAuthenticated, ""
	}
	if l.Namespace == "" {
		s.Namespace = "*"
	}
	if l.Resource == "" {
		s.Resource = "*"
	}
	if l.Namespace == "" && l.Resource == "" {
		s.NonResourcePath = "*"
	}
	return s
}

// nonResourcePathMatches: "*" is every path, "/prefix*" every path that
// starts with /prefix, anything else that path only.
func nonResourcePathMatches(pattern, path string) bool {
	if pattern == "*" || pattern == path {
		return true
	}
	return strings.HasSuffix(pattern, "*") && strings.HasPrefix(path, strings.TrimRight(pattern, "*"))
}
