package e2eutil

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

const APFDebug = "/debug/api_priority_and_fairness/"

// dumpTable is a debug dump of APF: kube's header and rows, each cell
// with its padding trimmed, read by column name.
type dumpTable struct {
	Header []string
	Rows   [][]string
}

// ParseDump reads kube's format: one line per row, cells joined by ","
// and padded with spaces to align the columns.
func ParseDump(t *testing.T, body string) dumpTable {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	var d dumpTable
	for i, line := range lines {
		cells := strings.Split(line, ",")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		if i == 0 {
			d.Header = cells
			continue
		}
		if len(cells) != len(d.Header) {
			t.Fatalf("row %d has %d cells, the header %d:\n%s", i, len(cells), len(d.Header), body)
		}
		d.Rows = append(d.Rows, cells)
	}
	return d
}

// Col returns the cell of row in the named column.
func (d dumpTable) Col(t *testing.T, row []string, name string) string {
	t.Helper()
	i := slices.Index(d.Header, name)
	if i < 0 {
		t.Fatalf("no column %q in %v", name, d.Header)
	}
	return row[i]
}

// dump gets one of the dumps as the admin.
func (e *Env) APFDump(t *testing.T, name string) dumpTable {
	t.Helper()
	r := e.Do(t, http.MethodGet, APFDebug+name, nil)
	if r.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", name, r.Code, r.Body)
	}
	return ParseDump(t, string(r.Body))
}
