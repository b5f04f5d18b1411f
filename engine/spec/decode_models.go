package spec

import (
	"sync"

	"github.com/goccy/go-yaml/ast"
)

// decodeMinModels is the fewest models decoded on more than one core:
// decoding ten thousand takes 150 ms of one, a hundred well under 2 ms.
var decodeMinModels = 500

// decodeModels decodes every model entry, in order. A long list is cut
// into one contiguous part per core, each decoded by a decoder of its own
// over the same (read-only) anchors; every model's decode starts from a
// clean context, so the parts' sites and problems are those one decoder
// finds. The one thing a part cannot see is the spec-wide bound on alias
// expansions: when the parts together reach it, the list is decoded again
// on one decoder, which reports it where a whole decode would.
func (d *decoder) decodeModels(items []ast.Node) []*modelSite {
	workers := chunkWorkers()
	if len(items) < decodeMinModels || workers < 2 {
		return d.decodeModelsIn(items)
	}
	parts := make([]*decoder, workers)
	sites := make([][]*modelSite, workers)
	var wg sync.WaitGroup
	for k := range parts {
		lo, hi := k*len(items)/workers, (k+1)*len(items)/workers
		parts[k] = &decoder{file: d.file, anchors: d.anchors}
		wg.Go(func() { sites[k] = parts[k].decodeModelsIn(items[lo:hi]) })
	}
	wg.Wait()
	visits := d.visits
	for _, p := range parts {
		visits += p.visits
	}
	if visits >= maxVisits {
		return d.decodeModelsIn(items)
	}
	var out []*modelSite
	for k, p := range parts {
		out = append(out, sites[k]...)
		d.errs = append(d.errs, p.errs...)
	}
	// Left as one decoder leaves them after the last model, for the
	// cross-model checks that follow.
	last := parts[len(parts)-1]
	d.visits, d.model, d.source = visits, last.model, last.source
	return out
}

// decodeModelsIn decodes items one after the other on d.
func (d *decoder) decodeModelsIn(items []ast.Node) []*modelSite {
	sites := make([]*modelSite, 0, len(items))
	for _, item := range items {
		if s := d.decodeModel(item); s != nil {
			sites = append(sites, s)
		}
	}
	return sites
}
