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
// resources the servers of a chain serve. As in kube, GA versions are on
// by default and beta versions off; the zero value (and nil) serves just
// that. Filter remembers what it was offered, so that CheckOffered can
// refuse keys that name nothing capstan serves.
//
// capstan serves no alpha version, so api/alpha=true is refused rather
// than ignored; api/all=true turns on the beta versions.
type APIEnablement struct {
	// classes are api/all, api/ga, api/beta and api/alpha: each turns
	// every version of its class on or off, in that order.
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

// IsVersionClass tells whether key names a class of versions: api/all,
// api/ga, api/beta or api/alpha.
func IsVersionClass(key string) bool {
	switch key {
	case "api/all", "api/ga", "api/beta", "api/alpha":
		return true
	}
	return false
}

// Set applies one --runtime-config key.
func (e *APIEnablement) Set(key string, on bool) error {
	switch key {
	case "api/all", "api/ga", "api/beta", "api/alpha", "api/legacy":
		if on && key == "api/alpha" {
			return fmt.Errorf("--runtime-config=%s=true: capstan serves no alpha API versions", key)
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

// versionOn tells whether gv is on: GA versions are by default, others
// not (kube 1.37 turns no beta version on by default).
func (e *APIEnablement) versionOn(gv schema.GroupVersion) bool {
	if e == nil {
		return gaVersion.MatchString(gv.Version)
	}
	if on, ok := e.versions[gv]; ok {
		return on
	}
	on := gaVersion.MatchString(gv.Version)
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

// ResourceOn tells whether gvr (a main resource) is served: a
// group/version/resource key decides, as in kube, even against its
// version's; otherwise the version does. Servers build the storage of
// resources that are off by default only when this says so.
func (e *APIEnablement) ResourceOn(gvr schema.GroupVersionResource) bool {
	if e != nil {
		if on, set := e.resources[gvr]; set {
			return on
		}
	}
	return e.versionOn(gvr.GroupVersion())
}

// Filter drops from g the versions and resources that are off; ok is
// false when nothing of g is left. A version is served when any of its
// resources is.
func (e *APIEnablement) Filter(g APIGroup) (_ APIGroup, ok bool) {
	if e != nil {
		e.mu.Lock()
		e.offered = append(e.offered, g)
		e.mu.Unlock()
	}
	out := APIGroup{Name: g.Name, Priority: g.Priority}
	for _, v := range g.Versions {
		gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
		kept := GroupVersion{Version: v.Version}
		for _, r := range v.Resources {
			main, _, _ := strings.Cut(r.Name, "/")
			if e.ResourceOn(gv.WithResource(main)) {
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
