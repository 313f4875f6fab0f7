package flowcontrol

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	runtimeschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/flowcontrol/fairqueuing"
)

// DebugPathPrefix is where kube serves its dumps of API Priority and
// Fairness: one row per priority level, per queue, or per request.
const DebugPathPrefix = "/debug/api_priority_and_fairness/"

// DebugHandlers returns the dump handlers by path. They answer in kube's
// format: comma-separated columns aligned with spaces.
func (c *Controller) DebugHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		DebugPathPrefix + "dump_priority_levels": http.HandlerFunc(c.dumpPriorityLevels),
		DebugPathPrefix + "dump_queues":          http.HandlerFunc(c.dumpQueues),
		DebugPathPrefix + "dump_requests":        http.HandlerFunc(c.dumpRequests),
	}
}

// dumpedLevel is a level's name and its queue set's picture.
type dumpedLevel struct {
	name string
	fairqueuing.Dump
}

// dumpLevels pictures every level of the current configuration, by name.
func (c *Controller) dumpLevels() []dumpedLevel {
	levels := c.state.Load().levels
	out := make([]dumpedLevel, 0, len(levels))
	for name, l := range levels {
		out = append(out, dumpedLevel{name: name, Dump: l.queues.Dump()})
	}
	slices.SortFunc(out, func(a, b dumpedLevel) int { return strings.Compare(a.name, b.name) })
	return out
}

func (c *Controller) dumpPriorityLevels(w http.ResponseWriter, r *http.Request) {
	t := newTable(w, "PriorityLevelName", "ActiveQueues", "IsIdle", "IsQuiescing", "WaitingRequests",
		"ExecutingRequests", "DispatchedRequests", "RejectedRequests", "TimedoutRequests", "CancelledRequests")
	for _, l := range c.dumpLevels() {
		// kube counts the queues with requests waiting.
		active := 0
		for _, q := range l.Queues {
			if len(q.Waiting) > 0 {
				active++
			}
		}
		t.row(l.name, strconv.Itoa(active), strconv.FormatBool(l.Idle), "false", strconv.Itoa(l.Waiting),
			strconv.Itoa(l.Executing), strconv.Itoa(l.Dispatched), strconv.Itoa(l.Rejected),
			strconv.Itoa(l.TimedOut), strconv.Itoa(l.Cancelled))
	}
	t.flush()
}

func (c *Controller) dumpQueues(w http.ResponseWriter, r *http.Request) {
	t := newTable(w, "PriorityLevelName", "Index", "PendingRequests", "ExecutingRequests", "SeatsInUse",
		"NextDispatchR", "InitialSeatsSum", "MaxSeatsSum", "TotalWorkSum")
	for _, l := range c.dumpLevels() {
		for i, q := range l.Queues {
			t.row(l.name, strconv.Itoa(i), strconv.Itoa(len(q.Waiting)), strconv.Itoa(len(q.Executing)),
				strconv.Itoa(q.SeatsInUse), q.NextDispatchR.String(), strconv.Itoa(q.WaitingSeats),
				strconv.Itoa(q.WaitingSeats), q.WaitingWork.String())
		}
	}
	t.flush()
}

// dumpRequests lists every waiting and executing request: waiting ones
// with their place in their queue, executing ones with index -1, and
// those of levels without queues with queue -1 too. Any value of
// includeRequestDetails adds who asked for what.
func (c *Controller) dumpRequests(w http.ResponseWriter, r *http.Request) {
	details := r.URL.Query().Get("includeRequestDetails") != ""
	headers := []string{"PriorityLevelName", "FlowSchemaName", "QueueIndex", "RequestIndexInQueue",
		"FlowDistingsher", "ArriveTime", "InitialSeats", "FinalSeats", "AdditionalLatency", "StartTime"}
	if details {
		headers = append(headers, "UserName", "Verb", "APIPath", "Namespace", "Name", "APIVersion", "Resource", "SubResource")
	}
	t := newTable(w, headers...)
	for _, l := range c.dumpLevels() {
		dump := func(queue, index int, rd fairqueuing.RequestDump) {
			cols := []string{l.name, rd.FlowSchema, strconv.Itoa(queue), strconv.Itoa(index), rd.FlowDistinguisher,
				rd.Arrived.UTC().Format(time.RFC3339Nano), strconv.Itoa(rd.InitialSeats),
				strconv.Itoa(rd.FinalSeats), rd.AdditionalLatency.String(),
				rd.Started.UTC().Format(time.RFC3339Nano)}
			if details {
				cols = append(cols, requestDetails(rd.Details)...)
			}
			t.row(cols...)
		}
		for qi, q := range l.Queues {
			for ri, rd := range q.Waiting {
				dump(qi, ri, rd)
			}
			for _, rd := range q.Executing {
				dump(qi, -1, rd)
			}
		}
		for _, rd := range l.Queueless {
			dump(-1, -1, rd)
		}
	}
	t.flush()
}

// requestDetails are the detail columns of a request described by its
// Digest.
func requestDetails(details any) []string {
	d, _ := details.(Digest)
	var user string
	if d.User != nil {
		user = d.User.Name
	}
	if d.Info == nil {
		return []string{user, "", "", "", "", "", "", ""}
	}
	i := d.Info
	gv := runtimeschema.GroupVersion{Group: i.APIGroup, Version: i.APIVersion}.String()
	return []string{user, i.Verb, i.Path, i.Namespace, i.Name, gv, i.Resource, i.Subresource}
}

// table writes kube's debug tables: columns joined by ",\t" through a
// tabwriter that pads with spaces.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, headers ...string) table {
	t := table{tw: tabwriter.NewWriter(w, 8, 0, 1, ' ', 0)}
	t.row(headers...)
	return t
}

func (t table) row(cols ...string) {
	_, _ = io.WriteString(t.tw, strings.Join(cols, ",\t")+"\n")
}

func (t table) flush() { _ = t.tw.Flush() }
