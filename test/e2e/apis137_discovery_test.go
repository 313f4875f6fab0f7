package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	"k8s.io/client-go/discovery"

	"github.com/capstan-io/capstan/internal/testkit"
)

// kubeDiscovery holds kube-apiserver v1.37.2's discovery on a fresh
// cluster, recorded by hack/update-kube-discovery.sh.
const kubeDiscovery = "testdata/kube-discovery"

// Documented differences: the lines of kube's discovery that capstan does
// not serve yet, each list with the work that removes it. A line matches
// an entry it starts with (followed by a space). The test fails once
// capstan serves an entry, so that an allowance does not outlive its
// reason.
var allowances []string

// TestDiscoveryMatchesKube compares what a fresh capstan lists with what a
// fresh kube-apiserver v1.37.2 lists: every group version, resource and
// subresource of aggregated discovery (scope, kinds, verbs, short names,
// categories), every row of kubectl api-resources -o wide, and each
// resource's storageVersionHash, so that every resource is stored at
// kube's storage version.
func TestDiscoveryMatchesKube(t *testing.T) {
	matchesKube(t, kubeDiscovery)
}

// TestDiscoveryMatchesKubeBeta: with --runtime-config=api/beta=true,
// capstan's discovery lists what kube-apiserver v1.37.2's lists with the
// same flag (hack/update-kube-discovery.sh with BETA=1): the beta versions
// after the GA ones, each with its resources.
func TestDiscoveryMatchesKubeBeta(t *testing.T) {
	matchesKube(t, kubeDiscovery+"-beta", "--runtime-config=api/beta=true")
}

// matchesKube compares the discovery of capstan started with flags to the
// recording of kube's in dir.
func matchesKube(t *testing.T, dir string, flags ...string) {
	e := e2eutil.Start(t, flags...)
	var want, got []string
	for _, path := range []string{"api", "apis"} {
		recorded, err := os.ReadFile(filepath.Join(dir, path+".json"))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, discoveryLines(t, recorded)...)
		r := e.Do(t, http.MethodGet, "/"+path, nil, "Accept", e2eutil.AggregatedAccept)
		if r.Code != http.StatusOK {
			t.Fatalf("GET /%s = %d %.300s", path, r.Code, r.Body)
		}
		got = append(got, discoveryLines(t, r.Body)...)
	}
	recorded, err := os.ReadFile(filepath.Join(dir, "api-resources.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, apiResourcesLines(t, string(recorded))...)
	out, stderr, err := testkit.RunKubectl(t, e.Kubeconfig, nil, "api-resources", "-o", "wide")
	if err != nil {
		t.Fatalf("kubectl api-resources: %v\n%s", err, stderr)
	}
	got = append(got, apiResourcesLines(t, out)...)
	recorded, err = os.ReadFile(filepath.Join(dir, "storage-versions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(recorded)), "\n") {
		want = append(want, "storage-version "+line)
	}
	got = append(got, storageVersionLines(t, e)...)
	compareDiscovery(t, want, got)
}

// storageVersionLines are the storageVersionHash of each resource of
// legacy discovery, which names the version it is stored at: "<group
// version> <resource> <hash>", as hack/update-kube-discovery.sh records
// kube's.
func storageVersionLines(t *testing.T, e *e2eutil.Env) []string {
	t.Helper()
	d, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	d.UseLegacyDiscovery = true
	_, lists, err := d.ServerGroupsAndResources()
	if err != nil {
		t.Fatalf("legacy discovery: %v", err)
	}
	var lines []string
	for _, l := range lists {
		for _, r := range l.APIResources {
			if r.StorageVersionHash != "" {
				lines = append(lines, fmt.Sprintf("storage-version %s %s %s", l.GroupVersion, r.Name, r.StorageVersionHash))
			}
		}
	}
	return lines
}

// compareDiscovery reports the lines only one side has, less the
// documented allowance, and an allowance capstan no longer needs.
func compareDiscovery(t *testing.T, want, got []string) {
	t.Helper()
	for _, line := range want {
		if !slices.Contains(got, line) && !allowed(line) {
			t.Errorf("kube has, capstan lacks: %s", line)
		}
	}
	for _, line := range got {
		if !slices.Contains(want, line) {
			t.Errorf("capstan has, kube lacks: %s", line)
		}
	}
	for _, prefix := range allowances {
		if slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, prefix+" ") }) {
			t.Errorf("capstan now serves %q: remove its allowance", prefix)
		}
	}
}

func allowed(line string) bool {
	return slices.ContainsFunc(allowances, func(prefix string) bool { return strings.HasPrefix(line, prefix+" ") })
}

// discoveryLines flattens an aggregated discovery document into one line
// per group version, resource and subresource, sorted.
func discoveryLines(t *testing.T, body []byte) []string {
	t.Helper()
	var list apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("aggregated discovery: %v: %.300s", err, body)
	}
	var lines []string
	for _, g := range list.Items {
		for _, v := range g.Versions {
			gv := strings.TrimPrefix(g.Name+"/"+v.Version, "/")
			lines = append(lines, fmt.Sprintf("%s freshness=%s", gv, v.Freshness))
			for _, r := range v.Resources {
				lines = append(lines, fmt.Sprintf("%s %s scope=%s kind=%s singular=%s verbs=%s short=%s categories=%s",
					gv, r.Resource, r.Scope, kindOf(r.ResponseKind), r.SingularResource, sortedJoin(r.Verbs),
					sortedJoin(r.ShortNames), sortedJoin(r.Categories)))
				for _, s := range r.Subresources {
					lines = append(lines, fmt.Sprintf("%s %s/%s kind=%s verbs=%s", gv, r.Resource, s.Subresource,
						kindOf(s.ResponseKind), sortedJoin(s.Verbs)))
				}
			}
		}
	}
	slices.Sort(lines)
	return lines
}

func kindOf(gvk interface{ String() string }) string {
	return strings.ReplaceAll(gvk.String(), " ", "")
}

func sortedJoin(s []string) string {
	s = slices.Clone(s)
	slices.Sort(s)
	return strings.Join(s, ",")
}

// apiResourcesLines turns kubectl api-resources -o wide into one line per
// row, its cells cut at the header's column starts (empty cells make the
// whitespace between cells ambiguous).
func apiResourcesLines(t *testing.T, out string) []string {
	t.Helper()
	rows := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := rows[0]
	var starts []int
	for i := range header {
		if header[i] != ' ' && (i == 0 || header[i-1] == ' ') {
			starts = append(starts, i)
		}
	}
	if len(starts) != 7 {
		t.Fatalf("api-resources header %q", header)
	}
	var lines []string
	for _, row := range rows[1:] {
		cells := make([]string, len(starts))
		for i, s := range starts {
			end := len(row)
			if i+1 < len(starts) {
				end = min(starts[i+1], len(row))
			}
			if s < len(row) {
				cells[i] = strings.TrimSpace(row[s:end])
			}
		}
		lines = append(lines, "api-resources "+strings.Join(cells, " | "))
	}
	slices.Sort(lines)
	return lines
}
