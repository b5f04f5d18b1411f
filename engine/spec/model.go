package spec

import (
	"time"

	"github.com/bollhav/bollhav/graph"
	"github.com/bollhav/bollhav/state"
)

// Temporality says whether a model's state is a set of windows (temporal) or
// one existence row (timeless: a view or a whole-table load).
type Temporality int

// The two temporalities of the design.
const (
	Temporal Temporality = iota
	Timeless
)

func (t Temporality) String() string { return enumName(t, "temporal", "temporal", "timeless") }

// Flexibility is a temporal model's identity axis: a fixed grid of windows
// (ChunkFix, the default) or a coverage set whose chunk is only how work is
// sliced (ChunkFlex).
type Flexibility int

// Fix is the default grid; Flex is the coverage set.
const (
	Fix Flexibility = iota
	Flex
)

func (f Flexibility) String() string { return enumName(f, "fix", "fix", "flex") }

// ContractLevel is how much of a gated upstream must be applied before a unit
// runs. The zero value, NoContract, marks an ungated source.
type ContractLevel int

// The five levels of the design (docs/design.md, Contracts).
const (
	NoContract ContractLevel = iota
	Exists
	Exact
	Encapsulate
	Through
	Whole
)

var contractNames = [...]string{"", "EXISTS", "EXACT", "ENCAPSULATE", "THROUGH", "WHOLE"}

// String prints the level in upper case, as blocked reasons and JSON do.
func (c ContractLevel) String() string { return enumName(c, "UNKNOWN", contractNames[:]...) }

// WindowScoped reports whether the level needs a window of the upstream to
// match against (EXACT, ENCAPSULATE, THROUGH), which a timeless upstream lacks.
func (c ContractLevel) WindowScoped() bool { return c == Exact || c == Encapsulate || c == Through }

// FreshnessScope selects which applied_at of the level's selection must be
// recent: the newest (LATEST) or the oldest (ALL).
type FreshnessScope int

// LATEST is max(applied_at); ALL is min(applied_at).
const (
	Latest FreshnessScope = iota
	All
)

func (s FreshnessScope) String() string { return enumName(s, "LATEST", "LATEST", "ALL") }

// enumName is the name of an enumeration's value v, names[v], or otherwise
// when v is none of them.
func enumName[T ~int](v T, otherwise string, names ...string) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return otherwise
}

// Freshness is the recency gate on a gated source: once the level's
// completeness holds, its selected rows must have been applied within Within.
type Freshness struct {
	Within time.Duration
	Scope  FreshnessScope
}

// SourceKind is a source's type (docs/design.md, Models and sources).
// KindUnknown is the typeless unknown-provenance sentinel (type=None).
type SourceKind int

// The four source types, and the sentinel.
const (
	KindUnknown SourceKind = iota
	KindModel
	KindFile
	KindAPI
	KindHardcoded
)

func (k SourceKind) String() string {
	return [...]string{"unknown", "model", "file", "api", "hardcoded"}[k]
}

// Position is where a definition came from in the spec file, so every error
// can name file, line and column.
type Position struct {
	File   string
	Line   int
	Column int
}

// SourceModel is the read config of a relational input: a managed model, an
// external table or a view. It is the only SQL-addressable type and the only
// one that can be gated.
type SourceModel struct {
	Schema            string
	Catalog           string
	DSNEnvVar         string
	ReadQuery         string
	PartitionedBy     string
	InferSchemaLength *int
	Extra             map[string]any
}

// SourceFile is the read config of a file input (CSV, JSON lines, ...).
type SourceFile struct {
	Path              string
	Encoding          string
	Separator         string
	InferSchemaLength *int
	RemoveTopRows     int
	ArchiveFolder     string
	DateFormat        string
	FileEnding        string
}

// SourceAPI is the read config of an API input.
type SourceAPI struct {
	BaseURL string
	Extra   map[string]any
}

// SourceHardcoded is data written inline in the spec: exactly one of Rows and
// SQL is set.
type SourceHardcoded struct {
	Rows  []map[string]any
	SQL   string
	Extra map[string]any
}

// Source is one input of a model. Its type (which of the four configs is set)
// and its contract (gated or not) are independent dials.
type Source struct {
	Name      string
	Kind      SourceKind
	Model     *SourceModel
	File      *SourceFile
	API       *SourceAPI
	Hardcoded *SourceHardcoded
	// Contract is NoContract for an ungated source.
	Contract  ContractLevel
	Freshness *Freshness
	// DeactivateForDev reads prod and skips the gate, in a suffixed run only.
	DeactivateForDev bool
	// RequireCurrent counts the upstream's outdated windows (applied under
	// an earlier definition than its current one) as not applied for this
	// contract: the gate waits for them to be rebuilt.
	RequireCurrent bool
	Pos            Position
}

// Gated reports whether the source carries a contract and so gates its model.
func (s Source) Gated() bool { return s.Contract != NoContract }

// Chunking is how a temporal model's time axis is cut into windows.
type Chunking struct {
	Interval    state.Interval
	Start       time.Time
	End         *time.Time
	Flexibility Flexibility
	// Location is the calendar the interval is counted in; UTC by default.
	Location *time.Location
}

// WriteMode is how a query executor writes its result into the target.
type WriteMode int

// The write modes of the design (docs/design.md, Executors).
const (
	Append WriteMode = iota + 1
	Upsert
	RecreatePartition
)

func (m WriteMode) String() string {
	return [...]string{"", "append", "upsert", "recreate_partition"}[m]
}

// Write says how a query's rows land in the target.
type Write struct {
	Mode WriteMode
	// Keys are the upsert keys.
	Keys []string
	// Column is the partition column recreate_partition deletes by.
	Column string
}

// RunKind names which executor runs a model.
type RunKind int

// The executors of the design. RunNone is a model with no run block (its state
// is only ever marked by an operator or loaded by something else).
const (
	RunNone RunKind = iota
	RunCommand
	RunSQL
	RunQuery
	RunView
)

func (k RunKind) String() string {
	return [...]string{"none", "command", "sql", "query", "view"}[k]
}

// Run is a model's run block.
type Run struct {
	Kind RunKind
	// Command is the argv of a command executor.
	Command []string
	// SQL holds the statements of a sql executor.
	SQL []string
	// Query is a SELECT: written with Write for RunQuery, or the body of the
	// view for RunView (a timeless model with a query and no write).
	Query   string
	Write   *Write
	Timeout time.Duration
	Pos     Position
}

// AfterEdge is an explicit task dependency: this model's task waits on Task
// with the given edge type.
type AfterEdge struct {
	Task string
	On   graph.DependencyType
	Pos  Position
}

// Connection points a model's data at another database than the store's.
type Connection struct {
	DSNEnvVar string
}

// Model is one managed target and everything needed to load it.
type Model struct {
	// Name is "schema.table", the target.
	Name        string
	Schema      string
	Table       string
	Pipeline    string
	Temporality Temporality
	// Chunking is nil for a timeless model.
	Chunking *Chunking
	// State is false for a model without state tracking, which cannot gate.
	State    bool
	Upstream []Source
	Run      Run
	After    []AfterEdge
	// RunCondition and RunConditionCount follow graph.TaskNode.
	RunCondition      graph.RunCondition
	RunConditionCount int
	Connection        *Connection
	// Retry is the model's retry policy, its own retry: over defaults:.
	Retry Retry
	Pos   Position
}

// Flexible reports whether the model is temporal with a coverage-set state.
func (m *Model) Flexible() bool {
	return m.Temporality == Temporal && m.Chunking != nil && m.Chunking.Flexibility == Flex
}
