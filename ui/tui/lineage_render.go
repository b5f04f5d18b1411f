package tui

import (
	"fmt"
	"strings"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/ui/untrusted"
)

// The lineage screen's body: the summary over the picture, the selected
// node's edges in words and the legend under it.

// heldWord is the screen's word for a model the root holds.
const heldWord = "held"

func (v *lineageView) render(w, h int) []string {
	if !v.loaded || v.data == nil {
		return loadingLines(&v.viewBase, w, h)
	}
	t := v.c.theme
	lines := v.summary(w)
	g := v.picture()
	gh := max(1, h-5)
	if g == nil {
		lines = append(lines, pad(v.plainList(w), w, gh)...)
	} else {
		if !v.placed {
			// The first frame centres the focus, so what it reads and what
			// reads it both show: halfway between the scrolls that put it
			// at the window's top and at its bottom.
			_, top := g.Scroll(v.sel, w, gh, 0, 1<<30)
			_, bottom := g.Scroll(v.sel, w, gh, 0, -1<<30)
			v.y, v.placed = (top+bottom)/2, true
		}
		v.x, v.y = g.Scroll(v.sel, w, gh, v.x, v.y)
		lines = append(lines, g.Render(w, gh, v.sel, v.x, v.y)...)
	}
	reads, readBy := v.edgeLines(w)
	lines = append(lines, reads, readBy)
	legend := " " + lineageLegend()
	if g != nil {
		pw, ph := g.Size()
		if more := scrollHint(v.x, v.y, w, gh, pw, ph); more != "" {
			legend = " " + more + " · " + lineageLegend()
		}
	}
	lines = append(lines, t.Muted.Render(fit(legend, w)))
	return pad(lines, w, h)
}

// summary is the first two lines: the focus, its window and status and
// the hops; then what it holds (the Incidents card's words and number).
func (v *lineageView) summary(w int) []string {
	t := v.c.theme
	r := v.root()
	head := " " + t.Accent.Render(untrusted.Line(v.model))
	if r != nil && !r.Window.IsZero() {
		head += " " + v.c.window(r.Window)
	}
	if r != nil && r.Problem == "" {
		head += " " + t.Glyph(unitStatus(r.Status)) + " " + string(r.Status)
	}
	holds := "not an incident's root here: what it holds counts under its root's card"
	if v.data.holds != nil {
		holds = v.data.holds.HoldsText()
	}
	right := t.Muted.Render(fmt.Sprintf(" ±%d hops", v.hops))
	return []string{spread(head, right, w-1), fit("   "+untrusted.Line(holds), w)}
}

// edgeLines name the selected node's edges with their contracts and
// verdicts in words: what it reads, and what reads it.
func (v *lineageView) edgeLines(w int) (string, string) {
	t := v.c.theme
	var reads, readBy []string
	for _, e := range v.data.rep.Edges {
		switch v.sel {
		case e.To:
			reads = append(reads, untrusted.Line(e.From)+" "+edgeWords(e))
		case e.From:
			readBy = append(readBy, untrusted.Line(e.To)+" "+edgeWords(e))
		}
	}
	line := func(label string, es []string) string {
		if len(es) == 0 {
			es = []string{"nothing on the graph"}
		}
		return fit(" "+t.Muted.Render(label)+" "+strings.Join(es, " · "), w)
	}
	return line("reads:", reads), line("read by:", readBy)
}

// edgeWords are an edge's contract (or "after: TYPE") and verdict.
func edgeWords(e engine.LineageEdge) string {
	c := e.Contract
	switch {
	case e.After:
		c = "after:" + c
	case c == "":
		c = "ungated"
	}
	if e.Verdict == "" || e.Verdict == engine.VerdictUngated {
		return c
	}
	return c + " " + e.Verdict
}

// plainList is the lineage without a graph renderer: one line a node.
func (v *lineageView) plainList(w int) []string {
	var out []string
	for _, n := range v.data.rep.Nodes {
		mark := "  "
		if n.Model == v.sel {
			mark = "› "
		}
		out = append(out, fit(fmt.Sprintf(" %s%+d %s · %s · %s", mark, n.Layer, untrusted.Line(n.Model), untrusted.Line(n.Pipeline), n.Status), w))
	}
	return out
}

// scrollHint says which ways a picture of pw×ph scrolled to (x, y) goes
// on past a w×h window ("more ▸▾"); empty when it all shows.
func scrollHint(x, y, w, h, pw, ph int) string {
	more := ""
	for _, m := range []struct {
		ok bool
		s  string
	}{{x > 0, "◂"}, {x+w < pw, "▸"}, {y > 0, "▴"}, {y+h < ph, "▾"}} {
		if m.ok {
			more += m.s
		}
	}
	if more == "" {
		return ""
	}
	return "more " + more
}
