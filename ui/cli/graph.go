package cli

import (
	"cmp"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/graph"
	"github.com/spf13/pflag"
)

func init() {
	var format string
	register(&command{
		name:    "graph",
		summary: "print each pipeline's tasks in waves, as text, dot, mermaid or json",
		globals: []string{gSpec, gOutput},
		long: `graph needs no state store. Each model is a task of its pipeline; its edges are
its explicit 'after' entries plus an implicit SUCCESS edge for each gated
upstream in the same pipeline. Dependencies on other pipelines are
cross-pipeline edges, settled at run time by the contract gate. Waves are the
guaranteed-safe order: each wave depends only on earlier ones.`,
		examples: []string{
			"bollhav graph",
			"bollhav graph --format dot | dot -Tsvg > graph.svg",
			"bollhav graph --format mermaid",
			"bollhav graph -o json",
		},
		flags: func(fs *pflag.FlagSet) {
			format = ""
			fs.StringVar(&format, "format", "", "text, dot, mermaid or json (default text; -o json means json)")
		},
		run: func(c *cmdContext, args []string) int { return runGraph(c, args, format) },
	})
}

func runGraph(c *cmdContext, args []string, format string) int {
	if len(args) > 0 {
		return c.fail("graph", &usageError{fmt.Sprintf("unexpected argument %q", args[0])})
	}
	format = cmp.Or(format, c.Output)
	render, ok := map[string]func(io.Writer, []*engine.PipelineGraph){
		"text": graphText, "dot": graphDot, "mermaid": graphMermaid, "json": graphJSON,
	}[format]
	if !ok {
		return c.fail("graph", &usageError{fmt.Sprintf("invalid --format %q: use text, dot, mermaid or json", format)})
	}
	sp, code := c.loadSpec("graph")
	if sp == nil {
		return code
	}
	pipelines, err := engine.PipelineGraphs(sp, engine.AssignTaskIDs(sp, nil))
	if err != nil {
		for _, e := range unjoin(err) {
			fmt.Fprintf(c.Err, "bollhav graph: %v\n", e)
		}
		return ExitUsage
	}
	render(c.Out, pipelines)
	return ExitOK
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// edgeLabel is how an edge type reads next to a dependency; SUCCESS, the
// usual kind, goes unsaid.
func edgeLabel(t graph.DependencyType) string {
	if t == graph.Success {
		return ""
	}
	return strings.ToLower(t.String())
}

func graphText(w io.Writer, pipelines []*engine.PipelineGraph) {
	for i, p := range pipelines {
		if i > 0 {
			fmt.Fprintln(w)
		}
		deps := map[string][]string{}
		for _, e := range p.Edges {
			d := e.DependsOn
			if l := edgeLabel(e.Type); l != "" {
				d += " (" + l + ")"
			}
			deps[e.Task] = append(deps[e.Task], d)
		}
		for _, e := range p.Cross {
			where := "not in spec"
			if e.Pipeline != "" {
				where = "pipeline " + e.Pipeline
			}
			d := e.DependsOn + " (" + where
			if l := edgeLabel(e.Type); l != "" {
				d += ", " + l
			}
			deps[e.Task] = append(deps[e.Task], d+")")
		}
		fmt.Fprintf(w, "pipeline %s: %d task%s, %d edge%s, %d cross-pipeline\n",
			p.Name, len(p.Tasks), plural(len(p.Tasks)), len(p.Edges), plural(len(p.Edges)), len(p.Cross))
		width := 0
		for _, t := range p.Tasks {
			width = max(width, len(t.Model)+len(fmt.Sprint(t.ID))+2)
		}
		for k, wave := range p.Graph.Waves() {
			for j, id := range wave {
				label := "       "
				if j == 0 {
					label = fmt.Sprintf("wave %-2d", k+1)
				}
				name := p.ModelName(id)
				line := fmt.Sprintf("  %s  %-*s", label, width, fmt.Sprintf("#%d %s", id, name))
				if d := deps[name]; len(d) > 0 {
					line += "  ← " + strings.Join(d, ", ")
				}
				fmt.Fprintln(w, strings.TrimRight(line, " "))
			}
		}
	}
}

func graphDot(w io.Writer, pipelines []*engine.PipelineGraph) {
	fmt.Fprintln(w, "digraph bollhav {")
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, "  node [shape=box];")
	external := map[string]bool{}
	for i, p := range pipelines {
		fmt.Fprintf(w, "  subgraph cluster_%d {\n    label=%q;\n", i, "pipeline "+p.Name)
		for _, t := range p.Tasks {
			fmt.Fprintf(w, "    %q;\n", t.Model)
		}
		fmt.Fprintln(w, "  }")
	}
	for _, p := range pipelines {
		for _, e := range p.Edges {
			attrs := ""
			if l := edgeLabel(e.Type); l != "" {
				attrs = fmt.Sprintf(" [label=%q]", l)
			}
			fmt.Fprintf(w, "  %q -> %q%s;\n", e.DependsOn, e.Task, attrs)
		}
		for _, e := range p.Cross {
			if e.Pipeline == "" && !external[e.DependsOn] {
				external[e.DependsOn] = true
				fmt.Fprintf(w, "  %q [style=dashed];\n", e.DependsOn)
			}
			label := "cross-pipeline"
			if l := edgeLabel(e.Type); l != "" {
				label += ", " + l
			}
			fmt.Fprintf(w, "  %q -> %q [style=dashed, label=%q];\n", e.DependsOn, e.Task, label)
		}
	}
	fmt.Fprintln(w, "}")
}

func graphMermaid(w io.Writer, pipelines []*engine.PipelineGraph) {
	ids := map[string]string{}
	node := func(name string) string {
		if id, ok := ids[name]; ok {
			return id
		}
		ids[name] = fmt.Sprintf("n%d", len(ids)+1)
		return ids[name]
	}
	fmt.Fprintln(w, "flowchart LR")
	for _, p := range pipelines {
		fmt.Fprintf(w, "  subgraph %s[\"pipeline %s\"]\n", "p_"+p.Name, p.Name)
		for _, t := range p.Tasks {
			fmt.Fprintf(w, "    %s[\"%s\"]\n", node(t.Model), t.Model)
		}
		fmt.Fprintln(w, "  end")
	}
	var external []string
	for _, p := range pipelines {
		for _, e := range p.Cross {
			if _, ok := ids[e.DependsOn]; !ok {
				external = append(external, e.DependsOn)
				node(e.DependsOn)
			}
		}
	}
	sort.Strings(external)
	for _, name := range external {
		fmt.Fprintf(w, "  %s([\"%s\"])\n", ids[name], name)
	}
	for _, p := range pipelines {
		for _, e := range p.Edges {
			if l := edgeLabel(e.Type); l != "" {
				fmt.Fprintf(w, "  %s -- %s --> %s\n", ids[e.DependsOn], l, ids[e.Task])
			} else {
				fmt.Fprintf(w, "  %s --> %s\n", ids[e.DependsOn], ids[e.Task])
			}
		}
		for _, e := range p.Cross {
			fmt.Fprintf(w, "  %s -. cross-pipeline .-> %s\n", ids[e.DependsOn], ids[e.Task])
		}
	}
}

type graphJSONOut struct {
	Pipelines []graphJSONPipeline `json:"pipelines"`
}

type graphJSONPipeline struct {
	Name  string          `json:"name"`
	Tasks []graphJSONTask `json:"tasks"`
	Waves [][]int         `json:"waves"`
}

type graphJSONTask struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

func graphJSON(w io.Writer, pipelines []*engine.PipelineGraph) {
	out := graphJSONOut{Pipelines: []graphJSONPipeline{}}
	for _, p := range pipelines {
		jp := graphJSONPipeline{Name: p.Name, Tasks: []graphJSONTask{}, Waves: p.Graph.Waves()}
		for _, t := range p.Tasks {
			jp.Tasks = append(jp.Tasks, graphJSONTask{ID: t.ID, Name: t.Model})
		}
		out.Pipelines = append(out.Pipelines, jp)
	}
	writeJSON(w, out)
}
