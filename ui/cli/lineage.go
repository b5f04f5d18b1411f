package cli

import (
	"cmp"
	gocontext "context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/ui/untrusted"
)

func init() {
	var up, down int
	var at, format string
	register(&command{
		name:    "lineage",
		summary: "a model's upstream and downstream across pipelines, each edge's verdict at a time",
		long: `lineage draws what a model reads and what reads it, across every pipeline, up
to --up hops upstream and --down downstream (2 each by default). Each model
shows the unit that holds --at (now by default) and its status; each edge the
contract its reader gates on (EXACT, ENCAPSULATE, THROUGH, WHOLE, EXISTS) or the
after: edge's type, and its verdict for the reader's unit at that time —
satisfied, missing, stale or outdated — as why judges it.

--format text (the default) prints a tree each way from the model; dot and
mermaid draw the graph; -o json (or --format json) gives nodes and edges.`,
		examples: []string{
			"bollhav lineage core.daily_revenue --at 2026-12-03T16:00:00Z",
			"bollhav lineage raw.payments --down 3 --format dot | dot -Tsvg > lineage.svg",
			"bollhav lineage mart.monthly_revenue --up 4 -o json",
		},
		flags: func(fs *pflag.FlagSet) {
			fs.IntVar(&up, "up", 2, "hops upstream")
			fs.IntVar(&down, "down", 2, "hops downstream")
			fs.StringVar(&at, "at", "", "the time to judge the edges at (RFC 3339; default now)")
			format = ""
			fs.StringVar(&format, "format", "", "text, dot, mermaid or json (default text; -o json means json)")
		},
		run: func(c *cmdContext, args []string) int { return runLineage(c, args, up, down, at, format) },
	})
}

func runLineage(c *cmdContext, args []string, up, down int, at, format string) int {
	if len(args) != 1 {
		return c.fail("lineage", &usageError{"want exactly one MODEL"})
	}
	if up < 0 || down < 0 {
		return c.fail("lineage", &usageError{fmt.Sprintf("--up and --down must not be negative (got %d and %d)", up, down)})
	}
	format = cmp.Or(format, c.Output)
	render, ok := map[string]func(io.Writer, *engine.LineageReport){
		"text": lineageText, "dot": lineageDot, "mermaid": lineageMermaid, "json": func(w io.Writer, r *engine.LineageReport) { writeJSON(w, lineageToJSON(r)) },
	}[format]
	if !ok {
		return c.fail("lineage", &usageError{fmt.Sprintf("invalid --format %q: use text, dot, mermaid or json", format)})
	}
	var t time.Time
	if at != "" {
		var err error
		if t, err = state.ParseTime(at); err != nil {
			return c.fail("lineage", &usageError{fmt.Sprintf("--at: %v", err)})
		}
	}
	return c.withEngine("lineage", nil, func(ctx gocontext.Context, e *engine.Engine) int {
		rep, err := e.Lineage(ctx, args[0], up, down, t)
		if err != nil {
			fmt.Fprintf(c.Err, "bollhav lineage: %s\n", oneLine(err.Error()))
			return ExitUsage
		}
		render(c.Out, rep)
		return ExitOK
	})
}

// lineageNodeText is a node as the tree prints it: name, pipeline, shape
// and its unit at the report's time.
func lineageNodeText(n engine.LineageNode) string {
	s := fmt.Sprintf("%s · %s · %s", untrusted.Line(n.Model), untrusted.Line(n.Pipeline), n.Shape)
	switch {
	case n.Problem != "":
		return s + ": not judged (" + untrusted.Line(n.Problem) + ")"
	case n.Window.IsZero():
		return s + ": " + string(n.Status)
	}
	return s + ": " + string(n.Status) + " " + n.Window.String()
}

// lineageEdgeText is an edge's contract and verdict, with its reason
// when it does not hold.
func lineageEdgeText(e engine.LineageEdge) string {
	kind := cmp.Or(e.Contract, "ungated")
	if e.After {
		kind = "after " + e.Contract
	}
	s := kind + " " + e.Verdict
	if e.Verdict == engine.VerdictUngated {
		s = "ungated"
	}
	if e.Reason != "" {
		s += ": " + untrusted.Line(e.Reason)
	}
	return s
}

// lineageText prints the focus, then a tree upstream and a tree
// downstream. A model reached a second time is named with "(above)" and
// not expanded again.
func lineageText(w io.Writer, r *engine.LineageReport) {
	nodes := map[string]engine.LineageNode{}
	for _, n := range r.Nodes {
		nodes[n.Model] = n
	}
	fmt.Fprintf(w, "%s, at %s\n", lineageNodeText(nodes[r.Focus]), state.FormatTime(r.At))
	for _, dir := range []struct {
		name string
		hops int
		up   bool
	}{{"upstream", r.Up, true}, {"downstream", r.Down, false}} {
		children := map[string][]engine.LineageEdge{}
		for _, e := range r.Edges {
			if dir.up && nodes[e.From].Layer < nodes[e.To].Layer {
				children[e.To] = append(children[e.To], e)
			} else if !dir.up && nodes[e.To].Layer > nodes[e.From].Layer {
				children[e.From] = append(children[e.From], e)
			}
		}
		fmt.Fprintf(w, "%s (%d hop%s)\n", dir.name, dir.hops, plural(dir.hops))
		if len(children[r.Focus]) == 0 {
			fmt.Fprintln(w, "  none")
			continue
		}
		seen := map[string]bool{r.Focus: true}
		var walk func(name, indent string)
		walk = func(name, indent string) {
			kids := children[name]
			for i, e := range kids {
				other := e.From
				if !dir.up {
					other = e.To
				}
				branch, next := "├─ ", "│  "
				if i == len(kids)-1 {
					branch, next = "└─ ", "   "
				}
				if seen[other] {
					fmt.Fprintf(w, "%s%s%s (above) — %s\n", indent, branch, untrusted.Line(other), lineageEdgeText(e))
					continue
				}
				seen[other] = true
				fmt.Fprintf(w, "%s%s%s — %s\n", indent, branch, lineageNodeText(nodes[other]), lineageEdgeText(e))
				walk(other, indent+next)
			}
		}
		walk(r.Focus, "  ")
	}
}

// verdictColour is the colour dot draws a verdict's edge in.
var verdictColour = map[string]string{
	engine.VerdictSatisfied: "darkgreen", engine.VerdictMissing: "red", engine.VerdictStale: "orange",
	engine.VerdictOutdated: "purple", engine.VerdictError: "red",
}

func lineageDot(w io.Writer, r *engine.LineageReport) {
	fmt.Fprintln(w, "digraph lineage {")
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, "  node [shape=box];")
	for _, n := range r.Nodes {
		attrs := ""
		if n.Model == r.Focus {
			attrs = ", penwidth=2"
		}
		fmt.Fprintf(w, "  %q [label=%q%s];\n", n.Model, n.Model+"\n"+n.Pipeline+" · "+n.Shape+"\n"+string(n.Status), attrs)
	}
	for _, e := range r.Edges {
		style := ""
		if e.After {
			style = ", style=dashed"
		}
		fmt.Fprintf(w, "  %q -> %q [label=%q, color=%s%s];\n", e.From, e.To, strings.TrimSpace(e.Contract+" "+e.Verdict), cmp.Or(verdictColour[e.Verdict], "gray"), style)
	}
	fmt.Fprintln(w, "}")
}

func lineageMermaid(w io.Writer, r *engine.LineageReport) {
	ids := map[string]string{}
	fmt.Fprintln(w, "flowchart LR")
	for i, n := range r.Nodes {
		ids[n.Model] = fmt.Sprintf("n%d", i+1)
		fmt.Fprintf(w, "  %s[\"%s<br>%s · %s<br>%s\"]\n", ids[n.Model], n.Model, n.Pipeline, n.Shape, n.Status)
	}
	for i, e := range r.Edges {
		arrow := "-->"
		if e.After {
			arrow = "-.->"
		}
		fmt.Fprintf(w, "  %s %s|%s| %s\n", ids[e.From], arrow, strings.TrimSpace(e.Contract+" "+e.Verdict), ids[e.To])
		fmt.Fprintf(w, "  linkStyle %d stroke:%s\n", i, cmp.Or(verdictColour[e.Verdict], "gray"))
	}
}

type lineageJSON struct {
	Focus string            `json:"focus"`
	At    string            `json:"at"`
	Up    int               `json:"up"`
	Down  int               `json:"down"`
	Nodes []lineageNodeJSON `json:"nodes"`
	Edges []lineageEdgeJSON `json:"edges"`
}

// lineageNodeJSON is a node: its model and the unit holding the time
// (unitRefJSON), with the model's place and counts.
type lineageNodeJSON struct {
	unitRefJSON
	Pipeline string         `json:"pipeline"`
	Shape    string         `json:"shape"`
	Layer    int            `json:"layer"`
	Status   string         `json:"status"`
	Counts   map[string]int `json:"counts"`
	Problem  string         `json:"problem,omitempty"`
}

type lineageEdgeJSON struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Kind     string `json:"kind"`
	Contract string `json:"contract"`
	Verdict  string `json:"verdict"`
	Reason   string `json:"reason"`
}

func lineageToJSON(r *engine.LineageReport) lineageJSON {
	out := lineageJSON{Focus: r.Focus, At: state.FormatTime(r.At), Up: r.Up, Down: r.Down, Nodes: []lineageNodeJSON{}, Edges: []lineageEdgeJSON{}}
	for _, n := range r.Nodes {
		j := lineageNodeJSON{unitRefJSON: unitRef(n.Model, n.Window), Pipeline: n.Pipeline, Shape: n.Shape, Layer: n.Layer, Status: string(n.Status),
			Counts: map[string]int{}, Problem: n.Problem}
		for _, st := range state.Statuses {
			j.Counts[string(st)] = n.Counts[st]
		}
		out.Nodes = append(out.Nodes, j)
	}
	for _, e := range r.Edges {
		kind := "data"
		if e.After {
			kind = "after"
		}
		out.Edges = append(out.Edges, lineageEdgeJSON{From: e.From, To: e.To, Kind: kind, Contract: e.Contract, Verdict: e.Verdict, Reason: e.Reason})
	}
	return out
}
