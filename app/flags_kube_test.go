package app

import (
	"bufio"
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	cliflag "k8s.io/component-base/cli/flag"
)

// helpFlag is one flag as a --help lists it.
type helpFlag struct {
	section, name, typ, def string
}

var (
	helpSection = regexp.MustCompile(`^([A-Za-z][A-Za-z ]*) flags:$`)
	helpLine    = regexp.MustCompile(`^\s+(?:-\w, )?--([a-z0-9-]+)(?: (\S+))?(?:\s{2,}(.*))?$`)
	helpDefault = regexp.MustCompile(`\(default (.*)\)\s*$`)
)

// parseHelp reads the flags of a help printed in sections (cliflag's
// PrintSections, as kube-apiserver and capstan print it), with their
// section, type and default.
func parseHelp(t *testing.T, help string) map[string]helpFlag {
	t.Helper()
	flags := map[string]helpFlag{}
	section, last := "", ""
	sc := bufio.NewScanner(strings.NewReader(help))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := helpSection.FindStringSubmatch(line); m != nil {
			section, last = strings.ToLower(m[1]), ""
			continue
		}
		if section == "" {
			continue
		}
		if m := helpLine.FindStringSubmatch(line); m != nil {
			last = m[1]
			flags[last] = helpFlag{section: section, name: last, typ: m[2]}
			line = m[3]
		}
		if last == "" {
			continue
		}
		if d := helpDefault.FindStringSubmatch(line); d != nil {
			f := flags[last]
			f.def = d[1]
			flags[last] = f
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return flags
}

// differentOnPurpose are the flags where capstan differs from
// kube-apiserver by choice; docs/compatibility.md says why.
var differentOnPurpose = map[string]string{
	// capstan authorizes by default; kube-apiserver allows everything
	// unless told otherwise, and every real deployment tells it.
	"authorization-mode": "default Node,RBAC instead of AlwaysAllow",
	// kube requires --etcd-servers; without it capstan runs etcd itself.
	"etcd-servers": "optional: embedded etcd without it",
	// kube's cobra adds -h in its own place.
	"help": "cobra's",
	// capstan keeps its generated certificates with its data.
	"cert-dir": "default <data-dir>/pki instead of /var/run/kubernetes",
}

// TestFlagsMatchKubeAPIServer: every flag of kube-apiserver v1.37.2's
// --help (recorded by hack/update-kube-flags.sh) is capstan's too, in the
// same section, with the same type and default.
func TestFlagsMatchKubeAPIServer(t *testing.T) {
	recorded, err := os.ReadFile("testdata/kube-apiserver-help.txt")
	if err != nil {
		t.Fatal(err)
	}
	kube := parseHelp(t, string(recorded))
	if len(kube) < 150 {
		t.Fatalf("read %d flags from the recorded help: the parser or the recording is broken", len(kube))
	}
	var help bytes.Buffer
	cliflag.PrintSections(&help, NewOptions().Flags(), 0)
	capstan := parseHelp(t, help.String())
	for name, k := range kube {
		if _, ok := differentOnPurpose[name]; ok {
			continue
		}
		c, ok := capstan[name]
		switch {
		case !ok:
			t.Errorf("--%s (%s flags) is missing", name, k.section)
		case c.section != k.section:
			t.Errorf("--%s is in %q, kube has it in %q", name, c.section, k.section)
		case c.typ != k.typ:
			t.Errorf("--%s has type %q, kube's is %q", name, c.typ, k.typ)
		case c.def != k.def:
			t.Errorf("--%s defaults to %q, kube's to %q", name, c.def, k.def)
		}
	}
	for name, c := range capstan {
		if _, ok := kube[name]; !ok && c.section != "capstan" {
			t.Errorf("--%s is in %q but kube-apiserver has no such flag: move it to capstan's section", name, c.section)
		}
	}
}

// TestParseHelp: the parser reads sections, types, defaults on the flag's
// line or a continuation line, shorthands and boolean flags.
func TestParseHelp(t *testing.T) {
	help := "Usage:\n  x [flags]\n\nGeneric flags:\n\n" +
		"      --advertise-address ip   The IP.\n" +
		"      --cors strings           Origins,\n" +
		"                               more. (default [a,b])\n" +
		"      --profiling              Enable profiling (default true)\n" +
		"\nLogs flags:\n\n" +
		"  -v, --v Level                number for the log level verbosity\n" +
		"      --prefix string          The prefix. (default \"/registry\")\n"
	got := parseHelp(t, help)
	want := map[string]helpFlag{
		"advertise-address": {"generic", "advertise-address", "ip", ""},
		"cors":              {"generic", "cors", "strings", "[a,b]"},
		"profiling":         {"generic", "profiling", "", "true"},
		"v":                 {"logs", "v", "Level", ""},
		"prefix":            {"logs", "prefix", "string", `"/registry"`},
	}
	if len(got) != len(want) {
		t.Errorf("parsed %d flags, want %d: %+v", len(got), len(want), got)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("--%s: got %+v, want %+v", name, got[name], w)
		}
	}
}
