package spec

import (
	"strings"

	"github.com/google/uuid"
)

// UnknownSourcePrefix starts the name of the unknown-provenance sentinel,
// "unknown-<uuid>". The dash cannot occur in a declared source name, so the
// sentinel never collides with a real input.
const UnknownSourcePrefix = "unknown-"

// unknownNamespace seeds the sentinel's name-based UUID. It is fixed so that
// reloading the same spec gives the same sentinel names: a lineage node must
// not change identity every time the spec is applied.
var unknownNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/bollhav/bollhav#unknown-provenance"))

// NewUnknownSource returns the unknown-provenance sentinel for the model
// named model (docs/design.md, Models and sources): a typeless source, never
// gated and never SQL-addressable, that keeps provenance total when a model
// declares no inputs. Its UUID is derived from the model name, so each model
// gets its own lineage node (two unknown-provenance models never collapse
// into one) and the name is stable across loads.
func NewUnknownSource(model string) Source {
	id := uuid.NewSHA1(unknownNamespace, []byte(model))
	return Source{Name: UnknownSourcePrefix + id.String(), Kind: KindUnknown}
}

// IsUnknownProvenance reports whether name is an unknown-provenance sentinel,
// so lineage and listings can tell "nothing declared" from a real input.
func IsUnknownProvenance(name string) bool {
	rest, ok := strings.CutPrefix(name, UnknownSourcePrefix)
	if !ok {
		return false
	}
	_, err := uuid.Parse(rest)
	return err == nil && len(rest) == 36
}

// DeclaredInputs names every real input the model declares, gated and
// ungated, in declaration order — the sentinel excluded, so a model with
// unknown provenance has none. This is the lineage audit's "what does it
// read?".
func (m *Model) DeclaredInputs() []string {
	var out []string
	for _, s := range m.Upstream {
		if s.Kind != KindUnknown {
			out = append(out, s.Name)
		}
	}
	return out
}

// InputsKnown reports whether the model declares at least one real input:
// false when its only input is the unknown-provenance sentinel (or, for a
// model built in code, when it has none at all).
func (m *Model) InputsKnown() bool {
	for _, s := range m.Upstream {
		if s.Kind != KindUnknown {
			return true
		}
	}
	return false
}

// GatedUpstreams returns the sources that carry a contract, in declaration
// order: the managed upstreams the state machine waits for.
func (m *Model) GatedUpstreams() []Source {
	var out []Source
	for _, s := range m.Upstream {
		if s.Gated() {
			out = append(out, s)
		}
	}
	return out
}

// UpstreamNames names the gated upstreams (the design's upstream_names): the
// managed models this one waits for.
func (m *Model) UpstreamNames() []string {
	var out []string
	for _, s := range m.Upstream {
		if s.Gated() {
			out = append(out, s.Name)
		}
	}
	return out
}

// SourceNames names the ungated inputs (the design's source_names): external
// data assumed always present. The sentinel is not one of them.
func (m *Model) SourceNames() []string {
	var out []string
	for _, s := range m.Upstream {
		if !s.Gated() && s.Kind != KindUnknown {
			out = append(out, s.Name)
		}
	}
	return out
}
