package spec

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
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
	Retry       *RetryDef       `json:"retry,omitempty"`
}

// RetryDef is a retry policy that allows more than one attempt; durations
// are Go duration strings. A model with the default (one attempt) has none,
// so a spec without retries hashes as it did before retries existed.
type RetryDef struct {
	Attempts int    `json:"attempts"`
	Delay    string `json:"delay"`
	MaxDelay string `json:"max_delay"`
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
	RequireCurrent   bool          `json:"require_current,omitempty"`
}

// HardcodedDef is inline data with its content hash.
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
			Flexibility: c.Flexibility.String(), Timezone: LocationName(c.Location)}
		if c.End != nil {
			s := state.FormatTime(*c.End)
			d.Chunking.End = &s
		}
	}
	for _, s := range m.Upstream {
		sd := SourceDef{Name: s.Name, Type: s.Kind.String(), Model: s.Model, File: s.File, API: s.API,
			DeactivateForDev: s.DeactivateForDev, RequireCurrent: s.RequireCurrent}
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
	if m.Retry.Retries() {
		d.Retry = &RetryDef{Attempts: m.Retry.Attempts, Delay: m.Retry.Delay.String(), MaxDelay: m.Retry.MaxDelay.String()}
	}
	if m.Connection != nil {
		d.Connection = &ConnectionDef{DSNEnvVar: m.Connection.DSNEnvVar}
	}
	return d
}

func LocationName(loc *time.Location) string {
	if loc == nil {
		return "UTC"
	}
	return loc.String()
}

// JSON encodes d as compact JSON, the form registration stores.
// encoding/json writes struct fields in declaration order and map keys
// sorted, so equal definitions give equal bytes, and so equal content hashes.
func (d ModelDefinition) JSON() []byte {
	b, err := json.Marshal(d)
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
	if m.Temporality, m.Chunking, err = RecordShape(rec); err != nil {
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
	m.Retry = NoRetry
	if def.Retry != nil {
		r, err := def.Retry.policy()
		if err != nil {
			return nil, fmt.Errorf("model %s: retry: %w", rec.Name, err)
		}
		m.Retry = r
	}
	if def.Connection != nil {
		m.Connection = &Connection{DSNEnvVar: def.Connection.DSNEnvVar}
	}
	return m, nil
}

func (sd SourceDef) source() (Source, error) {
	s := Source{Name: sd.Name, Model: sd.Model, File: sd.File, API: sd.API, DeactivateForDev: sd.DeactivateForDev,
		RequireCurrent: sd.RequireCurrent}
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

// lookupName is s's index in names (0 when it is not there), and whether it
// is there.
func lookupName(s string, names []string) (int, bool) {
	i := slices.Index(names, s)
	return max(i, 0), i >= 0
}

// dependencyTypes are the after: edge types, as a spec names them (in
// lower case) and a stored definition does (in upper).
var dependencyTypes = []graph.DependencyType{graph.Success, graph.Failure, graph.Always, graph.HasData}

func parseDependencyType(s string) (graph.DependencyType, error) {
	for _, t := range dependencyTypes {
		if t.String() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown edge type %q", s)
}

// RecordShape reads a registration's temporality and, for a temporal model,
// its chunking from the record's columns: what its units were cut by, which
// wins over anything the definition JSON says.
func RecordShape(rec state.ModelRecord) (Temporality, *Chunking, error) {
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
	loc, err := state.LoadLocation(cmp.Or(rec.Timezone, "UTC"))
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

// policy reads a stored retry policy back.
func (r RetryDef) policy() (Retry, error) {
	delay, err := time.ParseDuration(r.Delay)
	if err != nil {
		return Retry{}, err
	}
	maxDelay, err := time.ParseDuration(r.MaxDelay)
	if err != nil {
		return Retry{}, err
	}
	if r.Attempts < 1 || delay <= 0 || maxDelay < delay {
		return Retry{}, fmt.Errorf("invalid stored policy %+v", r)
	}
	return Retry{Attempts: r.Attempts, Delay: delay, MaxDelay: maxDelay}, nil
}
