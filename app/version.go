package app

import (
	"runtime"
	"runtime/debug"
	"strings"

	"k8s.io/apimachinery/pkg/version"
)

// versionInfo is what /version reports. capstan speaks the API of the
// Kubernetes release its k8s.io modules come from, so it reports that
// release: clients pick API features by the server's minor version.
//
// --version=vX.Y.Z sets the version reported, as kube's flag does.
func versionInfo(flag versionFlag) version.Info {
	v := version.Info{
		Major: "1", Minor: "37", GitVersion: "v1.37.2", GitTreeState: "clean",
		GoVersion: runtime.Version(), Compiler: runtime.Compiler, Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "k8s.io/api" && strings.HasPrefix(dep.Version, "v0.") {
				parts := strings.SplitN(strings.TrimPrefix(dep.Version, "v0."), ".", 2)
				if len(parts) == 2 {
					v.Minor, v.GitVersion = parts[0], "v1."+parts[0]+"."+parts[1]
				}
			}
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v.GitCommit = s.Value
			}
		}
	}
	if strings.HasPrefix(string(flag), "v") {
		v.GitVersion = string(flag)
	}
	return v
}

// capstanBuild is capstan's own build: its module version, or the commit
// it was built from.
func capstanBuild() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			return bi.Main.Version + " " + s.Value
		}
	}
	return bi.Main.Version
}
