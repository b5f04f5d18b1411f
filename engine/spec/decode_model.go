package spec

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/bollhav/bollhav/graph"
	"github.com/goccy/go-yaml/ast"
)

// modelKeys are the keys a model may set in bollhav.yaml.
var modelKeys = []string{"name", "pipeline", "temporality", "chunking", "state", "upstream", "run", "after", "run_condition", "connection", "retry"}

// DefaultPipeline is the pipeline of a model that names none.
const DefaultPipeline = "default"

// modelSite is a decoded model with the positions the cross-field and
// cross-model rules point at. Positions are zero when the key is absent.
type modelSite struct {
	m *Model
	// name is the name value, or the model's start when the name is missing;
	// nameOK is false when the name was missing or invalid, so that rules
	// keyed on the name stay quiet instead of piling up follow-on errors.
	name     Position
	nameOK   bool
	chunking Position // the chunking key
	// temporalityOK is false when temporality was invalid, so the rules that
	// depend on it stay quiet rather than guess.
	temporalityOK bool
	// sources are the upstreams' sites, for checkModel; nil after it.
	sources []*sourceSite
	// after holds the position of each edge's task value.
	after []Position
	// retry is the model's own retry block, nil when it has none.
	retry *RetryDefaults
}

// decodeModel reads one entry of models:. It returns nil when the entry is
// not a mapping at all.
func (d *decoder) decodeModel(n ast.Node) *modelSite {
	d.model, d.source = "", ""
	mark := len(d.errs)
	fs := d.mapping(n, "a model", modelKeys...)
	if fs == nil {
		return nil
	}
	m := &Model{Pipeline: DefaultPipeline, State: true, Pos: d.pos(d.resolve(n))}
	site := &modelSite{m: m, name: m.Pos, temporalityOK: true}
	if f := fs.get("name"); f == nil || isNull(f.val) {
		if !fs.meant("name") {
			d.errAt(m.Pos, "model has no name: want name: schema.table")
		}
	} else if name, ok := d.str(f); ok {
		m.Name, site.name = name, f.valPos
		if why := modelNameProblem(name); why != "" {
			// An invalid name is quoted in the message and never used as
			// context: printed bare it could carry terminal escapes.
			d.errAt(f.valPos, "invalid model name %q: %s", name, why)
		} else {
			d.setModel(name, mark)
			site.nameOK = true
			m.Schema, m.Table, _ = strings.Cut(name, ".")
		}
	}
	if f := fs.present("pipeline"); f != nil {
		if p, ok := d.str(f); ok {
			if why := identProblem(p); why != "" {
				d.errAt(f.valPos, "invalid pipeline name %q: %s", p, why)
			} else {
				m.Pipeline = p
			}
		}
	}
	site.temporalityOK = pickWord(d, fs.present("temporality"), "temporality", &m.Temporality,
		[]word[Temporality]{{"temporal", Temporal}, {"timeless", Timeless}})
	if f := fs.present("state"); f != nil {
		if b, ok := d.boolean(f); ok {
			m.State = b
		}
	}
	if f := fs.present("chunking"); f != nil {
		site.chunking = f.keyPos
		m.Chunking = d.decodeChunking(f, m.Temporality)
	}
	if f := fs.get("upstream"); f != nil {
		items, _ := d.list(f)
		for _, item := range items {
			if s := d.decodeSource(item); s != nil {
				site.sources = append(site.sources, s)
				m.Upstream = append(m.Upstream, s.src)
			}
		}
		d.source = ""
	}
	if f := fs.present("run"); f != nil {
		m.Run = d.decodeRun(f, m.Temporality)
	}
	if f := fs.get("after"); f != nil {
		items, _ := d.list(f)
		for _, item := range items {
			if e, taskPos, ok := d.decodeAfter(item); ok {
				m.After = append(m.After, e)
				site.after = append(site.after, taskPos)
			}
		}
	}
	if f := fs.present("run_condition"); f != nil {
		m.RunCondition, m.RunConditionCount = d.decodeRunCondition(f)
	}
	if f := fs.present("connection"); f != nil {
		m.Connection = d.decodeConnection(f)
	}
	if f := fs.present("retry"); f != nil {
		if r, ok := d.decodeRetry(f); ok {
			site.retry = &r
		}
	}
	d.checkModel(site)
	// checkModel is the last reader of the sources' sites (positions and a
	// copy of each source): a spec of 60,000 models would otherwise hold
	// 25 MB of them until every model is decoded.
	site.sources = nil
	return site
}

// afterKeys are the keys of one after: entry.
var afterKeys = []string{"task", "on"}

// decodeAfter reads one explicit task edge; on defaults to success.
func (d *decoder) decodeAfter(n ast.Node) (AfterEdge, Position, bool) {
	fs := d.mapping(n, "an after entry", afterKeys...)
	if fs == nil {
		return AfterEdge{}, Position{}, false
	}
	e := AfterEdge{On: graph.Success, Pos: d.pos(d.resolve(n))}
	f := fs.present("task")
	if f == nil {
		if !fs.meant("task") {
			d.errAt(e.Pos, "after entry has no task: want {task: schema.table, on: success}")
		}
		return e, Position{}, false
	}
	task, ok := d.str(f)
	if !ok {
		return e, Position{}, false
	}
	if why := modelNameProblem(task); why != "" {
		d.errAt(f.valPos, "invalid after task %q: %s", task, why)
		return e, Position{}, false
	}
	e.Task = task
	if on := fs.present("on"); on != nil {
		if s, ok := d.str(on); ok {
			i := slices.IndexFunc(dependencyTypes, func(t graph.DependencyType) bool { return strings.ToLower(t.String()) == strings.ToLower(s) })
			if i >= 0 {
				e.On = dependencyTypes[i]
			} else {
				d.errAt(on.valPos, "unknown after on %q: want success, failure, always or has_data", s)
			}
		}
	}
	return e, f.valPos, true
}

// decodeRunCondition reads all, any or a whole number N >= 1 (docs/design.md,
// The task graph).
func (d *decoder) decodeRunCondition(f *field) (graph.RunCondition, int) {
	if n, ok := intValue(f.val); ok {
		if n < 1 {
			d.errAt(f.valPos, "run_condition %d must be at least 1: a task that needs no dependency would ignore them all", n)
			return graph.All, 0
		}
		if n > 1<<20 {
			d.errAt(f.valPos, "run_condition %d is too large", n)
			return graph.All, 0
		}
		return graph.N, int(n)
	}
	s, ok := d.str(f)
	if !ok {
		return graph.All, 0
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "all":
		return graph.All, 0
	case "any":
		return graph.Any, 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		if n < 1 {
			d.errAt(f.valPos, "run_condition %d must be at least 1: a task that needs no dependency would ignore them all", n)
			return graph.All, 0
		}
		return graph.N, n
	}
	d.errAt(f.valPos, "unknown run_condition %s: want all, any or a whole number N >= 1", describeValue(f.val))
	return graph.All, 0
}

// decodeConnection reads connection: {dsn_env_var: NAME}.
func (d *decoder) decodeConnection(f *field) *Connection {
	fs := d.mapping(f.val, "connection", "dsn_env_var")
	if fs == nil {
		return nil
	}
	v := fs.present("dsn_env_var")
	if v == nil {
		if !fs.meant("dsn_env_var") {
			d.errAt(f.keyPos, "connection needs dsn_env_var: the environment variable that holds the DSN")
		}
		return nil
	}
	name, ok := d.envVar(v)
	if !ok {
		return nil
	}
	return &Connection{DSNEnvVar: name}
}

// envVar reads a field that names an environment variable.
func (d *decoder) envVar(f *field) (string, bool) { return d.checkedStr(f, envVarProblem) }

// ident reads a field that holds one identifier (a schema, key or column).
func (d *decoder) ident(f *field) (string, bool) { return d.checkedStr(f, identProblem) }

// checkedStr reads a string field that problem (envVarProblem,
// identProblem) must find nothing wrong with; what it finds is an error
// naming the field and quoting the value.
func (d *decoder) checkedStr(f *field, problem func(string) string) (string, bool) {
	s, ok := d.str(f)
	if !ok {
		return "", false
	}
	if why := problem(s); why != "" {
		d.errAt(f.valPos, "invalid %s %q: %s", f.key, s, why)
		return "", false
	}
	return s, true
}

// setModel names the model being decoded, also on the errors reported since
// mark (its unknown keys are found before its name is read).
func (d *decoder) setModel(name string, mark int) {
	d.model = name
	for _, e := range d.errs[mark:] {
		e.Model = cmp.Or(e.Model, name)
	}
}
