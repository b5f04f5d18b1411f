package cli

import (
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// reasonJSON is one entry of a unit's reasons (gate.Reason): what holds
// it back, structured, beside the stored text (docs/design.md).
type reasonJSON struct {
	Kind     string `json:"kind"`
	Upstream string `json:"upstream,omitempty"`
	Contract string `json:"contract,omitempty"`
	Edge     string `json:"edge,omitempty"`
	// Missing are the upstream's missing windows, for kind missing.
	Missing []windowRangeJSON `json:"missing,omitempty"`
	// Run is the run that decided an after: edge, or released the unit.
	Run int64 `json:"run,omitempty"`
	// Until is when a retry wait or a lease ends.
	Until  *string `json:"until,omitempty"`
	Detail string  `json:"detail"`
}

type windowRangeJSON struct {
	Since string `json:"since"`
	Until string `json:"until"`
}

// reasonsJSON structures a stored reason; an empty list (never null) when
// there is none.
func reasonsJSON(stored string) []reasonJSON { return toReasonsJSON(gate.Reasons(stored)) }

// toReasonsJSON is reasons as the JSON lists them; [] for none.
func toReasonsJSON(reasons []gate.Reason) []reasonJSON {
	out := []reasonJSON{}
	for _, r := range reasons {
		j := reasonJSON{Kind: string(r.Kind), Upstream: r.Upstream, Contract: r.Contract, Edge: r.Edge, Run: r.Run, Detail: r.Detail,
			Until: rfcOrNull(&r.Until)}
		for _, w := range r.Missing {
			j.Missing = append(j.Missing, windowRangeJSON{Since: state.FormatTime(w.Since), Until: state.FormatTime(w.Until)})
		}
		out = append(out, j)
	}
	return out
}
