// Package themes holds bollhav's Lip Gloss palettes: semantic roles (base,
// muted, accent, border, title, selected, banner, error, and one per status)
// turned into one Theme struct that the UI passes down, never a global. Every
// status also has a glyph, so status is never shown by colour alone. Themes:
// dark (the default), light, high-contrast and none (no colour, chosen by
// NO_COLOR); Prod is the loud style that marks the production environment.
package themes
