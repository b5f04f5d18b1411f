package tui

import (
	"strings"
	"time"

	"github.com/bollhav/bollhav/state"
)

// lineageSource is a screen whose selected row names a model and, where it
// has one, a window: L opens the lineage there (app.handleKey), focused on
// that window. The screens' own files stay as they were: each answers here.
type lineageSource interface {
	lineageAt() (model string, at time.Time, ok bool)
}

// The screens L works on: an assertion, as a changed signature would
// silently drop the key.
var (
	_ lineageSource = (*modelView)(nil)
	_ lineageSource = (*unitView)(nil)
	_ lineageSource = (*incidentsView)(nil)
	_ lineageSource = (*blockedView)(nil)
	_ lineageSource = (*pipelinesView)(nil)
	_ lineageSource = (*whyView)(nil)
	_ lineageSource = (*lineageView)(nil)
)

// since is w's start, zero for a timeless unit's zero window.
func since(w state.Window) time.Time { return w.Since }

// The model view: its selected unit's window, else the model now.
func (v *modelView) lineageAt() (string, time.Time, bool) {
	if u := v.selected(); u != nil {
		return v.name, since(u.Window), true
	}
	return v.name, time.Time{}, true
}

func (v *unitView) lineageAt() (string, time.Time, bool) { return v.model, since(v.window), true }

// The incidents: the root at its span, the failure itself.
func (v *incidentsView) lineageAt() (string, time.Time, bool) {
	if inc := v.selected(); inc != nil {
		return inc.Model, since(inc.Span), true
	}
	return "", time.Time{}, false
}

func (v *blockedView) lineageAt() (string, time.Time, bool) {
	if u := v.selected(); u != nil {
		return u.Model, since(u.Window), true
	}
	return "", time.Time{}, false
}

// The pipelines: the graph form's selection or the list's model row, now.
func (v *pipelinesView) lineageAt() (string, time.Time, bool) {
	name := v.selectedName()
	if v.graphForm {
		name = v.graphSel
	}
	if name == "" || strings.HasPrefix(name, "pipeline:") {
		return "", time.Time{}, false
	}
	return name, time.Time{}, true
}

func (v *whyView) lineageAt() (string, time.Time, bool) {
	if v.r != nil {
		return v.model, since(v.r.Window), true
	}
	return v.model, v.at, true
}

// The lineage itself: L roots it again at the selected node's unit.
func (v *lineageView) lineageAt() (string, time.Time, bool) {
	if n := v.selectedNode(); n != nil {
		return n.Model, since(n.Window), true
	}
	return "", time.Time{}, false
}
