package tui

import (
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
)

// health is a model's status at a glance, worst first: failed, blocked,
// running, pending, then applied when every unit is; missing for a model
// with no units (not registered, or never prefilled).
func health(counts map[state.UnitStatus]int) themes.Status {
	total := 0
	for _, n := range counts {
		total += n
	}
	switch {
	case total == 0:
		return themes.Missing
	case counts[state.Failed] > 0:
		return themes.Failed
	case counts[state.Blocked] > 0:
		return themes.Blocked
	case counts[state.Running] > 0:
		return themes.Running
	case counts[state.Pending] > 0:
		return themes.Pending
	}
	return themes.Applied
}

// countColumns are the statuses the lists count, in column order.
var countColumns = []state.UnitStatus{state.Applied, state.Pending, state.Running, state.Blocked, state.Failed}

// countCell is one count in its status's style with its glyph ("✗ 2"), or
// a muted 0.
func countCell(t themes.Theme, s state.UnitStatus, n int) string {
	if n == 0 {
		return t.Muted.Render("0")
	}
	return t.Status(themes.Status(s)).Render(themes.Glyph(themes.Status(s)) + " " + count(n))
}

// shapeText is a model's shape in a few cells: "1h fix", "1d flex",
// "timeless".
func shapeText(st engine.ModelStatus) string {
	if st.Timeless() {
		return "timeless"
	}
	return st.Interval + " " + st.Flexibility
}

// unitStatus is a unit status as a theme status.
func unitStatus(s state.UnitStatus) themes.Status { return themes.Status(s) }

// statusLabel is "✗ failed", styled.
func statusLabel(t themes.Theme, s state.UnitStatus) string { return t.Label(unitStatus(s)) }
