package parity

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/internal/testkit"
)

const (
	sequencesDir = "testdata/sequences"
	recordedDir  = "testdata/recorded"
	explained    = "testdata/differences.yaml"
	discoveryDir = "../e2e/testdata/kube-discovery"
)

// recording is one sequence's recorded answers.
type recording struct {
	Sequence string   `json:"sequence"`
	Answers  []Answer `json:"answers"`
}

func sequences(t *testing.T) []Sequence {
	t.Helper()
	hand, err := LoadSequences(sequencesDir)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := GenerateFromDiscovery(discoveryDir)
	if err != nil {
		t.Fatal(err)
	}
	return append(hand, gen...)
}

// TestParity runs every sequence against capstan and compares its answers
// with kube-apiserver's recorded ones. A difference fails the test unless
// testdata/differences.yaml explains it. With PARITY_RECORD=1 it first
// runs the sequences against kube-apiserver v1.37.2 (PARITY_KUBE_ENV: the
// env file of a bench/upstream/run.sh already running; otherwise run.sh
// is started and stopped here) and rewrites testdata/recorded. With
// PARITY_DUMP=<dir> capstan's answers are written there as recordings.
func TestParity(t *testing.T) {
	seqs := sequences(t)
	reasons, err := LoadExplanations(explained)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("PARITY_RECORD") == "1" {
		if err := os.RemoveAll(recordedDir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(recordedDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var unexplained, known int
	for _, group := range byFlags(seqs) {
		flags := expandFlags(t, group[0].Flags)
		if os.Getenv("PARITY_RECORD") == "1" {
			record(t, kubeTarget(t, flags), group)
		}
		s := testkit.StartServer(t, flags...)
		capstan := target(t, "capstan", s.Config)
		for _, seq := range group {
			t.Run(seq.Name, func(t *testing.T) {
				want := loadRecording(t, seq.Name)
				got, err := capstan.Run(t.Context(), seq)
				if err != nil {
					t.Fatal(err)
				}
				dump(t, seq.Name, got)
				if len(got) != len(want.Answers) {
					t.Fatalf("%d answers, recorded %d: record again (PARITY_RECORD=1)", len(got), len(want.Answers))
				}
				for i := range got {
					if want.Answers[i].ID != got[i].ID || want.Answers[i].Req != got[i].Req {
						t.Fatalf("step %d is %s %q, recorded %s %q: record again", i, got[i].ID, got[i].Req, want.Answers[i].ID, want.Answers[i].Req)
					}
					for _, d := range Compare(seq.Name, want.Answers[i], got[i]) {
						if e, ok := Explain(reasons, d); ok {
							known++
							t.Logf("explained: %s (%s)", d, e.Reason)
							continue
						}
						unexplained++
						t.Errorf("%s\n    request: %s", d, got[i].Req)
					}
				}
			})
		}
		s.Stop(t)
	}
	t.Logf("%d sequences: %d unexplained differences, %d explained", len(seqs), unexplained, known)
}

// byFlags groups the sequences by their server flags, in first-seen order.
func byFlags(seqs []Sequence) [][]Sequence {
	var groups [][]Sequence
	index := map[string]int{}
	for _, seq := range seqs {
		key := strings.Join(seq.Flags, "\x00")
		i, ok := index[key]
		if !ok {
			i = len(groups)
			index[key] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], seq)
	}
	return groups
}

// dump writes capstan's answers to seq, as a recording, into the directory
// PARITY_DUMP names (if it does): to read a difference in full.
func dump(t *testing.T, seq string, answers []Answer) {
	dir := os.Getenv("PARITY_DUMP")
	if dir == "" {
		return
	}
	data, err := json.MarshalIndent(recording{Sequence: seq, Answers: answers}, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, seq+".json"), append(data, '\n'), 0o644)
	}
	if err != nil {
		t.Errorf("PARITY_DUMP: %v", err)
	}
}

func loadRecording(t *testing.T, name string) recording {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(recordedDir, name+".json"))
	if err != nil {
		t.Fatalf("no recording of %s (record with PARITY_RECORD=1): %v", name, err)
	}
	var r recording
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// record runs seqs against kube and writes their recordings.
func record(t *testing.T, kube *Target, seqs []Sequence) {
	t.Helper()
	for _, seq := range seqs {
		answers, err := kube.Run(t.Context(), seq)
		if err != nil {
			t.Fatalf("kube: %v", err)
		}
		data, err := json.MarshalIndent(recording{Sequence: seq.Name, Answers: answers}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(recordedDir, seq.Name+".json"), append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("recorded %d sequences from kube-apiserver", len(seqs))
}

// target makes the admin and anonymous clients of a server.
func target(t *testing.T, name string, admin *rest.Config) *Target {
	t.Helper()
	adminClient, err := rest.HTTPClientFor(admin)
	if err != nil {
		t.Fatal(err)
	}
	anon := rest.AnonymousClientConfig(admin)
	anonClient, err := rest.HTTPClientFor(anon)
	if err != nil {
		t.Fatal(err)
	}
	adminClient.Timeout, anonClient.Timeout = time.Minute, time.Minute
	return &Target{Name: name, URL: admin.Host, Admin: adminClient, Anonymous: anonClient}
}

// kubeTarget is kube-apiserver: the one PARITY_KUBE_ENV describes (for
// sequences with no flags), or one bench/upstream/run.sh starts for this
// test with flags.
func kubeTarget(t *testing.T, flags []string) *Target {
	t.Helper()
	envFile := os.Getenv("PARITY_KUBE_ENV")
	if envFile == "" || len(flags) > 0 {
		out, err := os.MkdirTemp("", "parity-kube-")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "../../bench/upstream/run.sh")
		cmd.Env = append(os.Environ(), "OUT="+out, "BUILD=0", "APISERVER_ARGS="+strings.Join(flags, " "))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("bench/upstream/run.sh: %v\n%s", err, b)
		}
		t.Cleanup(func() {
			if b, err := exec.Command("../../bench/upstream/stop.sh", out).CombinedOutput(); err != nil {
				t.Errorf("stop.sh: %v\n%s", err, b)
			}
		})
		envFile = filepath.Join(out, "env")
	}
	env := readEnv(t, envFile)
	cfg := &rest.Config{Host: env["SERVER"], BearerToken: env["TOKEN"], TLSClientConfig: rest.TLSClientConfig{CAFile: env["CA"]}}
	return target(t, "kube", cfg)
}

func readEnv(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "="); ok {
			env[k] = v
		}
	}
	return env
}
