package structure

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// layer is a set of packages and the layers they may import besides
// their own. A package pattern is a directory from the repository root,
// "dir/..." also naming every package below it; a package belongs to the
// layer of its most specific pattern (an exact name over a "/..." one).
type layer struct {
	name      string
	packages  []string
	mayImport []string
}

// layers are capstan's layers from the bottom up. Context packages and
// helpers sit at the bottom; storage knows nothing of registry; the
// resources (apis) know registry and storage but no HTTP; the generic
// server knows no resource; the three servers of the chain each know
// only what is below them (the CRD server does not know the kube server);
// nothing imports cmd/. ARCHITECTURE.md shows this table
// (TestArchitectureShowsLayers).
var layers = []layer{
	{name: "base", packages: []string{"request", "warning", "metrics", "tracing", "pki", "proxy/...", "kubeletclient", "flowcontrol/fairqueuing",
		"internal/parallel", "internal/safejsonpatch", "internal/workloop", "internal/startgc/...", "internal/fieldtest", "internal/kmstest", "internal/oidctest",
		"internal/kubelettest"}},
	{name: "storage", packages: []string{"storage/..."}, mayImport: []string{"base"}},
	{name: "registry", packages: []string{"registry/..."}, mayImport: []string{"base", "storage"}},
	{name: "access", packages: []string{"authn/...", "authz/...", "audit/...", "admission", "flowcontrol", "internal/deprecatedcert",
		"apis/flowcontrol/bootstrap"}, mayImport: []string{"base"}},
	{name: "apis", packages: []string{"apis/...", "printers", "admission/...", "apiextensions/schema",
		"apiextensions/cel", "apiextensions/conversion", "apiextensions/customresource"},
		mayImport: []string{"base", "storage", "registry", "access"}},
	{name: "endpoints", packages: []string{"endpoints/...", "openapi/..."},
		mayImport: []string{"base", "storage", "registry", "access", "apis"}},
	{name: "server", packages: []string{"server/..."},
		mayImport: []string{"base", "storage", "registry", "access", "endpoints"}},
	{name: "controllers", packages: []string{"controlplane/controllers/...", "controlplane/allocators/...",
		"apiextensions/controllers"}, mayImport: []string{"base", "storage", "registry", "access", "apis"}},
	{name: "crd-server", packages: []string{"apiextensions"},
		mayImport: []string{"base", "storage", "registry", "access", "apis", "endpoints", "server", "controllers"}},
	{name: "kube-server", packages: []string{"controlplane"},
		mayImport: []string{"base", "storage", "registry", "access", "apis", "endpoints", "server", "controllers"}},
	{name: "aggregator", packages: []string{"aggregator/..."},
		mayImport: []string{"base", "storage", "registry", "access", "apis", "endpoints", "server"}},
	{name: "app", packages: []string{"app/..."},
		mayImport: []string{"base", "storage", "registry", "access", "apis", "endpoints", "server", "controllers",
			"crd-server", "kube-server", "aggregator"}},
	{name: "tools", packages: []string{"testserver", "internal/testkit", "internal/testpki", "internal/structure", "loadtest/...", "test/...", "hack/..."},
		mayImport: []string{"base", "storage", "registry", "access", "apis", "endpoints", "server", "controllers",
			"crd-server", "kube-server", "aggregator", "app"}},
	{name: "cmd", packages: []string{"cmd/..."},
		mayImport: []string{"base", "storage", "registry", "access", "apis", "endpoints", "server", "controllers",
			"crd-server", "kube-server", "aggregator", "app", "tools"}},
}

// layerOf is the layer of pkg (a directory from the repository root), nil
// if no pattern names it.
func layerOf(pkg string) *layer {
	var best *layer
	bestScore := -1
	for i := range layers {
		for _, p := range layers[i].packages {
			score := -1
			if base, ok := strings.CutSuffix(p, "/..."); ok {
				if pkg == base || strings.HasPrefix(pkg, base+"/") {
					score = 2 * len(base)
				}
			} else if pkg == p {
				score = 2*len(p) + 1
			}
			if score > bestScore {
				best, bestScore = &layers[i], score
			}
		}
	}
	return best
}

func TestLayerOf(t *testing.T) {
	for _, tc := range []struct{ pkg, want string }{
		{"request", "base"},
		{"storage", "storage"},
		{"storage/cache", "storage"},
		{"admission", "access"},
		{"admission/certificates", "apis"},
		{"apis/flowcontrol", "apis"},
		{"apis/flowcontrol/bootstrap", "access"},
		{"apiextensions", "crd-server"},
		{"apiextensions/schema", "apis"},
		{"controlplane", "kube-server"},
		{"controlplane/controllers/namespace", "controllers"},
		{"cmd/capstan", "cmd"},
		{"internal/startgc/early", "base"},
		{"nowhere", ""},
		{"requests", ""},
	} {
		got := ""
		if l := layerOf(tc.pkg); l != nil {
			got = l.name
		}
		if got != tc.want {
			t.Errorf("layerOf(%q) = %q, want %q", tc.pkg, got, tc.want)
		}
	}
}

// TestLayersAreOrdered: a layer may import only layers listed before it,
// so the table is a true bottom-up order with no cycle.
func TestLayersAreOrdered(t *testing.T) {
	for i, l := range layers {
		for _, m := range l.mayImport {
			j := slices.IndexFunc(layers, func(x layer) bool { return x.name == m })
			if j < 0 || j >= i {
				t.Errorf("layer %s may import %s, which is not below it", l.name, m)
			}
		}
	}
}

// TestImportsGoDown: every import of a package of the module, outside
// _test.go files, stays in its layer or goes to a layer it may import.
// A new package must fall under a layer's pattern.
func TestImportsGoDown(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	for _, f := range goFiles(t, root) {
		if f.test {
			continue
		}
		from := layerOf(f.pkg)
		if from == nil {
			t.Errorf("%s: package %q is in no layer; add it to layers and ARCHITECTURE.md", f.path, f.pkg)
			continue
		}
		parsed, err := parser.ParseFile(fset, filepath.Join(root, f.path), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range parsed.Imports {
			path, _ := strconv.Unquote(spec.Path.Value)
			pkg, ok := strings.CutPrefix(path, module+"/")
			if !ok {
				continue
			}
			to := layerOf(pkg)
			switch {
			case to == nil:
				t.Errorf("%s imports %s, which is in no layer", f.path, pkg)
			case to != from && !slices.Contains(from.mayImport, to.name):
				t.Errorf("%s (layer %s) imports %s (layer %s): an upward or sideways edge", f.path, from.name, pkg, to.name)
			}
		}
	}
}

// renderLayers is the layer table as ARCHITECTURE.md shows it, top layer
// first: each layer's packages, then the layers it may import.
func renderLayers() string {
	var b strings.Builder
	for i := len(layers) - 1; i >= 0; i-- {
		l := layers[i]
		writeWrapped(&b, l.name, l.packages)
		writeWrapped(&b, "", append([]string{"->"}, importsText(i)...))
	}
	return b.String()
}

// importsText says which layers layers[i] may import: "all below", "all
// below but" the ones it may not, or "nothing".
func importsText(i int) []string {
	l := layers[i]
	if len(l.mayImport) == 0 {
		return []string{"nothing"}
	}
	var not []string
	for _, below := range layers[:i] {
		if !slices.Contains(l.mayImport, below.name) {
			not = append(not, below.name)
		}
	}
	switch {
	case len(not) == 0:
		return []string{"all below"}
	case len(not) < len(l.mayImport):
		return append([]string{"all below but"}, not...)
	}
	return l.mayImport
}

// writeWrapped writes words after a 13-column label, wrapped at 88 columns.
func writeWrapped(b *strings.Builder, label string, words []string) {
	const indent, width = 13, 88
	line := fmt.Sprintf("%-*s", indent, label)
	for i, w := range words {
		if i > 0 && len(line)+1+len(w) > width {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = strings.Repeat(" ", indent)
		} else if i > 0 {
			line += " "
		}
		line += w
	}
	b.WriteString(line + "\n")
}

// architectureBlock returns the first fenced block after heading in
// ARCHITECTURE.md.
func architectureBlock(t *testing.T, heading string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(data), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("ARCHITECTURE.md has no %q section", heading)
	}
	_, block, ok := strings.Cut(after, "```\n")
	if !ok {
		t.Fatalf("ARCHITECTURE.md's %q section has no fenced block", heading)
	}
	block, _, ok = strings.Cut(block, "```")
	if !ok {
		t.Fatalf("ARCHITECTURE.md's %q block is not closed", heading)
	}
	return block
}

// TestArchitectureShowsLayers: ARCHITECTURE.md's layer list is this
// test's table.
func TestArchitectureShowsLayers(t *testing.T) {
	want := renderLayers()
	if got := architectureBlock(t, "## Layers"); got != want {
		t.Errorf("ARCHITECTURE.md's layer list differs from the table in internal/structure; it should read:\n%s", want)
	}
}

// TestArchitectureListsPackages: every package with code is named in
// ARCHITECTURE.md's package list, by its own line or a parent's.
func TestArchitectureListsPackages(t *testing.T) {
	var listed []string
	for _, line := range strings.Split(architectureBlock(t, "## Packages"), "\n") {
		if fields := strings.Fields(line); len(fields) > 0 && !strings.HasPrefix(line, " ") {
			listed = append(listed, strings.TrimSuffix(fields[0], "/"))
		}
	}
	seen := map[string]bool{}
	for _, f := range goFiles(t, repoRoot(t)) {
		if f.test || seen[f.pkg] {
			continue
		}
		seen[f.pkg] = true
		if !slices.ContainsFunc(listed, func(l string) bool { return f.pkg == l || strings.HasPrefix(f.pkg, l+"/") }) {
			t.Errorf("package %s is not in ARCHITECTURE.md's package list", f.pkg)
		}
	}
}
