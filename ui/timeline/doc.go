// Package timeline renders a model's per-window coverage as a strip of
// cells on a time axis, and its upstreams' strips on the same axis: the
// model view's core, kept free of Bubble Tea so it is tested and
// benchmarked as a pure function of its data and the visible width.
package timeline
