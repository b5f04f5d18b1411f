// Package graphview draws a pipeline's task graph as layers (its waves)
// with edges between them, as text that fits a given width: the pipelines
// view's picture, kept free of Bubble Tea so it is a pure, testable function.
package graphview
