// Package timeline renders a model's per-window coverage as a strip of
// cells on a time axis, and its upstreams' strips on the same axis: the
// model view's core, kept free of Bubble Tea so it is tested and
// benchmarked as a pure function of its data and the visible width.
//
// The pieces:
//
//   - A Track is one model's units (Segments: a window and a Status),
//     prepared once when the data changes. Every query a frame makes —
//     the worst status in a bucket, applied coverage, the THROUGH frontier
//     — costs O(log units), so a million units draw as fast as a hundred,
//     at any zoom.
//   - An Axis maps columns to time: one cell per window of the model's
//     grid (ZoomGrain), or per calendar day, week or month in the model's
//     time zone, each cell one column wide or, at a scale k, k columns.
//     It scrolls (Scroll, Follow), zooms (WithZoom) and maps both ways
//     (Column, Range). Fit and FitAt choose the zoom and
//     scale that show a range whole across the width.
//   - Strip draws a track on an axis; Ruler the time labels; CursorLine the
//     pointer at the cursor; Marks what a contract of the cursor's window
//     needs of an upstream and whether it has it; LegendFor the glyphs.
//   - Render stacks them for the model view from a View (axis, model,
//     cursor, upstream Lanes) in a given number of lines.
//
// An upstream's strip uses the downstream's axis, whatever its own grain:
// under a daily model one column a day, an hourly upstream shows the worst
// of each day's 24 hours; with a day k columns wide each column shows the
// worst of its own part of the day (a cell reads its mix, as the grain's
// columns do), and a monthly one repeats its month's status on every
// column.
//
// Every line is exactly the axis's width in terminal cells, so nothing
// wraps at 80 columns. Statuses are told apart by glyph (Unicode or the
// ASCII fallback) before colour, and the zero Styles draws plain text.
package timeline
