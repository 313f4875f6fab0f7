package structure

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Size limits of STYLE.md: a function fits a screen, a struct groups at
// most 20 fields (more means sub-structs that own them).
const (
	maxFuncLines    = 80
	maxStructFields = 20
)

// sizeAllowed are the functions and structs over the limits today that
// someone is rewriting now; each is named "dir.Name" (a method as
// "dir.Type.Name"). Remove an entry once it fits.
var sizeAllowed = []string{}

// apiShaped are structs without json tags that mirror an API type field
// for field, and so are API types too.
var apiShaped = []string{
	"apiextensions/schema.internalProps", // the JSON of kube's internal JSONSchemaProps
	"apiextensions/schema.Structural",    // a node of kube's structural schema
	"apis/batch.statusChecks",            // kube's JobStatusValidationOptions: a flag per rule
}

// TestFunctionsFit: no function outside _test.go files is longer than
// maxFuncLines, not counting the lines of composite literals (tables are
// data, however long) and of comments.
func TestFunctionsFit(t *testing.T) {
	eachSource(t, func(f goFile, fset *token.FileSet, file *ast.File, src []string) {
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := f.pkg + "." + funcName(fn)
			if n := codeLines(fset, src, fn); n > maxFuncLines && !slices.Contains(sizeAllowed, name) {
				t.Errorf("%s: %s has %d lines of code, more than %d", f.path, name, n, maxFuncLines)
			}
		}
	})
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fn.Name.Name
		}
		return fmt.Sprint(typ) + "." + fn.Name.Name
	}
}

// codeLines counts fn's lines but those inside composite literals (a
// literal's first and last lines hold code too) and whole-line comments.
func codeLines(fset *token.FileSet, src []string, fn *ast.FuncDecl) int {
	first, last := fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
	data := map[int]bool{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		for l := fset.Position(lit.Lbrace).Line + 1; l < fset.Position(lit.Rbrace).Line; l++ {
			data[l] = true
		}
		return false
	})
	n := 0
	for l := first; l <= last; l++ {
		if !data[l] && !strings.HasPrefix(strings.TrimSpace(src[l-1]), "//") {
			n++
		}
	}
	return n
}

// TestStructsFit: no struct outside _test.go files has more than
// maxStructFields fields, but API types: structs whose fields carry json
// tags are wire formats, shaped by the API they serve, and so are the
// apiShaped ones.
func TestStructsFit(t *testing.T) {
	eachSource(t, func(f goFile, _ *token.FileSet, file *ast.File, _ []string) {
		ast.Inspect(file, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := spec.Type.(*ast.StructType)
			name := f.pkg + "." + spec.Name.Name
			if !ok || apiType(st) || slices.Contains(apiShaped, name) {
				return true
			}
			if n := fieldCount(st); n > maxStructFields && !slices.Contains(sizeAllowed, name) {
				t.Errorf("%s: struct %s has %d fields, more than %d", f.path, name, n, maxStructFields)
			}
			return true
		})
	})
}

// eachSource calls f with every file of the module that is neither a
// _test.go file nor generated, parsed with its comments, and its lines.
func eachSource(t *testing.T, f func(gf goFile, fset *token.FileSet, file *ast.File, src []string)) {
	t.Helper()
	root := repoRoot(t)
	for _, gf := range goFiles(t, root) {
		if gf.test {
			continue
		}
		text, err := os.ReadFile(filepath.Join(root, gf.path))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, gf.path, text, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if !ast.IsGenerated(file) {
			f(gf, fset, file, strings.Split(string(text), "\n"))
		}
	}
}

// fieldCount counts a struct's fields, each name of "a, b int" once and an
// embedded type once.
func fieldCount(st *ast.StructType) int {
	n := 0
	for _, f := range st.Fields.List {
		n += max(len(f.Names), 1)
	}
	return n
}

// apiType reports whether st's fields carry json tags.
func apiType(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if f.Tag != nil && strings.Contains(f.Tag.Value, `json:"`) {
			return true
		}
	}
	return false
}
