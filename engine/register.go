package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// DefinitionVersion is the version of the ModelDefinition layout stored in
// ModelRecord.Definition. It changes only when a field changes meaning, so a
// reader can tell an old registration from a new one.
const DefinitionVersion = 1

// ModelDefinition is the stable, documented mirror of a Model that
// registration stores as canonical JSON (ModelRecord.Definition): enough for
// a UI opened from the store alone to rebuild the model's shape, inputs,
// executor, edges and run condition. Spec positions are left out, so moving
// a model within its file does not change its content hash.
type ModelDefinition struct {
	Version     int             `json:"version"`
	Name        string          `json:"name"`
	Pipeline    string          `json:"pipeline"`
	Temporality string          `json:"temporality"`
	State       bool            `json:"state"`
	Chunking    *ChunkingDef    `json:"chunking,omitempty"`
	Upstream    []SourceDef     `json:"upstream"`
	Run         RunDef          `json:"run"`
	After       []AfterDef      `json:"after,omitempty"`
	Condition   RunConditionDef `json:"run_condition"`
	Connection  *ConnectionDef  `json:"connection,omitempty"`
}

// ChunkingDef is a temporal model's chunking; times are RFC 3339 UTC.
type ChunkingDef struct {
	Interval    string  `json:"interval"`
	Start       string  `json:"start"`
	End         *string `json:"end,omitempty"`
	Flexibility string  `json:"flexibility"`
	Timezone    string  `json:"timezone"`
}

// SourceDef is one input: its type config (exactly one of the four, none
// for unknown provenance) and its gate.
type SourceDef struct {
	Name string `json:"name"`
	// Type is model, file, api, hardcoded or unknown.
	Type             string        `json:"type"`
	Model            *SourceModel  `json:"model,omitempty"`
	File             *SourceFile   `json:"file,omitempty"`
	API              *SourceAPI    `json:"api,omitempty"`
	Hardcoded        *HardcodedDef `json:"hardcoded,omitempty"`
	Contract         string        `json:"contract,omitempty"`
	Freshness        *FreshnessDef `json:"freshness,omitempty"`
	DeactivateForDev bool          `json:"deactivate_for_dev,omitempty"`
}

// HardcodedDef is inline data with its content hash (seed 000).
type HardcodedDef struct {
	Rows        []map[string]any `json:"rows,omitempty"`
	SQL         string           `json:"sql,omitempty"`
	Extra       map[string]any   `json:"extra,omitempty"`
	ContentHash string           `json:"content_hash"`
}

// FreshnessDef is a freshness gate; Within is a Go duration string.
type FreshnessDef struct {
	Within string `json:"within"`
	Scope  string `json:"scope"`
}

// RunDef is the executor block.
type RunDef struct {
	// Kind is none, command, sql, query or view.
	Kind    string   `json:"kind"`
	Command []string `json:"command,omitempty"`
	SQL     []string `json:"sql,omitempty"`
	Query   string   `json:"query,omitempty"`
	Write   *Write   `json:"write,omitempty"`
	Timeout string   `json:"timeout,omitempty"`
}

// AfterDef is an explicit task edge; On is SUCCESS, FAILURE, ALWAYS or
// HAS_DATA.
type AfterDef struct {
	Task string `json:"task"`
	On   string `json:"on"`
}

// RunConditionDef is ALL, ANY or N with its count.
type RunConditionDef struct {
	Kind  string `json:"kind"`
	Count int    `json:"count,omitempty"`
}

// ConnectionDef points a model's data elsewhere.
type ConnectionDef struct {
	DSNEnvVar string `json:"dsn_env_var"`
}

// DefinitionOf mirrors m, as registration stores it.
func DefinitionOf(m *Model) ModelDefinition {
	d := ModelDefinition{
		Version: DefinitionVersion, Name: m.Name, Pipeline: m.Pipeline, Temporality: m.Temporality.String(),
		State: m.State, Upstream: []SourceDef{},
		Condition: RunConditionDef{Kind: m.RunCondition.String()},
	}
	if m.RunCondition == graph.N {
		d.Condition.Count = m.RunConditionCount
	}
	if m.Temporality == Temporal && m.Chunking != nil {
		c := m.Chunking
		d.Chunking = &ChunkingDef{Interval: c.Interval.String(), Start: state.FormatTime(c.Start),
			Flexibility: c.Flexibility.String(), Timezone: locName(c.Location)}
		if c.End != nil {
			s := state.FormatTime(*c.End)
			d.Chunking.End = &s
		}
	}
	for _, s := range m.Upstream {
		sd := SourceDef{Name: s.Name, Type: s.Kind.String(), Model: s.Model, File: s.File, API: s.API,
			DeactivateForDev: s.DeactivateForDev}
		if s.Hardcoded != nil {
			sd.Hardcoded = &HardcodedDef{Rows: s.Hardcoded.Rows, SQL: s.Hardcoded.SQL, Extra: s.Hardcoded.Extra,
				ContentHash: s.Hardcoded.ContentHash()}
		}
		if s.Gated() {
			sd.Contract = s.Contract.String()
		}
		if s.Freshness != nil {
			sd.Freshness = &FreshnessDef{Within: s.Freshness.Within.String(), Scope: s.Freshness.Scope.String()}
		}
		d.Upstream = append(d.Upstream, sd)
	}
	d.Run = RunDef{Kind: m.Run.Kind.String(), Command: m.Run.Command, SQL: m.Run.SQL, Query: m.Run.Query, Write: m.Run.Write}
	if m.Run.Timeout > 0 {
		d.Run.Timeout = m.Run.Timeout.String()
	}
	for _, a := range m.After {
		d.After = append(d.After, AfterDef{Task: a.Task, On: a.On.String()})
	}
	if m.Connection != nil {
		d.Connection = &ConnectionDef{DSNEnvVar: m.Connection.DSNEnvVar}
	}
	return d
}

func locName(loc *time.Location) string {
	if loc == nil {
		return "UTC"
	}
	return loc.String()
}

// canonical encodes v as compact JSON. encoding/json writes struct fields
// in declaration order and map keys sorted, so equal definitions give equal
// bytes, and so equal content hashes.
func canonical(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Every field is a string, number, bool, slice or map of those, or
		// spec values decoded from YAML; none fails to encode.
		panic(fmt.Sprintf("engine: encoding a model definition: %v", err))
	}
	return b
}

// ContentHash fingerprints a stored definition: "sha256:<hex>".
func ContentHash(definition []byte) string {
	sum := sha256.Sum256(definition)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// modelRecord is m's registration in env. interval, when not zero, replaces
// the model's own (a torch migration under INTERVAL_OVERRIDE registers the
// grain the grid was rebuilt at).
func modelRecord(env string, m *Model, interval state.Interval) state.ModelRecord {
	def := DefinitionOf(m)
	rec := state.ModelRecord{Env: env, Name: m.Name, Pipeline: m.Pipeline, Temporality: m.Temporality.String()}
	if m.Temporality == Temporal && m.Chunking != nil {
		c := m.Chunking
		iv := c.Interval
		if !interval.IsZero() {
			iv = interval
			def.Chunking.Interval = iv.String()
		}
		rec.Flexibility = c.Flexibility.String()
		rec.Interval = iv.String()
		rec.Timezone = locName(c.Location)
		rec.Start = c.Start.UTC()
		if c.End != nil {
			end := c.End.UTC()
			rec.End = &end
		}
	}
	rec.Definition = canonical(def)
	rec.ContentHash = ContentHash(rec.Definition)
	return rec
}

// edgeRecords are m's task edges in env, as modelEdges derives them.
func edgeRecords(env string, spec *Spec, m *Model) []state.EdgeRecord {
	same, cross := modelEdges(spec, m)
	out := make([]state.EdgeRecord, 0, len(same)+len(cross))
	for _, e := range same {
		out = append(out, state.EdgeRecord{Env: env, Task: e.Task, DependsOn: e.DependsOn, Type: e.Type.String(), Implicit: e.Implicit})
	}
	for _, c := range cross {
		implicit := true
		for _, a := range m.After {
			if a.Task == c.DependsOn {
				implicit = false
			}
		}
		out = append(out, state.EdgeRecord{Env: env, Task: c.Task, DependsOn: c.DependsOn, Type: c.Type.String(), Implicit: implicit, Cross: true})
	}
	return out
}

// ModelFromRecord rebuilds a model's shape and definition from its
// registration alone — what gating and a UI without the spec read. The
// record's own columns (temporality, flexibility, interval, timezone, start,
// end) win over the stored definition, since they are what the unit rows
// were cut by. Positions are zero.
func ModelFromRecord(rec state.ModelRecord) (*Model, error) {
	var def ModelDefinition
	if len(rec.Definition) > 0 {
		if err := json.Unmarshal(rec.Definition, &def); err != nil {
			return nil, fmt.Errorf("model %s: stored definition is not valid JSON: %w", rec.Name, err)
		}
		if def.Version > DefinitionVersion {
			return nil, fmt.Errorf("model %s: stored definition version %d is newer than this bollhav reads (%d)", rec.Name, def.Version, DefinitionVersion)
		}
	}
	m := &Model{Name: rec.Name, Pipeline: rec.Pipeline, State: def.State || len(rec.Definition) == 0}
	m.Schema, m.Table, _ = strings.Cut(rec.Name, ".")
	var err error
	if m.Temporality, m.Chunking, err = recordShape(rec); err != nil {
		return nil, err
	}
	for _, sd := range def.Upstream {
		s, err := sd.source()
		if err != nil {
			return nil, fmt.Errorf("model %s: source %s: %w", rec.Name, sd.Name, err)
		}
		m.Upstream = append(m.Upstream, s)
	}
	kind, ok := lookupName(def.Run.Kind, []string{"none", "command", "sql", "query", "view"})
	if !ok && def.Run.Kind != "" {
		return nil, fmt.Errorf("model %s: unknown run kind %q", rec.Name, def.Run.Kind)
	}
	m.Run = Run{Kind: RunKind(kind), Command: def.Run.Command, SQL: def.Run.SQL, Query: def.Run.Query, Write: def.Run.Write}
	if def.Run.Timeout != "" {
		d, err := time.ParseDuration(def.Run.Timeout)
		if err != nil {
			return nil, fmt.Errorf("model %s: run timeout: %w", rec.Name, err)
		}
		m.Run.Timeout = d
	}
	for _, a := range def.After {
		on, err := parseDependencyType(a.On)
		if err != nil {
			return nil, fmt.Errorf("model %s: after %s: %w", rec.Name, a.Task, err)
		}
		m.After = append(m.After, AfterEdge{Task: a.Task, On: on})
	}
	switch def.Condition.Kind {
	case "ALL", "":
		m.RunCondition = graph.All
	case "ANY":
		m.RunCondition = graph.Any
	case "N":
		m.RunCondition, m.RunConditionCount = graph.N, def.Condition.Count
	default:
		return nil, fmt.Errorf("model %s: unknown run condition %q", rec.Name, def.Condition.Kind)
	}
	if def.Connection != nil {
		m.Connection = &Connection{DSNEnvVar: def.Connection.DSNEnvVar}
	}
	return m, nil
}

func (sd SourceDef) source() (Source, error) {
	s := Source{Name: sd.Name, Model: sd.Model, File: sd.File, API: sd.API, DeactivateForDev: sd.DeactivateForDev}
	k, ok := lookupName(sd.Type, []string{"unknown", "model", "file", "api", "hardcoded"})
	if !ok {
		return Source{}, fmt.Errorf("unknown type %q", sd.Type)
	}
	s.Kind = SourceKind(k)
	if sd.Hardcoded != nil {
		s.Hardcoded = &SourceHardcoded{Rows: sd.Hardcoded.Rows, SQL: sd.Hardcoded.SQL, Extra: sd.Hardcoded.Extra}
	}
	if sd.Contract != "" {
		c, ok := lookupName(sd.Contract, contractNames[:])
		if !ok || c == 0 {
			return Source{}, fmt.Errorf("unknown contract %q", sd.Contract)
		}
		s.Contract = ContractLevel(c)
	}
	if f := sd.Freshness; f != nil {
		d, err := time.ParseDuration(f.Within)
		if err != nil {
			return Source{}, fmt.Errorf("freshness: %w", err)
		}
		s.Freshness = &Freshness{Within: d}
		if f.Scope == "ALL" {
			s.Freshness.Scope = All
		}
	}
	return s, nil
}

func lookupName(s string, names []string) (int, bool) {
	for i, n := range names {
		if n == s {
			return i, true
		}
	}
	return 0, false
}

func parseDependencyType(s string) (graph.DependencyType, error) {
	for _, t := range []graph.DependencyType{graph.Success, graph.Failure, graph.Always, graph.HasData} {
		if t.String() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown edge type %q", s)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ApplyResult is what Apply did: every model of the spec, by what happened
// to its registration.
type ApplyResult struct {
	Env       string
	Created   []AppliedModel
	Changed   []AppliedModel
	Unchanged []AppliedModel
	// Deferred are fixed models whose grain changed, left at their old
	// registration for the torch run that migrates them (ApplyFor only).
	Deferred []AppliedModel
}

// AppliedModel is one model's registration outcome.
type AppliedModel struct {
	Name   string
	TaskID int
}

// GrainChangeError refuses a registration that would re-chunk a fixed model
// that already has units: its grid is its identity, so a new grain is a
// migration (STATE_MODE=torch), never a silent re-registration (seed 000's
// 🔴 "fixed model, chunk grain changed" row, caught).
type GrainChangeError struct {
	Env    string
	Models []GrainChange
}

// GrainChange is one refused model.
type GrainChange struct {
	Model      string
	Registered string // "1h grid from … (UTC)", or "flexible" / "timeless"
	Defined    string
	Units      int
}

func (e *GrainChangeError) Error() string {
	var b strings.Builder
	for i, c := range e.Models {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "model %s is registered as a %s with %d units, but the spec defines a %s: re-chunking a fixed model is a migration; run it with --mode torch (STATE_MODE=torch), which deletes its units and rebuilds the grid at the new grain",
			c.Model, c.Registered, c.Units, c.Defined)
	}
	return b.String()
}

// shapeName names a registration's or definition's state shape for
// GrainChange: the grid of a fixed model, else its kind.
func shapeName(rec state.ModelRecord) string {
	switch {
	case rec.Temporality == "timeless":
		return "timeless model"
	case rec.Flexibility == "flex":
		return "flexible model (" + rec.Interval + " chunks)"
	}
	iv, err1 := state.ParseInterval(rec.Interval)
	loc, err2 := state.LoadLocation(cmpOr(rec.Timezone, "UTC"))
	if err1 != nil || err2 != nil {
		return "fixed " + rec.Interval + " grid from " + state.FormatTime(rec.Start) + " (" + rec.Timezone + ")"
	}
	return "fixed " + state.Grid{Start: rec.Start.UTC(), Interval: iv, Location: loc}.String()
}

// sameGrain reports whether two registrations cut units the same way: a
// fixed model's temporality, flexibility, interval, start and timezone; a
// flexible model's temporality (its chunk is not identity).
func sameGrain(old, neu state.ModelRecord) bool {
	if old.Temporality != neu.Temporality {
		return false
	}
	if neu.Temporality == "timeless" {
		return true
	}
	if neu.Flexibility == "flex" {
		return true // coverage of a fixed or flexible model is valid coverage
	}
	return old.Flexibility == "fix" && old.Interval == neu.Interval && old.Start.Equal(neu.Start) &&
		cmpOr(old.Timezone, "UTC") == cmpOr(neu.Timezone, "UTC")
}

func unitCount(st state.UnitStats) int {
	n := 0
	for _, c := range st.Counts {
		n += c
	}
	return n
}

// Apply registers the spec's models and task edges in the store for this
// environment, in one Register call. A fixed model already registered at
// another grain that has units is refused — the whole apply then changes
// nothing — with a *GrainChangeError that names both grains and says to run
// torch. A flexible model may change its interval freely. The apply is
// audited.
func (e *Engine) Apply(ctx context.Context) (*ApplyResult, error) {
	return e.apply(ctx, nil)
}

// ApplyFor is Apply ahead of a run of req: a fixed model whose grain changed
// and that req torches is not refused but left at its old registration
// (ApplyResult.Deferred) — ApplyPlan re-registers it after deleting its
// units, which is the migration.
func (e *Engine) ApplyFor(ctx context.Context, req RunRequest) (*ApplyResult, error) {
	if req.Mode != Torch {
		return e.apply(ctx, nil)
	}
	names, err := e.resolveModels(req)
	if err != nil {
		return nil, err
	}
	torched := map[string]bool{}
	for _, n := range names {
		torched[n] = true
	}
	return e.apply(ctx, torched)
}

func (e *Engine) apply(ctx context.Context, torched map[string]bool) (res *ApplyResult, err error) {
	if err := e.refuseReadOnly(ctx, "apply", nil); err != nil {
		return nil, err
	}
	if e.Spec == nil {
		return nil, errors.New("apply needs a spec: the engine was opened from the store alone")
	}
	env := e.Env.Suffix
	now := e.now()
	defer func() {
		args := map[string]string{"env": env, "models": strconv.Itoa(len(e.Spec.Models))}
		if e.Spec.Path != "" {
			args["spec"] = e.Spec.Path
		}
		outcome := ""
		if err != nil {
			outcome = "error: " + err.Error()
		} else {
			outcome = fmt.Sprintf("ok: %d created, %d changed, %d unchanged", len(res.Created), len(res.Changed), len(res.Unchanged))
			if len(res.Deferred) > 0 {
				outcome += fmt.Sprintf(", %d deferred to torch", len(res.Deferred))
			}
		}
		if aerr := e.Store.Audit(context.WithoutCancel(ctx), state.AuditEntry{At: now, Actor: e.Actor, Action: "apply", Args: args, Outcome: outcome}); aerr != nil && err == nil {
			err = fmt.Errorf("recording the apply in the audit log: %w", aerr)
		}
	}()
	existing, err := e.registered(ctx)
	if err != nil {
		return nil, err
	}
	var (
		recs    []state.ModelRecord
		edges   []state.EdgeRecord
		refused []GrainChange
		kind    = map[string]string{}
	)
	res = &ApplyResult{Env: env}
	for _, m := range e.Spec.Models {
		rec := modelRecord(env, m, state.Interval{})
		old, ok := existing[m.Name]
		switch {
		case !ok:
			kind[m.Name] = "created"
		case old.ContentHash == rec.ContentHash && sameGrain(old, rec):
			kind[m.Name] = "unchanged"
		default:
			kind[m.Name] = "changed"
		}
		if ok && !sameGrain(old, rec) {
			st, err := e.Store.Stats(ctx, env, m.Name)
			if err != nil {
				return nil, fmt.Errorf("counting units of %s: %w", m.Name, err)
			}
			if n := unitCount(st); n > 0 {
				if torched[m.Name] {
					res.Deferred = append(res.Deferred, AppliedModel{Name: m.Name, TaskID: old.TaskID})
					continue
				}
				refused = append(refused, GrainChange{Model: m.Name, Registered: shapeName(old), Defined: shapeName(rec), Units: n})
				continue
			}
		}
		recs = append(recs, rec)
		edges = append(edges, edgeRecords(env, e.Spec, m)...)
	}
	if len(refused) > 0 {
		return nil, &GrainChangeError{Env: env, Models: refused}
	}
	ids, err := e.Store.Register(ctx, env, recs, edges, now)
	if err != nil {
		return nil, fmt.Errorf("registering the spec: %w", err)
	}
	for _, rec := range recs {
		am := AppliedModel{Name: rec.Name, TaskID: ids[rec.Name]}
		switch kind[rec.Name] {
		case "created":
			res.Created = append(res.Created, am)
		case "changed":
			res.Changed = append(res.Changed, am)
		default:
			res.Unchanged = append(res.Unchanged, am)
		}
	}
	return res, nil
}

// registered is the environment's registrations by name.
func (e *Engine) registered(ctx context.Context) (map[string]state.ModelRecord, error) {
	recs, err := e.Store.Models(ctx, e.Env.Suffix)
	if err != nil {
		return nil, fmt.Errorf("reading the registered models: %w", err)
	}
	out := make(map[string]state.ModelRecord, len(recs))
	for _, r := range recs {
		out[r.Name] = r
	}
	return out, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// recordShape reads a registration's temporality and, for a temporal model,
// its chunking from the record's columns: what its units were cut by, which
// wins over anything the definition JSON says.
func recordShape(rec state.ModelRecord) (Temporality, *Chunking, error) {
	switch rec.Temporality {
	case "timeless":
		return Timeless, nil, nil
	case "temporal", "":
	default:
		return 0, nil, fmt.Errorf("model %s: unknown registered temporality %q", rec.Name, rec.Temporality)
	}
	iv, err := state.ParseInterval(rec.Interval)
	if err != nil {
		return 0, nil, fmt.Errorf("model %s: registered interval: %w", rec.Name, err)
	}
	loc, err := state.LoadLocation(cmpOr(rec.Timezone, "UTC"))
	if err != nil {
		return 0, nil, fmt.Errorf("model %s: registered timezone: %w", rec.Name, err)
	}
	c := &Chunking{Interval: iv, Start: rec.Start.UTC(), Location: loc}
	if rec.End != nil {
		end := rec.End.UTC()
		c.End = &end
	}
	switch rec.Flexibility {
	case "flex":
		c.Flexibility = Flex
	case "fix", "":
	default:
		return 0, nil, fmt.Errorf("model %s: unknown registered flexibility %q", rec.Name, rec.Flexibility)
	}
	return Temporal, c, nil
}
