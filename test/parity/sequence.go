// Package parity is the differential harness of capstan against
// kube-apiserver: request sequences written as data (testdata/sequences,
// plus the ones Generate makes for every resource of kube's recorded
// discovery) run against a server, and the answers, normalised so that
// generated values do not count, are compared with kube's recorded ones.
// TestParity runs capstan against the recording; with PARITY_RECORD=1 it
// runs kube-apiserver v1.37.2 live first and rewrites the recording.
package parity

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// Sequence is an ordered list of requests run in a namespace of its own
// ({ns} in paths, headers and bodies), created before the first step.
type Sequence struct {
	Name string `json:"name"`
	// Flags are server flags both servers run the sequence with (opt-in
	// admission plugins); sequences with the same flags share a server.
	Flags []string `json:"flags,omitempty"`
	Steps []Step   `json:"steps"`
}

// Step is one request and how to read its answer.
type Step struct {
	ID string `json:"id"`
	// Req is "METHOD /path?query", the path sent as written (after
	// variables are put in), percent-encodings and dot segments included.
	Req     string            `json:"req"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	// As sends the request with no client credentials but its own
	// Authorization header (a token saved by an earlier step).
	As string `json:"as,omitempty"`
	// Save names values of the answer for later steps: variable -> dotted
	// path in the JSON body (metadata.resourceVersion).
	Save map[string]string `json:"save,omitempty"`
	// Until repeats the request until it answers this status (a CRD being
	// established), for at most a minute.
	Until int `json:"until,omitempty"`
	// Events stops reading a watch after this many events; without it a
	// watch is read until the server ends it.
	Events int `json:"events,omitempty"`
	// Compare is what is compared: "all" (the default), "shape" (status,
	// headers and the body's kind and apiVersion: lists of objects each
	// server makes for itself) or "status" (status and headers only).
	Compare string `json:"compare,omitempty"`
}

// Method and Target split Req.
func (s Step) Method() string { m, _, _ := strings.Cut(s.Req, " "); return m }

// Target is the request target of Req.
func (s Step) Target() string { _, t, _ := strings.Cut(s.Req, " "); return t }

// LoadSequences reads every *.yaml file of dir, in name order.
func LoadSequences(dir string) ([]Sequence, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Sequence
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var s Sequence
		if err := yaml.UnmarshalStrict(data, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		if err := s.check(); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func (s Sequence) check() error {
	if s.Name == "" || len(s.Steps) == 0 {
		return fmt.Errorf("a sequence needs a name and steps")
	}
	seen := map[string]bool{}
	for i, st := range s.Steps {
		if st.ID == "" || seen[st.ID] {
			return fmt.Errorf("step %d: missing or repeated id %q", i, st.ID)
		}
		seen[st.ID] = true
		if st.Method() == "" || !strings.HasPrefix(st.Target(), "/") {
			return fmt.Errorf("step %s: req %q is not \"METHOD /path\"", st.ID, st.Req)
		}
		switch st.Compare {
		case "", "all", "shape", "status":
		default:
			return fmt.Errorf("step %s: compare %q", st.ID, st.Compare)
		}
	}
	return nil
}
