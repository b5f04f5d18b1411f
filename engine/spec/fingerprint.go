package spec

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/bollhav/bollhav/state"
)

// FingerprintLen is how many hex digits of the SHA-256 a fingerprint keeps:
// 64 bits, which tells the handful of definitions one model ever has apart
// with room to spare, at a quarter of the bytes per stored unit.
const FingerprintLen = 16

// ShortFingerprintLen is the fingerprint's short form in tables.
const ShortFingerprintLen = 8

// fingerprintScheme is hashed first: a change to what a fingerprint covers
// changes every fingerprint, which is honest (the rule changed), and is
// why the rule is changed rarely.
const fingerprintScheme = "bollhav-fingerprint-v1"

// fingerprintInput is exactly what a definition fingerprint covers: what
// changes a model's output. Everything else of a definition — timeouts,
// the pipeline, retries, the run condition, after: edges, contract levels,
// freshness, deactivate_for_dev, the connection, chunking.end, state — is
// left out, so changing it leaves every applied window current.
type fingerprintInput struct {
	Temporality string      `json:"temporality"`
	Chunking    *fpChunking `json:"chunking,omitempty"`
	Run         RunDef      `json:"run"` // without its Timeout, which omitempty then leaves out
	Sources     []fpSource  `json:"sources"`
	Scheme      string      `json:"scheme"`
}

type fpChunking struct {
	// Interval is kept for a fixed model only: a flexible model promises
	// the same output however its windows are cut.
	Interval    string `json:"interval,omitempty"`
	Start       string `json:"start"`
	Flexibility string `json:"flexibility"`
	Timezone    string `json:"timezone"`
}

type fpSource struct {
	Name      string       `json:"name"`
	Type      string       `json:"type"`
	Model     *SourceModel `json:"model,omitempty"`
	File      *fpFile      `json:"file,omitempty"`
	API       *SourceAPI   `json:"api,omitempty"`
	Hardcoded string       `json:"hardcoded,omitempty"`
}

// fpFile is a file source's read config without archive_folder, which only
// says where the file goes after it was read.
type fpFile struct {
	Path              string `json:"path"`
	Encoding          string `json:"encoding,omitempty"`
	Separator         string `json:"separator,omitempty"`
	InferSchemaLength *int   `json:"infer_schema_length,omitempty"`
	RemoveTopRows     int    `json:"remove_top_rows,omitempty"`
	DateFormat        string `json:"date_format,omitempty"`
	FileEnding        string `json:"file_ending,omitempty"`
}

// Fingerprint is m's definition fingerprint: FingerprintLen hex digits of a
// SHA-256 over what changes the model's output (docs/semantics.md,
// Outdated windows). Every applied unit records the fingerprint it was
// built under, so a unit whose fingerprint is not its model's current one
// is outdated.
func Fingerprint(m *Model) string { return DefinitionFingerprint(DefinitionOf(m)) }

// RecordFingerprint is the fingerprint of a registration's stored
// definition: the current fingerprint of a model when bollhav is opened
// from the store alone. A registration without a definition has none ("").
// Fingerprints are remembered by the SHA-256 of the stored bytes, so the
// status of a thousand models, refreshed every few seconds, decodes each
// definition once, not on every refresh.
func RecordFingerprint(rec state.ModelRecord) (string, error) {
	if len(rec.Definition) == 0 {
		return "", nil
	}
	key := sha256.Sum256(rec.Definition)
	if fp, ok := recordFingerprints.Load(key); ok {
		return fp.(string), nil
	}
	var d ModelDefinition
	if err := json.Unmarshal(rec.Definition, &d); err != nil {
		return "", fmt.Errorf("model %s: stored definition is not valid JSON: %w", rec.Name, err)
	}
	fp := DefinitionFingerprint(d)
	if recordFingerprintsN.Add(1) > maxRecordFingerprints {
		recordFingerprints.Clear() // a bound, not an eviction policy: definitions change rarely
		recordFingerprintsN.Store(1)
	}
	recordFingerprints.Store(key, fp)
	return fp, nil
}

// recordFingerprints caches RecordFingerprint by the definition's SHA-256.
var (
	recordFingerprints    sync.Map
	recordFingerprintsN   atomic.Int64
	maxRecordFingerprints int64 = 100_000
)

// DefinitionFingerprint fingerprints a stored-form definition. A spec's
// model and its registration give the same fingerprint, since registration
// stores exactly DefinitionOf (a hardcoded source by its stored content
// hash, so a JSON round trip of its rows cannot change it).
func DefinitionFingerprint(d ModelDefinition) string {
	b, err := json.Marshal(fingerprintInputOf(d))
	if err != nil {
		panic(fmt.Sprintf("spec: encoding a fingerprint: %v", err)) // strings, slices and YAML values only
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:FingerprintLen]
}

// fingerprintInputOf is what d's fingerprint covers, canonical: SQL with
// comments and spare whitespace removed, sources by name.
func fingerprintInputOf(d ModelDefinition) fingerprintInput {
	in := fingerprintInput{Scheme: fingerprintScheme, Temporality: d.Temporality, Sources: []fpSource{}}
	if c := d.Chunking; c != nil && d.Temporality != Timeless.String() {
		in.Chunking = &fpChunking{Start: c.Start, Flexibility: c.Flexibility, Timezone: cmp.Or(c.Timezone, "UTC")}
		if c.Flexibility != Flex.String() {
			in.Chunking.Interval = c.Interval
		}
	}
	in.Run = RunDef{Kind: cmp.Or(d.Run.Kind, RunNone.String()), Command: d.Run.Command, Write: d.Run.Write}
	for _, s := range d.Run.SQL {
		in.Run.SQL = append(in.Run.SQL, state.CanonicalSQL(s))
	}
	if d.Run.Query != "" {
		in.Run.Query = state.CanonicalSQL(d.Run.Query)
	}
	for _, sd := range d.Upstream {
		s := fpSource{Name: sd.Name, Type: sd.Type, API: sd.API}
		if sd.Model != nil {
			mc := *sd.Model
			mc.ReadQuery = state.CanonicalSQL(mc.ReadQuery)
			s.Model = &mc
		}
		if f := sd.File; f != nil {
			s.File = &fpFile{Path: f.Path, Encoding: f.Encoding, Separator: f.Separator, InferSchemaLength: f.InferSchemaLength,
				RemoveTopRows: f.RemoveTopRows, DateFormat: f.DateFormat, FileEnding: f.FileEnding}
		}
		if sd.Hardcoded != nil {
			s.Hardcoded = sd.Hardcoded.ContentHash
		}
		in.Sources = append(in.Sources, s)
	}
	// Sources are looked up by name, so their order changes nothing.
	slices.SortFunc(in.Sources, func(a, b fpSource) int { return cmp.Compare(a.Name, b.Name) })
	return in
}

// ShortFingerprint is fp's short form for tables ("-" when unknown).
func ShortFingerprint(fp string) string {
	if fp == "" {
		return "-"
	}
	return fp[:min(len(fp), ShortFingerprintLen)]
}
