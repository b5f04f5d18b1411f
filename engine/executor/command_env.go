package executor

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// The variables a command model finds in its environment (docs/design.md,
// Executors). They are the whole interface between bollhav and a script:
// a loader needs nothing else to know what to write, where, and from what.
const (
	EnvModel     = "BOLLHAV_MODEL"
	EnvTarget    = "BOLLHAV_TARGET"
	EnvSince     = "BOLLHAV_SINCE"
	EnvUntil     = "BOLLHAV_UNTIL"
	EnvRunID     = "BOLLHAV_RUN_ID"
	EnvStateMode = "BOLLHAV_STATE_MODE"
	EnvSources   = "BOLLHAV_SOURCES"
)

// commandEnv is parent plus the unit's BOLLHAV_* variables. Inherited
// variables of the same names are dropped rather than shadowed, so a
// bollhav started from inside a command model cannot pass its own unit on.
func commandEnv(parent []string, u UnitRun) ([]string, error) {
	m := u.Model
	sources, err := sourcesJSON(m, u.Env)
	if err != nil {
		return nil, err
	}
	mode := cmp.Or(u.StateMode, spec.Bulldozer)
	if _, err := spec.ParseStateMode(string(mode)); err != nil {
		return nil, fmt.Errorf("model %s: %w", m.Name, err)
	}
	var since, until string
	if u.Window != nil {
		since, until = state.FormatTime(u.Window.Since), state.FormatTime(u.Window.Until)
	}
	ours := [][2]string{
		{EnvModel, m.Name},
		{EnvTarget, m.Target(u.Env)},
		{EnvSince, since},
		{EnvUntil, until},
		{EnvRunID, strconv.FormatInt(u.RunID, 10)},
		{EnvStateMode, mode.String()},
		{EnvSources, sources},
	}
	env := make([]string, 0, len(parent)+len(ours))
	for _, kv := range parent {
		if !strings.HasPrefix(kv, "BOLLHAV_") || !isOurs(kv, ours) {
			env = append(env, kv)
		}
	}
	for _, kv := range ours {
		env = append(env, kv[0]+"="+kv[1])
	}
	return env, nil
}

func isOurs(kv string, ours [][2]string) bool {
	name, _, _ := strings.Cut(kv, "=")
	for _, o := range ours {
		if o[0] == name {
			return true
		}
	}
	return false
}

// sourceJSON is one entry of BOLLHAV_SOURCES. The type config sits under
// its kind's key with the spec's snake_case names, so a script reads
// src["file"]["path"] exactly as the spec spells it; Ref is the resolved,
// quoted table of a model source in the run's environment.
type sourceJSON struct {
	Name      string         `json:"name"`
	Kind      string         `json:"kind"`
	Contract  string         `json:"contract,omitempty"`
	Ref       string         `json:"ref,omitempty"`
	Model     *modelSrcJSON  `json:"model,omitempty"`
	File      *fileSrcJSON   `json:"file,omitempty"`
	API       *apiSrcJSON    `json:"api,omitempty"`
	Hardcoded *hardcodedJSON `json:"hardcoded,omitempty"`
}

type modelSrcJSON struct {
	Schema            string         `json:"schema,omitempty"`
	Catalog           string         `json:"catalog,omitempty"`
	DSNEnvVar         string         `json:"dsn_env_var,omitempty"`
	ReadQuery         string         `json:"read_query,omitempty"`
	PartitionedBy     string         `json:"partitioned_by,omitempty"`
	InferSchemaLength *int           `json:"infer_schema_length,omitempty"`
	Extra             map[string]any `json:"extra,omitempty"`
}

type fileSrcJSON struct {
	Path              string `json:"path"`
	Encoding          string `json:"encoding,omitempty"`
	Separator         string `json:"separator,omitempty"`
	InferSchemaLength *int   `json:"infer_schema_length,omitempty"`
	RemoveTopRows     int    `json:"remove_top_rows,omitempty"`
	ArchiveFolder     string `json:"archive_folder,omitempty"`
	DateFormat        string `json:"dateformat,omitempty"`
	FileEnding        string `json:"file_ending,omitempty"`
}

type apiSrcJSON struct {
	BaseURL string         `json:"base_url"`
	Extra   map[string]any `json:"extra,omitempty"`
}

type hardcodedJSON struct {
	Rows        []map[string]any `json:"rows,omitempty"`
	SQL         string           `json:"sql,omitempty"`
	Extra       map[string]any   `json:"extra,omitempty"`
	ContentHash string           `json:"content_hash"`
}

// sourcesJSON renders m's declared sources, in declaration order, for
// BOLLHAV_SOURCES. The unknown-provenance sentinel is not a source anyone
// can read, so it is left out; a model with none gets "[]", never "null".
func sourcesJSON(m *spec.Model, env spec.Env) (string, error) {
	out := []sourceJSON{}
	for _, s := range m.Upstream {
		if s.Kind == spec.KindUnknown {
			continue
		}
		j := sourceJSON{Name: s.Name, Kind: s.Kind.String()}
		if s.Gated() {
			j.Contract = s.Contract.String()
		}
		switch s.Kind {
		case spec.KindModel:
			ref, err := m.Ref(s.Name, env)
			if err != nil {
				return "", err
			}
			j.Ref = ref
			j.Model = &modelSrcJSON{}
			if c := s.Model; c != nil {
				j.Model = &modelSrcJSON{c.Schema, c.Catalog, c.DSNEnvVar, c.ReadQuery, c.PartitionedBy, c.InferSchemaLength, c.Extra}
			}
		case spec.KindFile:
			j.File = &fileSrcJSON{}
			if c := s.File; c != nil {
				j.File = &fileSrcJSON{c.Path, c.Encoding, c.Separator, c.InferSchemaLength, c.RemoveTopRows, c.ArchiveFolder, c.DateFormat, c.FileEnding}
			}
		case spec.KindAPI:
			j.API = &apiSrcJSON{}
			if c := s.API; c != nil {
				j.API = &apiSrcJSON{c.BaseURL, c.Extra}
			}
		case spec.KindHardcoded:
			j.Hardcoded = &hardcodedJSON{ContentHash: s.Hardcoded.ContentHash()}
			if c := s.Hardcoded; c != nil {
				j.Hardcoded.Rows, j.Hardcoded.SQL, j.Hardcoded.Extra = c.Rows, c.SQL, c.Extra
			}
		}
		out = append(out, j)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// A read_query with "<" or "&" should reach the script as written.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return "", fmt.Errorf("model %s: %s: %w", m.Name, EnvSources, err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
