// Package themes holds bollhav's Lip Gloss palettes: semantic roles
// (primary, subtle, success, warning, danger, busy) turned into one Styles
// struct that the UI passes down, with a loud theme for production
// environments. The UI issue fills it; the package exists so the layout of
// DESIGN.md holds from the first commit.
package themes
