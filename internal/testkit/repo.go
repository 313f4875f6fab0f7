// Package testkit holds helpers for capstan's tests: the repository root and
// the real kubectl, built from the module's pinned k8s.io/kubectl.
package testkit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RepoRoot returns the module root: the nearest folder, from the working
// directory (a test's package folder) upwards, that holds a go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testkit: no go.mod above the working directory")
		}
		dir = parent
	}
}

// requiredVersion returns the version go.mod requires of module.
func requiredVersion(goMod []byte, module string) (string, error) {
	for _, line := range strings.Split(string(goMod), "\n") {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) >= 2 && fields[0] == module {
			return fields[1], nil
		}
	}
	return "", fmt.Errorf("testkit: go.mod does not require %s", module)
}
