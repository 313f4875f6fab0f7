package server

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// TestZPages: /flagz and /statusz as kube-apiserver v1.37.2 serves them:
// text by default, config.k8s.io Flagz and Statusz in JSON or YAML when
// asked for (v1alpha1 with kube's deprecation warning), kube's 406 for
// anything else, and only for those allowed the paths (system:monitoring).
func TestZPages(t *testing.T) {
	t.Parallel()
	e := e2eutil.Start(t, "--goaway-chance=0.01")
	header := "\napiserver %s\nWarning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees and is for debugging purposes only.\n"
	r := e.Do(t, http.MethodGet, "/flagz", nil)
	if r.Code != http.StatusOK || r.Header.Get("Content-Type") != "text/plain; charset=utf-8" || !strings.HasPrefix(string(r.Body), e2eutil.Sprintf(header, "flagz")) {
		t.Fatalf("text /flagz: %d %s\n%s", r.Code, r.Header.Get("Content-Type"), r.Body)
	}
	if !strings.Contains(string(r.Body), "\ngoaway-chance") || !strings.Contains(string(r.Body), "0.01\n") {
		t.Errorf("text /flagz lacks goaway-chance 0.01:\n%s", r.Body)
	}
	r = e.Do(t, http.MethodGet, "/statusz", nil, "Accept", "*/*")
	for _, want := range []string{e2eutil.Sprintf(header, "statusz"), "Binary version", "1.37.2", "Emulation version", "1.37", "Go version", "Up",
		"/flagz /healthz /livez /metrics /readyz /statusz /version"} {
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("text /statusz lacks %q:\n%s", want, r.Body)
		}
	}

	r = e.Do(t, http.MethodGet, "/flagz", nil, "Accept", "application/json;as=Flagz;g=config.k8s.io;v=v1beta1")
	var flagz struct {
		Kind, APIVersion string
		Metadata         struct{ Name string }
		Flags            map[string]string
	}
	if err := json.Unmarshal(r.Body, &flagz); err != nil || r.Header.Get("Content-Type") != "application/json;g=config.k8s.io;v=v1beta1;as=Flagz" {
		t.Fatalf("JSON /flagz: %v %s\n%s", err, r.Header.Get("Content-Type"), r.Body)
	}
	if flagz.Kind != "Flagz" || flagz.APIVersion != "config.k8s.io/v1beta1" || flagz.Metadata.Name != "apiserver" || flagz.Flags["goaway-chance"] != "0.01" {
		t.Errorf("JSON /flagz: %s", r.Body)
	}
	r = e.Do(t, http.MethodGet, "/statusz", nil, "Accept", "application/json;as=Statusz;g=config.k8s.io;v=v1alpha1")
	var statusz struct {
		Kind, APIVersion, BinaryVersion, EmulationVersion string
		Paths                                             []string
	}
	if err := json.Unmarshal(r.Body, &statusz); err != nil || statusz.Kind != "Statusz" || statusz.APIVersion != "config.k8s.io/v1alpha1" ||
		statusz.BinaryVersion != "1.37.2" || statusz.EmulationVersion != "1.37" || len(statusz.Paths) != 7 {
		t.Errorf("JSON /statusz v1alpha1: %v\n%s", err, r.Body)
	}
	if w := r.Header.Get("Warning"); w != `299 - "This version of the statusz endpoint is deprecated. Please use a newer version."` {
		t.Errorf("v1alpha1 warning %q", w)
	}
	r = e.Do(t, http.MethodGet, "/statusz", nil, "Accept", "application/yaml;as=Statusz;g=config.k8s.io;v=v1beta1")
	if r.Header.Get("Content-Type") != "application/yaml;g=config.k8s.io;v=v1beta1;as=Statusz" || !strings.Contains(string(r.Body), "kind: Statusz\n") {
		t.Errorf("YAML /statusz: %s\n%s", r.Header.Get("Content-Type"), r.Body)
	}
	for _, accept := range []string{"application/json", "application/json;as=Flagz;g=config.k8s.io;v=v9"} {
		e.Do(t, http.MethodGet, "/flagz", nil, "Accept", accept).WantStatus(t, http.StatusNotAcceptable, "NotAcceptable",
			"only the following media types are accepted: application/json, application/yaml, text/plain")
	}

	as := func(groups ...string) *http.Client {
		cfg := rest.CopyConfig(e.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: "someone", Groups: groups}
		hc, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return hc
	}
	for _, path := range []string{"/flagz", "/statusz"} {
		if r := e2eutil.DoWith(t, as("system:authenticated"), http.MethodGet, e.URL+path, nil); r.Code != http.StatusForbidden {
			t.Errorf("%s as an ordinary user: %d, want 403", path, r.Code)
		}
		if r := e2eutil.DoWith(t, as("system:monitoring", "system:authenticated"), http.MethodGet, e.URL+path, nil); r.Code != http.StatusOK {
			t.Errorf("%s as system:monitoring: %d %s", path, r.Code, r.Body)
		}
	}
}
