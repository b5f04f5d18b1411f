package tui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/untrusted"
)

// lineageView is the blast radius of one model's unit (issue 36): the
// models it reads and those that read it, across pipelines, hops each way,
// each edge with its verdict for the focused window, judged by the same
// gate as why (engine.Lineage). ←/→ move the focus window by the root's
// grain and the whole graph is judged again; h/j/k/l and ↑/↓ move between
// nodes; enter explains the node's unit, o opens its model; +/_ change the
// hops. It follows the change feed: a unit applied elsewhere turns its
// edge's verdict when the reload lands.
type lineageView struct {
	viewBase
	model string
	// at is the focused instant; zero: the engine's clock.
	at   time.Time
	hops int
	data *lineageData
	// graph is the picture of data, built when it arrives (or the theme
	// or the grouping changes); sel the selected node, x and y the scroll.
	graph pipelineGraph
	sel   string
	x, y  int
	// placed is set once the first frame has centred the focus.
	placed bool
	// expanded are the pipelines' groups (lineageGroupKey) opened with
	// enter: their models drawn one by one however many.
	expanded map[string]bool
	// builtFor and builtWidth are the theme and the terminal width graph
	// was built for: either changing builds it again (colours; the
	// direction and the names' cut).
	builtFor   themes.Theme
	builtWidth int
}

// lineageWide is the terminal width from which the lineage draws model
// names whole up to 40 cells, rather than cut at 20 for two or three boxes
// across 80 columns, and lays its layers out left to right when they fit
// across.
const lineageWide = 120

// lineageData is a lineage and the incident rooted at its focus window.
type lineageData struct {
	rep   *engine.LineageReport
	holds *gate.Incident
}

// defaultLineageHops is how far the screen looks each way when it opens;
// maxLineageHops how far + takes it.
const (
	defaultLineageHops = 2
	maxLineageHops     = 8
)

// viewLineage is the lineage screen, opened with L or :lineage MODEL.
const viewLineage viewKind = "lineage"

func newLineage(c *common, model string, at time.Time) *lineageView {
	return &lineageView{viewBase: newBase(c), model: model, at: at, hops: defaultLineageHops, sel: model}
}

func (v *lineageView) kind() viewKind { return viewLineage }

func (v *lineageView) title() string { return "lineage " + v.model }

// load judges the lineage at the focused instant, then reads the incident
// rooted at the focus's unit there (engine.LineageHolds: the Incidents
// card's own).
func (v *lineageView) load(gen uint64, _ []string) tea.Cmd {
	e, model, at, hops := v.c.eng, v.model, v.at, v.hops
	return loadCmdWithin(v.c, v.id, gen, wholeLoadTimeout, func(ctx context.Context) (*lineageData, error) {
		rep, err := e.Lineage(ctx, model, hops, hops, at)
		if err != nil {
			return nil, err
		}
		d := &lineageData{rep: rep}
		if root := rep.Node(model); root != nil && root.Problem == "" {
			if d.holds, err = e.LineageHolds(ctx, model, root.Window); err != nil {
				return nil, err
			}
		}
		return d, nil
	})
}

func (v *lineageView) update(msg viewMsg) tea.Cmd {
	return takeLoaded(msg, func(d *lineageData) {
		v.data, v.graph = d, nil
		if d.rep.Node(v.sel) == nil && !isLineageGroup(v.sel) {
			v.sel = v.model
		}
	})
}

// affected: any change in the environment may turn a verdict on the
// graph (a unit applied upstream, a run downstream), so it reloads, as
// why does.
func (v *lineageView) affected(changes []state.Change) (bool, []string) {
	return len(changedModels(v.c.eng.Env().Suffix, changes)) > 0, nil
}

// root is the focus's node in the data; nil before it has loaded.
func (v *lineageView) root() *engine.LineageNode {
	if v.data == nil {
		return nil
	}
	return v.data.rep.Node(v.model)
}

// picture is the graph of the data, built on demand.
func (v *lineageView) picture() pipelineGraph {
	if v.data == nil || v.c.render.lineage == nil {
		return nil
	}
	if v.graph == nil || v.builtFor.Name != v.c.theme.Name || v.builtWidth != v.c.width {
		v.graph = v.c.render.lineage(lineageInput{Report: v.data.rep, Holds: v.data.holds, Expanded: v.expanded,
			Theme: v.c.theme, Width: v.c.width})
		v.builtFor, v.builtWidth = v.c.theme, v.c.width
	}
	return v.graph
}

func (v *lineageView) key(msg tea.KeyPressMsg) tea.Cmd {
	k := v.c.keys
	switch {
	case key.Matches(msg, k.WindowBack), key.Matches(msg, k.WindowOn):
		v.moveWindow(key.Matches(msg, k.WindowOn))
		return nil
	case key.Matches(msg, k.MoreHops):
		v.setHops(v.hops + 1)
		return nil
	case key.Matches(msg, k.FewerHops):
		v.setHops(v.hops - 1)
		return nil
	}
	if g := v.picture(); g != nil {
		for dir, b := range []key.Binding{k.Up, k.Down, k.NodeLeft, k.NodeRight} {
			if key.Matches(msg, b) {
				v.sel = g.Neighbour(v.sel, dir)
				return nil
			}
		}
	}
	if isLineageGroup(v.sel) {
		if key.Matches(msg, k.Enter) {
			if v.expanded == nil {
				v.expanded = map[string]bool{}
			}
			v.expanded[v.sel], v.graph = true, nil
		}
		return nil
	}
	n := v.selectedNode()
	if n == nil {
		return nil
	}
	switch {
	case key.Matches(msg, k.Enter) && n.Problem != "":
		v.c.flash(untrusted.Line(n.Problem), true)
	case key.Matches(msg, k.Enter):
		v.c.openWhy(n.Model, n.Window.Since)
	case key.Matches(msg, k.Model):
		v.c.openModel(n.Model)
	}
	return nil
}

// selectedNode is the selected model's node; nil on a group.
func (v *lineageView) selectedNode() *engine.LineageNode {
	if v.data == nil {
		return nil
	}
	return v.data.rep.Node(v.sel)
}

// moveWindow focuses the root's next (later) or previous window: an
// instant inside it, which the engine turns into the unit holding it.
func (v *lineageView) moveWindow(later bool) {
	r := v.root()
	if r != nil && r.Problem != "" {
		v.c.flash(untrusted.Line(r.Problem), true)
		return
	}
	if r == nil || r.Window.IsZero() {
		if r != nil {
			v.c.flash(v.model+" is timeless: one unit, no other window to focus", false)
		}
		return
	}
	if later {
		v.at = r.Window.Until
	} else {
		v.at = r.Window.Since.Add(-time.Nanosecond)
	}
	v.c.send(reloadMsg{view: v.id})
}

func (v *lineageView) setHops(n int) {
	n = min(max(n, 1), maxLineageHops)
	if n == v.hops {
		return
	}
	v.hops = n
	v.c.send(reloadMsg{view: v.id})
}

func (v *lineageView) wheel(tea.MouseWheelMsg) {}

func (v *lineageView) bindings() []key.Binding {
	k := v.c.keys
	return []key.Binding{saying(k.Enter, "why"), k.WindowBack, k.NodeMove, saying(k.Model, "open model"), k.MoreHops}
}
