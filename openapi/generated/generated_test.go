package generated

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

const file = "zz_generated.openapi.go"

// The header names the module versions the file was made from; it is stale
// when go.mod moves any of them.
func TestGeneratedFromPinnedVersions(t *testing.T) {
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build info")
	}
	versions := map[string]string{}
	for _, dep := range bi.Deps {
		versions[dep.Path] = dep.Version
	}
	header, _, _ := bytes.Cut(src, []byte("package generated"))
	for _, mod := range []string{"k8s.io/api", "k8s.io/apimachinery", "k8s.io/kube-openapi"} {
		if want := fmt.Sprintf("%s %s", mod, versions[mod]); !bytes.Contains(header, []byte(want)) {
			t.Errorf("%s was not generated from %s: run hack/update-openapi.sh", file, want)
		}
	}
	for _, def := range []string{"corev1.ConfigMap{}.OpenAPIModelName()", "intstr.IntOrString{}.OpenAPIModelName()", "version.Info{}.OpenAPIModelName()"} {
		if !bytes.Contains(src, []byte(def)) {
			t.Errorf("%s has no definition %s", file, def)
		}
	}
}

// Regenerating gives the committed file. It runs openapi-gen, which takes
// a minute or more.
func TestGeneratedIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerating takes a minute or more")
	}
	dir := t.TempDir()
	cmd := exec.Command("bash", filepath.Join("..", "..", "hack", "update-openapi.sh"), dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/update-openapi.sh: %v\n%s", err, out)
	}
	want, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what hack/update-openapi.sh makes now: run it and commit the result (first difference near line %d)",
			file, firstDifferentLine(got, want))
	}
}

func firstDifferentLine(a, b []byte) int {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}
