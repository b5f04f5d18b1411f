package state

// SliceByChunk cuts every gap at the grid's window boundaries (the grid
// extended before Start, so a gap is cut the same way wherever it begins):
// [a, b) becomes [a, first boundary > a), …, [last boundary < b, b). It is
// how a flexible model's coverage gaps become run units: the chunk is only
// how work is sliced, so pieces keep the gap's ragged ends instead of being
// widened to whole windows. Empty gaps are dropped; the input is not changed.
func SliceByChunk(gaps []Window, g Grid) []Window {
	var out []Window
	for _, gap := range gaps {
		if gap.Empty() {
			continue
		}
		since, until := gap.Since.UTC(), gap.Until.UTC()
		if !g.valid() {
			out = append(out, Window{Since: since, Until: until})
			continue
		}
		for k := g.Index(since) + 1; ; k++ {
			b := g.boundary(k)
			if !b.Before(until) {
				out = append(out, Window{Since: since, Until: until})
				break
			}
			if b.After(since) {
				out = append(out, Window{Since: since, Until: b})
				since = b
			}
		}
	}
	return out
}
