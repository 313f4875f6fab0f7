package structure

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// module is capstan's module path, the prefix of every package of its own.
const module = "github.com/capstan-io/capstan"

// repoRoot is the directory of go.mod, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at the repository root: %v", err)
	}
	return root
}

// goFile is one Go file of the module, named by its path from the root.
type goFile struct {
	path string // slash-separated, from the repository root
	pkg  string // the package's directory, from the root ("" at the root)
	test bool   // a _test.go file
}

// goFiles lists the module's Go files, leaving out testdata, hidden
// directories and nested modules (bench/upstream builds kube itself).
func goFiles(t *testing.T, root string) []goFile {
	t.Helper()
	var files []goFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			name := d.Name()
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if dir == "." {
			dir = ""
		}
		files = append(files, goFile{path: rel, pkg: dir, test: strings.HasSuffix(rel, "_test.go")})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
