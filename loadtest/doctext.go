package loadtest

// notMeasured is the document's section on what cannot be compared yet.
const notMeasured = `## Not measured yet: 1,000 CRDs

The cost of 1,000 CustomResourceDefinitions (kube-apiserver's RSS and start
time grow with every CRD: an OpenAPI spec, a handler, a watch cache and
conversion per version) is not measurable: capstan serves no CRDs yet. The
apiextensions server is a stub that falls through to NotFound. This section is
for when it does.

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
  when its build has ` + "`--authorization-mode`" + ` (its flags are in the Setup table);
  the tool's user is in system:masters, which both let through before RBAC is
  consulted. capstan has no priority and fairness (nor a max-in-flight
  limit) and fewer admission plugins, and it authenticates the tool by an
  x509 client certificate, checked once per connection. Priority and
  fairness costs kube some CPU and latency per request that capstan does not
  pay yet.
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
  decoding and the scheduling of 50 watcher goroutines on a busy machine, the
  same for both servers. An event that arrives before its write's response
  counts as 0 (` + "`earlyEvents`" + `).
- **Caches.** Both serve lists and watches from a watch cache in front of
  etcd (capstan's ` + "`--watch-cache`" + `, on by default); kube-apiserver serves
  consistent lists from it too. The ` + "`full`" + ` (consistent) and ` + "`full-rv0`" + ` rows
  show how each does.
- **Sizes.** Config maps carry 256 bytes of data; real objects (pods) are
  larger, which weighs more on encoding and memory than on round trips.
`
