package endpoints

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// APIEnablement is --runtime-config resolved: which group versions and
// resources the servers of a chain leave out. The zero value serves
// everything. Filter remembers what it was offered, so that CheckOffered
// can refuse keys that name nothing capstan serves.
//
// capstan serves only GA versions, so turning a class of versions on
// (api/beta=true, api/alpha=true) or a version capstan does not serve is
// refused rather than ignored.
type APIEnablement struct {
	// classes are api/all, api/ga, api/beta and api/alpha: false turns
	// every version of that class off.
	classes map[string]bool
	// versions and resources are explicit group/version[/resource] keys.
	versions  map[schema.GroupVersion]bool
	resources map[schema.GroupVersionResource]bool

	mu      sync.Mutex // guards offered
	offered []APIGroup
}

var (
	gaVersion    = regexp.MustCompile(`^v\d+$`)
	betaVersion  = regexp.MustCompile(`^v\d+beta\d+$`)
	alphaVersion = regexp.MustCompile(`^v\d+alpha\d+$`)
)

// Set applies one --runtime-config key.
func (e *APIEnablement) Set(key string, on bool) error {
	switch key {
	case "api/all", "api/ga", "api/beta", "api/alpha", "api/legacy":
		if on && key != "api/ga" && key != "api/legacy" {
			return fmt.Errorf("--runtime-config=%s=true: capstan serves only GA API versions", key)
		}
		if e.classes == nil {
			e.classes = map[string]bool{}
		}
		e.classes[key] = on
		return nil
	}
	tokens := strings.Split(key, "/")
	if len(tokens) == 1 && key == "v1" {
		// "v1" alone is the core group's version, as kube reads it.
		tokens = []string{"", "v1"}
	}
	if len(tokens) != 2 && len(tokens) != 3 {
		return fmt.Errorf("runtime-config invalid key %s", key)
	}
	if tokens[0] == "api" {
		tokens[0] = ""
	}
	gv := schema.GroupVersion{Group: tokens[0], Version: tokens[1]}
	if gv.Version == "" {
		return fmt.Errorf("runtime-config invalid key %s", key)
	}
	if len(tokens) == 2 {
		if e.versions == nil {
			e.versions = map[schema.GroupVersion]bool{}
		}
		e.versions[gv] = on
		return nil
	}
	if strings.ToLower(tokens[2]) != tokens[2] {
		return fmt.Errorf("invalid key %v: group/version/resource and resource is always lowercase plural, not %q", key, tokens[2])
	}
	if e.resources == nil {
		e.resources = map[schema.GroupVersionResource]bool{}
	}
	e.resources[gv.WithResource(tokens[2])] = on
	return nil
}

// versionOn tells whether gv, served by default, stays on.
func (e *APIEnablement) versionOn(gv schema.GroupVersion) bool {
	if on, ok := e.versions[gv]; ok {
		return on
	}
	on := true
	if v, ok := e.classes["api/all"]; ok {
		on = v
	}
	class := "api/ga"
	switch {
	case betaVersion.MatchString(gv.Version):
		class = "api/beta"
	case alphaVersion.MatchString(gv.Version):
		class = "api/alpha"
	}
	if v, ok := e.classes[class]; ok {
		on = v
	}
	return on
}

// Filter drops from g the versions and resources turned off; ok is false
// when nothing of g is left. A nil APIEnablement keeps everything.
func (e *APIEnablement) Filter(g APIGroup) (_ APIGroup, ok bool) {
	if e == nil {
		return g, true
	}
	e.mu.Lock()
	e.offered = append(e.offered, g)
	e.mu.Unlock()
	out := APIGroup{Name: g.Name, Priority: g.Priority}
	for _, v := range g.Versions {
		gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
		if !e.versionOn(gv) {
			continue
		}
		kept := GroupVersion{Version: v.Version}
		for _, r := range v.Resources {
			main, _, _ := strings.Cut(r.Name, "/")
			if on, set := e.resources[gv.WithResource(main)]; !set || on {
				kept.Resources = append(kept.Resources, r)
			}
		}
		if len(kept.Resources) > 0 {
			out.Versions = append(out.Versions, kept)
		}
	}
	return out, len(out.Versions) > 0
}

// CheckOffered refuses keys that name a group version or resource no
// server of the chain offered, as kube refuses unknown groups: asking
// capstan to serve or turn off what it does not have must not pass
// unnoticed. Call it once the chain is built.
func (e *APIEnablement) CheckOffered() error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	has := map[schema.GroupVersion][]string{}
	for _, g := range e.offered {
		for _, v := range g.Versions {
			gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
			for _, r := range v.Resources {
				has[gv] = append(has[gv], r.Name)
			}
		}
	}
	var unknown []string
	for gv := range e.versions {
		if _, ok := has[gv]; !ok {
			unknown = append(unknown, gv.String())
		}
	}
	for gvr := range e.resources {
		if !slices.Contains(has[gvr.GroupVersion()], gvr.Resource) {
			unknown = append(unknown, gvr.GroupVersion().String()+"/"+gvr.Resource)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return errors.New("--runtime-config: unknown api groups " + strings.Join(unknown, ",") + " (capstan does not serve them)")
}
