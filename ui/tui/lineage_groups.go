package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/tui/graphview"
)

// lineageGroupAbove is the most models one layer of the lineage draws as
// boxes of their own: past it the layer's models are drawn one box per
// pipeline with their count ("core ×37"), so a model with 200 readers
// shows a few boxes rather than 200 a screen cannot hold. Twelve is about
// four screens' width of boxes at 80 columns, as far as panning stays of
// use; enter on a group draws its models one by one. The focus is never
// grouped.
const lineageGroupAbove = 12

// lineageGroupPrefix starts a group's name, which no model's can: a
// model name has no space.
const lineageGroupPrefix = "group "

// lineageGroupKey names the group of pipeline's models in layer.
func lineageGroupKey(layer int, pipeline string) string {
	return fmt.Sprintf("%s%+d %s", lineageGroupPrefix, layer, pipeline)
}

func isLineageGroup(name string) bool { return strings.HasPrefix(name, lineageGroupPrefix) }

// lineageBox is one box of the picture: a model, or a group of one
// pipeline's models in one layer.
type lineageBox struct {
	name  string
	layer int
	model *engine.LineageNode // nil for a group
	// A group's pipeline and members.
	pipeline string
	members  []*engine.LineageNode
}

// lineageBoxes are the boxes of rep, layer by layer, and the box each
// model is drawn in (into: model → box name).
func lineageBoxes(rep *engine.LineageReport, expanded map[string]bool) ([]lineageBox, map[string]string) {
	byLayer := map[int][]*engine.LineageNode{}
	var layers []int
	for i := range rep.Nodes {
		n := &rep.Nodes[i]
		if _, ok := byLayer[n.Layer]; !ok {
			layers = append(layers, n.Layer)
		}
		byLayer[n.Layer] = append(byLayer[n.Layer], n)
	}
	slices.Sort(layers)
	var out []lineageBox
	into := make(map[string]string, len(rep.Nodes))
	for _, ly := range layers {
		ns := byLayer[ly]
		if ly == 0 || len(ns) <= lineageGroupAbove {
			for _, n := range ns {
				out = append(out, lineageBox{name: n.Model, layer: ly, model: n})
				into[n.Model] = n.Model
			}
			continue
		}
		groups := map[string]*lineageBox{}
		var order []string
		for _, n := range ns {
			key := lineageGroupKey(ly, n.Pipeline)
			if expanded[key] {
				out = append(out, lineageBox{name: n.Model, layer: ly, model: n})
				into[n.Model] = n.Model
				continue
			}
			g, ok := groups[key]
			if !ok {
				g = &lineageBox{name: key, layer: ly, pipeline: n.Pipeline}
				groups[key] = g
				order = append(order, key)
			}
			g.members = append(g.members, n)
			into[n.Model] = key
		}
		for _, key := range order {
			out = append(out, *groups[key])
		}
	}
	return out, into
}

// node is the box drawn: a model's name, status strip, pipeline and grain
// ("held" first when the root holds it); a group's pipeline and count, its
// members' statuses at the focus counted, and its worst health.
func (b *lineageBox) node(held map[string]bool) graphview.Node {
	if n := b.model; n != nil {
		// "fixed 1d grid" without "grid": the grain is what tells.
		sub := n.Pipeline + " · " + strings.TrimSuffix(n.Shape, " grid")
		if held[n.Model] {
			sub = heldWord + " · " + sub
		}
		return graphview.Node{Label: n.Model, Health: lineageHealth(n), Detail: lineageStrip(n), Sub: sub}
	}
	counts := map[state.UnitStatus]int{}
	worst := graphview.Unknown
	nHeld := 0
	for _, m := range b.members {
		counts[m.Status]++
		// The healths run from no state to failed: a group shows its
		// worst member's.
		worst = max(worst, lineageHealth(m))
		if held[m.Model] {
			nHeld++
		}
	}
	var parts []string
	for _, s := range []state.UnitStatus{state.Failed, state.Blocked, state.Running, state.Pending, state.Applied, ""} {
		if c := counts[s]; c > 0 {
			parts = append(parts, fmt.Sprintf("%d%s", c, themes.Glyph(unitStatus(s))))
		}
	}
	sub := strings.Join(parts, " ")
	if nHeld > 0 {
		sub = fmt.Sprintf("%d %s · %s", nHeld, heldWord, sub)
	}
	return graphview.Node{Label: fmt.Sprintf("%s ×%d", b.pipeline, len(b.members)), Health: worst, Detail: "models", Sub: sub}
}
