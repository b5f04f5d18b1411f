// Package graphview draws a pipeline's task graph as layers (its waves)
// with edges between them, as text that fits a given width: the pipelines
// view's picture, kept free of Bubble Tea so it is a pure, testable function.
//
// The waves run top to bottom, each a row of boxes; edges drop from a box's
// bottom to the boxes below. Top to bottom suits model names: a label reads
// across, so a row of boxes holds two or three 20-cell names at 80 columns,
// where left-to-right columns would leave each name a dozen cells; and a
// wave, three rows of boxes plus a channel of a row or two, keeps four or
// five waves on a 24-line screen. What does not fit scrolls.
//
//	    ┌─────┐
//	    │ ✓ a │
//	    └──┬──┘
//	   ┌───┴────┐
//	┌──▼──┐  ┏━━▼━━┓
//	│ ✓ b │  ┃▸⊘ c ┃   ← selected: heavy box and ▸
//	└──┬──┘  ┗━━┯━━┛
//	   └───┐ ┌──┘
//	     ┌─▼─▼─┐
//	     │ ✗ d │◄─ ingest.raw_orders   ← a dependency on another pipeline
//	     └─────┘
//
// A box shows the health glyph (✓ applied, · pending, ↻ running, ~ stale,
// ⊘ blocked, ✗ failed, ? unknown: the themes package's glyphs), the label
// cut with "…" at Options.MaxLabel, and the detail. Colour only repeats the
// glyph. A SUCCESS edge is a solid line; FAILURE, ALWAYS and HAS_DATA edges
// are dashed (╌ ╎) and carry a letter, f, a or d, just above their arrow
// head. Where lines of two different sources cross, the vertical one runs
// through unbroken; ├ ┬ ┼ and the like only ever join lines of one source.
// The lineage screen adds to this: Node.Sub, a second line in every box;
// Edge.Class, a colour of Styles.Classes (its verdict); Edge.Dashed, a
// dashed success edge (an after: edge); and Edge.Mark, up to two cells
// stacked over the arrow head (its contract's letter over its verdict's
// glyph). Edges of one source that differ in any of these route apart.
// Options.LeftToRight turns the picture: the layers are columns, a stem
// leaves its box's right border and arrives on the next one's left (▶),
// marks read before the head ("T✗▶"). It is the same layout worked out
// along and across the layers and turned when drawn (Layout.real), so the
// ordering, placement and routing are shared; cross stubs are not drawn.
// Styles.ASCII draws the same picture with - | + v < and ASCII glyphs.
//
// The layout is a small Sugiyama: layers are the waves (graph.Waves); an
// edge that skips waves gets a dummy per wave it crosses; barycenter sweeps
// order each layer to cut crossings; each layer is then placed by isotonic
// regression towards its neighbours' ports (dummies weigh most, so long
// edges run straight); each channel between two layers gives every
// (source, edge type) a track row, first fit, and every arriving edge its
// own in-port on the target's top border (a box with many inputs widens to
// hold them), off other sources' stems, so two routes do not run along each
// other. Before the sweeps, a depth-first order grown from Options.Roots
// (a lineage's focus) replaces the given one when it crosses less: it
// draws any lineage tree without a crossing (Layout.Crossings counts them).
// NewLayout does all of it once; Render draws only the visible
// window, so its cost follows the window, not the graph.
package graphview
