// Package ui is bollhav's terminal UI: a Bubble Tea program over the shared
// engine. Its subpackage cli holds the command line.
package ui
