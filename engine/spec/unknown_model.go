package spec

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/bollhav/bollhav/state"
)

// UnknownModelError names the model and the spec's closest names.
func UnknownModelError(sp *Spec, name string) error {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, m := range sp.Models {
		d := state.EditDistance(strings.ToLower(name), strings.ToLower(m.Name))
		if d <= max(2, len(name)/3) || strings.Contains(m.Name, name) || strings.Contains(name, m.Table) {
			cs = append(cs, cand{m.Name, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return cmp.Compare(a.d, b.d) })
	if len(cs) > 3 {
		cs = cs[:3]
	}
	if len(cs) == 0 {
		return fmt.Errorf("unknown model %q: the spec has no model by that name (bollhav graph lists them)", name)
	}
	near := make([]string, len(cs))
	for i, c := range cs {
		near[i] = c.name
	}
	return fmt.Errorf("unknown model %q: did you mean %s?", name, strings.Join(near, ", "))
}
