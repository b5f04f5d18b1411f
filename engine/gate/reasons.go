package gate

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/bollhav/bollhav/state"
)

// ReasonKind is what holds a unit back, one per entry of its reasons.
type ReasonKind string

// The kinds of reason.
const (
	// ReasonMissing: a gated upstream lacks windows (Missing).
	ReasonMissing ReasonKind = "missing"
	// ReasonStale: a gated upstream's rows are older than a freshness
	// limit.
	ReasonStale ReasonKind = "stale"
	// ReasonOutdated: rows built under an earlier definition than the
	// upstream's current one, which require_current does not accept.
	ReasonOutdated ReasonKind = "outdated"
	// ReasonAfter: an after: edge does not hold for the unit's window
	// (Edge; Run is the run that decided it, when one did).
	ReasonAfter ReasonKind = "after"
	// ReasonUnderWay: the upstream work the unit needs is running or
	// queued; the unit waits for it (a pending unit's reason).
	ReasonUnderWay ReasonKind = "under_way"
	// ReasonNotApplied: a gated upstream (timeless, or WHOLE with nothing
	// complete) is not applied.
	ReasonNotApplied ReasonKind = "not_applied"
	// ReasonReleased: the unit was blocked, and a run that caught its
	// upstreams up found its gate satisfied (ReleasedReason; Run is that
	// run): the next run applies it.
	ReasonReleased ReasonKind = "released"
	// ReasonRetry: a failed try waits for its next (a pending unit with an
	// error and a not-before time: Until).
	ReasonRetry ReasonKind = "retry"
	// ReasonLease: the unit is running under a worker's lease (Detail
	// names the worker; Until is when the lease ends).
	ReasonLease ReasonKind = "lease"
	// ReasonOverlap: a pending unit of a flexible model that a running
	// unit of the same model overlaps — the overlap lock: Claim leaves it
	// pending so that two claims never write one range at once (Detail
	// names the running window; Until is when its lease ends).
	ReasonOverlap ReasonKind = "overlap"
	// ReasonOther: anything else, the entry as it is in Detail.
	ReasonOther ReasonKind = "other"
)

// Reason is one entry of a unit's stored reason, structured: what the JSON
// of `units` and `blocked` lists as `reasons` (docs/design.md).
type Reason struct {
	Kind     ReasonKind
	Upstream string
	// Contract is the gated upstream's level ("ENCAPSULATE"); Edge the
	// after: edge's type ("SUCCESS"). One of them is set when Upstream is.
	Contract, Edge string
	Missing        []state.Window
	// Run is the run that decided an after: edge; 0 when none did.
	Run int64
	// Until is when a retry wait or a lease ends; zero otherwise.
	Until  time.Time
	Detail string
}

// UnitReasons is every reason u is not applied now that the store says:
// its stored reason's entries (Reasons), then a retry wait (a failed try
// waiting for its not-before time) or a lease (running under a worker),
// then, for a pending unit, the overlap lock of each running unit of its
// model that overlaps it — running holds the model's running units, which
// only a flexible model's can overlap another's window (Engine.Running
// reads them). The units JSON lists them.
func UnitReasons(u state.Unit, running []state.Unit) []Reason {
	out := Reasons(u.BlockedReason)
	if u.Status == state.Pending {
		for _, r := range running {
			if r.Status != state.Running || r.ID == u.ID || r.Model != u.Model || !r.Window.Overlaps(u.Window) {
				continue
			}
			lock := Reason{Kind: ReasonOverlap,
				Detail: "the running unit " + r.Window.String() + " of this flexible model overlaps it: the next claim after it ends takes this one"}
			if r.LeaseUntil != nil {
				lock.Until = *r.LeaseUntil
			}
			out = append(out, lock)
		}
	}
	switch {
	case u.Status == state.Pending && u.Error != "" && u.NotBefore != nil:
		out = append(out, Reason{Kind: ReasonRetry, Until: *u.NotBefore,
			Detail: "a failed try waits for its next: " + FirstLine(u.Error)})
	case u.Status == state.Running && u.LeaseOwner != "":
		r := Reason{Kind: ReasonLease, Detail: "running under " + u.LeaseOwner + "'s lease"}
		if u.LeaseUntil != nil {
			r.Until = *u.LeaseUntil
		}
		out = append(out, r)
	}
	return out
}

// runOf finds "in run N" in an after: edge's detail.
var runOf = regexp.MustCompile(`\bin run (\d+)\b`)

// Reasons structures a stored blocked_reason (or a waiting unit's reason):
// one Reason per entry, as ReasonParts splits it, in its order.
func Reasons(stored string) []Reason {
	var out []Reason
	for _, p := range ReasonParts(stored) {
		r := Reason{Upstream: p.Upstream, Missing: p.Missing, Detail: p.Detail}
		edge, after := strings.CutPrefix(p.Level, afterLevel)
		switch {
		case IsReleased(p.Detail):
			r.Kind = ReasonReleased
			if m := runOf.FindStringSubmatch(p.Detail); m != nil {
				r.Run, _ = strconv.ParseInt(m[1], 10, 64)
			}
		case p.Upstream == "":
			r.Kind = ReasonOther
		case after:
			r.Kind, r.Edge = ReasonAfter, edge
			if m := runOf.FindStringSubmatch(p.Detail); m != nil {
				r.Run, _ = strconv.ParseInt(m[1], 10, 64)
			}
		case p.Stale:
			r.Kind, r.Contract = ReasonStale, p.Level
		case len(p.Missing) > 0:
			r.Kind, r.Contract = ReasonMissing, p.Level
		case strings.Contains(p.Detail, OutdatedText):
			r.Kind, r.Contract = ReasonOutdated, p.Level
		case strings.HasPrefix(p.Detail, "waiting on "):
			r.Kind, r.Contract = ReasonUnderWay, p.Level
		case p.Detail == "not applied":
			r.Kind, r.Contract = ReasonNotApplied, p.Level
		default:
			r.Kind, r.Contract = ReasonOther, p.Level
		}
		out = append(out, r)
	}
	return out
}
