package loadtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Machine describes where a run happened.
type Machine struct {
	CPUs      int    `json:"cpus"`
	Model     string `json:"model"`
	MemTotal  string `json:"memTotal"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"goVersion"` // the tool's; the servers' may differ
	LoadAvg   string `json:"loadAvg"`   // 1, 5 and 15 minutes, at the start
}

// Summary is a one-line description.
func (m Machine) Summary() string {
	return fmt.Sprintf("%d CPUs (%s), %s, Linux %s, %s", m.CPUs, m.Model, m.MemTotal, m.Kernel, m.GoVersion)
}

// ReadMachine describes this machine from /proc.
func ReadMachine() Machine {
	return Machine{
		CPUs:      runtime.NumCPU(),
		Model:     procField("/proc/cpuinfo", "model name", ":"),
		MemTotal:  gib(procField("/proc/meminfo", "MemTotal", ":")),
		Kernel:    readTrimmed("/proc/sys/kernel/osrelease"),
		GoVersion: runtime.Version(),
		LoadAvg:   LoadAvg(),
	}
}

// gib turns meminfo's "24683620 kB" into "23.5 GiB".
func gib(kb string) string {
	n, err := strconv.ParseUint(strings.TrimSuffix(kb, " kB"), 10, 64)
	if err != nil {
		return kb
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<20))
}

// LoadAvg is the first three fields of /proc/loadavg.
func LoadAvg() string {
	f := strings.Fields(readTrimmed("/proc/loadavg"))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "?"
	}
	return string(bytes.TrimSpace(b))
}

// procField returns the value of the first "key<sep> value" line of path.
func procField(path, key, sep string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "?"
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), sep)
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
