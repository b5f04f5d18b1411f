package engine

import (
	"context"

	"github.com/bollhav/bollhav/state"
)

// Releases counts the held units downstream whose every root plan p loads,
// each once: what a run dialog shows before it is confirmed ("releases 4
// held units"); see gate.Reader.Releases.
func (e *Engine) Releases(ctx context.Context, p *Plan) (int, error) {
	runs := map[string][]state.Window{}
	for _, m := range p.Models {
		if m.Run.Len() > 0 {
			// Its spans cover what its windows cover (Releases only asks
			// what the run covers), without a value per window; a
			// timeless row has no span, but the model is still in runs.
			runs[m.Model] = append(runs[m.Model], m.Run.Spans()...)
		}
	}
	return e.gates().Releases(ctx, runs)
}
