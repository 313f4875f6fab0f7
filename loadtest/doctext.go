package loadtest

// notMeasured is the document's CRD section until bench/crds.sh has run.
const notMeasured = `## Not measured yet: 1,000 CRDs

The cost of 1,000 CustomResourceDefinitions is measured by ` + "`bench/crds.sh`" + `
(the ` + "`crds`" + ` workload of capstan-load), which writes its own section here.

`

// crdsDescription says what the crds workload measures.
const crdsDescription = "Each server starts on a fresh `--etcd-prefix` of the same etcd; then C workers create N " +
	"CustomResourceDefinitions spread over G API groups, each namespaced with one version `v1`, the status subresource, " +
	"four printer columns and a structural schema of ten spec and four status fields (defaults, enums, bounds, a map list, " +
	"a map; descriptions make every CRD's schema its own). The tool waits until a watch has seen every CRD `Established` " +
	"and aggregated discovery (`/apis`, polled every 250 ms from the first create on) lists every resource: `established` and `in discovery` are " +
	"those times per CRD from its create request (`in discovery` to within 250 ms), the `all ...` rows the times from the " +
	"first create. `peak RSS` and `CPU` are those from the first create until all are served. Memory is read before the " +
	"creates and after them (`idle after`) the same way: a garbage collection forced through each server's " +
	"`--debug-socket-path` (pprof's `heap?gc=1`), `settleSeconds` of idling (longer than the 75 s of history the watch " +
	"caches keep), the RSS, then another forced collection and the Go heap in use. Per CRD is the growth divided by N. " +
	"Then one custom resource is created in each of `firstCRs` CRDs, one after the other: in kube-apiserver the first " +
	"request to a CRD builds its storage, handlers and watch cache; in capstan, whose garbage collector has read every CRD's " +
	"resource through read-only endpoints already, the first write builds the full ones (validation, field managers). " +
	"Then a second one in each, and the heap is read again the same way: `per CRD with a CR` is its growth divided by " +
	"`firstCRs`. Last, the CRDs are deleted in one request (deletecollection) and waited for."

// crdsCaveats are what to keep in mind about the CRD numbers.
const crdsCaveats = `Caveats of this section:

- **Not the same work per CRD.** capstan runs the garbage collector of
  kube-controller-manager in its own process: it lists and watches every
  resource, so capstan holds an informer, a watch and read-only endpoints
  (storage and handlers, without validation or field managers) for every
  CRD, and rereads discovery after CRD changes. kube-apiserver alone has no
  garbage collector; with kube-controller-manager beside it, it would build
  every CRD's storage, handlers and watch cache as well, and the
  controller-manager would hold the informers. kube-apiserver, for its
  part, registers an APIService per CRD group version and keeps a merged
  OpenAPI v2 spec and per group version v3 specs up to date as CRDs come;
  capstan builds OpenAPI documents only when asked, and nothing asked
  during the run.
- **RSS is noisy at this scale.** The RSS per CRD is a difference of two
  readings of hundreds of MiB divided by N; the Go heap after a collection
  is the steadier number. RSS includes what the Go runtime has freed but
  not yet returned to the system (with default GOGC, the heap grows to
  twice what is live between collections), and keeps falling for minutes.
- **One run each**, kube-apiserver first, on the shared 2-core machine
  (see the load averages).
`

// caveats is the document's section on what makes the comparison unfair
// or doubtful.
const caveats = `## Caveats: what is unfair or doubtful

- **Noise.** One run per server, on a 2-core machine shared with other
  developers' builds and tests (see the load averages above), with the load
  tool, etcd and the server on the same two cores. Differences within about 20% are not
  meaningful. Only the startup is repeated (several starts; median shown).
- **Not quite the same work.** kube-apiserver runs as ` + "`bench/upstream/run.sh`" + ` starts it:
  RBAC, API priority and fairness, its default admission plugins (most do
  nothing for config maps) and token authentication. capstan runs with RBAC
  and API priority and fairness too (its flags are in the Setup table), with
  fewer admission plugins; the tool's user is in system:masters, which both
  let through before RBAC is consulted and both put in the exempt priority
  level. capstan authenticates the tool by an x509 client certificate,
  whose chain it verifies once and remembers until it expires;
  kube-apiserver by a static token.
- **Start.** Each start writes the server's bootstrap objects into a fresh
  prefix (kube-apiserver's RBAC roles and bindings, priority levels and
  more; capstan's system namespaces and its own); capstan also generates its
  CA and certificates, which kube-apiserver was given. Neither includes
  starting etcd, except the embedded column, where etcd starts in the process.
- **One etcd, kube first.** Both servers use the same etcd, kube-apiserver
  first. Between the two the script deletes kube's keys, compacts and
  defragments etcd, but etcd's own memory keeps some of kube's run, so the
  etcd RSS rows favour kube slightly.
- **RSS is not the live heap.** Both are Go programs with default GOGC and
  GOMEMLIMIT; RSS includes memory the Go runtime has freed but not yet
  returned. kube-apiserver is stripped (` + "`-s -w`" + `, as upstream releases
  it); capstan is a plain ` + "`go build`" + `. Symbols are not loaded pages, so this
  barely moves RSS. The Setup table says which Go built each.
- **Delivery latency is measured in the client.** It includes client-go's
  decoding and the scheduling of the watcher goroutines on a busy machine, the
  same for both servers. An event that arrives before its write's response
  counts as 0 (` + "`earlyEvents`" + `).
- **Caches.** Both serve lists and watches from a watch cache in front of
  etcd (capstan's ` + "`--watch-cache`" + `, on by default); kube-apiserver serves
  consistent lists from it too. The ` + "`full`" + ` (consistent) and ` + "`full-rv0`" + ` rows
  show how each does.
- **Sizes.** Config maps carry 256 bytes of data; real objects (pods) are
  larger, which weighs more on encoding and memory than on round trips.
`
