package loadtest

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// The CRD section of the benchmark document lies between these markers.
// bench/crds.sh writes it (capstan-load report-crds); bench/compare.sh,
// which writes the rest of the document, keeps it as it is.
const (
	crdsBegin = "<!-- crds: written by bench/crds.sh (capstan-load report-crds); compare.sh keeps it -->"
	crdsEnd   = "<!-- end of crds -->"
)

// Issue 7's target: 1,000 CRDs are created and served in seconds (taken
// as under crdTargetSeconds) and each adds at most crdTargetKiB of
// resident memory once established and idle.
const (
	crdTargetKiB     = 200
	crdTargetSeconds = 10
)

// WriteCRDSection writes the document's section on the crds workload of
// c.Kube and c.Capstan (the embedded column is not used), between its
// markers.
func WriteCRDSection(w io.Writer, c Comparison) error {
	if c.Kube == nil || c.Capstan == nil {
		return fmt.Errorf("the CRD section needs both kube-apiserver's and capstan's reports")
	}
	kr, ok := c.Kube.Find("crds")
	if !ok {
		return fmt.Errorf("kube-apiserver's report has no crds workload")
	}
	cr, ok := c.Capstan.Find("crds")
	if !ok {
		return fmt.Errorf("capstan's report has no crds workload")
	}
	c.Embedded = nil
	n := kr.Params["crds"]
	fmt.Fprintf(w, "%s\n\n## %s CRDs\n\n", crdsBegin, thousands(n))
	fmt.Fprintf(w, "One run of `%s`, %s, on the machine of the Setup table above unless said here. %s %s\n\n",
		c.Command, c.Kube.Started.Format("2006-01-02"), crdsDescription, formatParams(kr.Params))
	fmt.Fprintf(w, "%s\n\n", crdTargetLine(n, cr))
	writeTable(w, c.rows("crds"), false)
	for i, rep := range []*Report{c.Kube, c.Capstan} {
		if r, ok := rep.Find("crds"); ok && r.Error != "" {
			fmt.Fprintf(w, "**%s failed:** `%s`\n\n", []string{"kube-apiserver", "capstan"}[i], r.Error)
		}
	}
	fmt.Fprintf(w, "<details><summary>Setup of this run and the tool's command lines</summary>\n\n")
	for _, rep := range []*Report{c.Kube, c.Capstan} {
		fmt.Fprintf(w, "- load average during %s: %s → %s (1, 5, 15 min)\n", rep.Server, rep.Machine.LoadAvg, rep.LoadAvgEnd)
	}
	for _, n := range c.Notes {
		k, v, _ := strings.Cut(n, "=")
		fmt.Fprintf(w, "- %s: %s\n", k, v)
	}
	fmt.Fprintf(w, "\n```\n")
	for _, rep := range []*Report{c.Kube, c.Capstan} {
		fmt.Fprintf(w, "%s\n\n", strings.Join(rep.Args, " "))
	}
	fmt.Fprintf(w, "```\n\n</details>\n\n%s\n%s\n\n", crdsCaveats, crdsEnd)
	return nil
}

// crdTargetLine says whether capstan met issue 7's target.
func crdTargetLine(n int, r Result) string {
	served, okS := r.Metrics["servedSeconds"]
	per, okP := r.Metrics["rssPerCRDKiB"]
	target := fmt.Sprintf("Target (issue 7): %s CRDs created and served in seconds (here: under %d s), each adding at most %d KiB "+
		"of resident memory once established and idle.", thousands(n), crdTargetSeconds, crdTargetKiB)
	if !okS || !okP {
		return target + " capstan's run did not measure both."
	}
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**missed**"
	}
	return fmt.Sprintf("%s capstan: %s s (%s) and %s KiB per CRD (%s).", target,
		formatNumber(served), verdict(served < crdTargetSeconds), formatNumber(per), verdict(per <= crdTargetKiB))
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// CRDSectionOf returns the CRD section of a document, markers included;
// "" if it has none.
func CRDSectionOf(doc []byte) []byte {
	i := bytes.Index(doc, []byte(crdsBegin))
	if i < 0 {
		return nil
	}
	j := bytes.Index(doc[i:], []byte(crdsEnd))
	if j < 0 {
		return nil
	}
	end := i + j + len(crdsEnd)
	for end < len(doc) && doc[end] == '\n' {
		end++
	}
	return doc[i:end]
}

// SpliceCRDSection puts section into doc: in place of its CRD section or,
// without one, of the "Not measured yet: 1,000 CRDs" section, or else
// before the caveats, or at the end.
func SpliceCRDSection(doc, section []byte) []byte {
	replace := func(i, j int) []byte {
		out := append([]byte(nil), doc[:i]...)
		out = append(out, section...)
		return append(out, doc[j:]...)
	}
	if old := CRDSectionOf(doc); old != nil {
		i := bytes.Index(doc, old)
		return replace(i, i+len(old))
	}
	caveats := bytes.Index(doc, []byte("\n## Caveats"))
	if i := bytes.Index(doc, []byte("## Not measured yet: 1,000 CRDs")); i >= 0 {
		j := bytes.Index(doc[i+1:], []byte("\n## "))
		if j < 0 {
			return replace(i, len(doc))
		}
		return replace(i, i+1+j+1)
	}
	if caveats >= 0 {
		return replace(caveats+1, caveats+1)
	}
	return replace(len(doc), len(doc))
}
