package engine

import (
	"context"

	"github.com/bollhav/bollhav/state"
)

// Releases counts the blocked units downstream of what plan p runs, each
// once: what a run dialog shows before it is confirmed ("releases 4
// blocked units"); see gate.Reader.Releases.
func (e *Engine) Releases(ctx context.Context, p *Plan) (int, error) {
	runs := map[string][]state.Window{}
	for _, m := range p.Models {
		if m.Run.Len() > 0 {
			runs[m.Model] = append(runs[m.Model], m.Run.List()...)
		}
	}
	return e.gates().Releases(ctx, runs)
}
