package gate_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/bollhav/bollhav/engine/enginetest"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
)

// Incidents reads the blocked units in two passes, holding only the ones it
// traces; the report must be the one made from every blocked unit held in a
// list (IncidentsOf over Blocked), on a generated project with more
// blocked units than MaxTracedBlocked, so the untraced ones are put on
// incidents by reason or counted.
func TestIncidentsStreamedEqualTheListed(t *testing.T) {
	enginetest.Each(t, func(t *testing.T, s state.Store) {
		g := generated(t, s, 12000)
		blocked, err := g.Blocked(t.Context(), gate.BlockedFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(blocked) <= gate.MaxTracedBlocked {
			t.Fatalf("%d blocked units: want more than %d for the untraced path", len(blocked), gate.MaxTracedBlocked)
		}
		listed, err := g.IncidentsOf(t.Context(), blocked)
		if err != nil {
			t.Fatal(err)
		}
		streamed, err := g.Incidents(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		want, got := reportLines(listed), reportLines(streamed)
		if !slices.Equal(got, want) {
			t.Errorf("streamed report differs from the listed one:\n got  %q\n want %q", got, want)
		}
		behind := streamed.Untraced
		for _, inc := range streamed.Incidents {
			behind += inc.Blocked
		}
		if behind != len(blocked) {
			t.Errorf("the report accounts for %d blocked units, the store holds %d", behind, len(blocked))
		}
	})
}

// reportLines is a report in full, one line an incident, for comparison.
func reportLines(rep *gate.IncidentReport) []string {
	out := []string{fmt.Sprintf("untraced=%d now=%s", rep.Untraced, rep.Now)}
	for _, inc := range rep.Incidents {
		out = append(out, fmt.Sprintf("%s %s %s units=%d since=%s blocked=%d %v impact=%d focus=%s %s retry=%v detail=%q",
			inc.Kind, inc.Model, inc.Span, inc.Units, inc.Since, inc.Blocked, inc.BlockedModels, inc.Impact,
			inc.Focus.Model, inc.Focus.Window, inc.Retry != nil, inc.Detail))
	}
	return out
}
