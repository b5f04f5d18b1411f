package themes

import (
	"fmt"
	"image/color"
	"maps"
	"slices"
	"strings"

	"charm.land/lipgloss/v2"
)

// Status is a health the UI shows: the five unit statuses of the state
// store, plus stale (applied, but too old for a freshness contract),
// outdated (applied under an earlier definition than the model's current
// one) and missing (a window the store holds no unit for). Its values are the unit
// statuses' own spellings, so a state.UnitStatus converts directly.
type Status string

// The statuses a theme styles and gives a glyph.
const (
	Applied  Status = "applied"
	Pending  Status = "pending"
	Running  Status = "running"
	Blocked  Status = "blocked"
	Failed   Status = "failed"
	Stale    Status = "stale"
	Missing  Status = "missing"
	Outdated Status = "outdated"
)

// Statuses lists every status in the order legends show them.
var Statuses = []Status{Applied, Pending, Running, Blocked, Failed, Stale, Missing, Outdated}

// glyphs are one cell wide each and differ in shape, so a status reads the
// same on a monochrome terminal, under NO_COLOR and to a colour-blind
// operator: colour only ever repeats what the glyph says.
var glyphs = map[Status]string{
	Applied:  "✓",
	Pending:  "·",
	Running:  "↻",
	Blocked:  "⊘",
	Failed:   "✗",
	Stale:    "~",
	Missing:  "?",
	Outdated: "≠",
}

// Glyph is the one-cell symbol of a status; "?" for one it does not know.
func Glyph(s Status) string {
	if g, ok := glyphs[s]; ok {
		return g
	}
	return "?"
}

// Theme is every style the UI draws with, by role rather than by colour, so
// a view never picks a colour itself and a new theme is one constructor.
type Theme struct {
	// Name is the theme's name as Get takes it.
	Name string
	// Base is ordinary text; Muted is secondary text (labels, hints, empty
	// states); Accent highlights what matters on a line (a model name, a
	// key in the help).
	Base, Muted, Accent lipgloss.Style
	// Border draws rules and dialog frames; Title is a section heading and
	// the header bar; Selected is the cursor row.
	Border, Title, Selected lipgloss.Style
	// Banner is the bar that reports a lost store connection; Error is an
	// error message inside a view or dialog.
	Banner, Error lipgloss.Style
	// Prod marks the production environment in the header, loudly, so no
	// one acts on prod thinking it is dev; Dev marks any other environment.
	Prod, Dev lipgloss.Style
	// BorderColor is the colour of Border, for lipgloss borders that take a
	// colour rather than a style; nil when the theme has no colour.
	BorderColor color.Color

	status map[Status]lipgloss.Style
	// glyph caches each status's styled glyph: a timeline draws hundreds
	// per frame.
	glyph map[Status]string
}

// Status is the style of a status: its colour (when the theme has any) and
// attributes. Unknown statuses get Base.
func (t Theme) Status(s Status) lipgloss.Style {
	if st, ok := t.status[s]; ok {
		return st
	}
	return t.Base
}

// Glyph is the status glyph rendered in the status's style.
func (t Theme) Glyph(s Status) string {
	if g, ok := t.glyph[s]; ok {
		return g
	}
	return t.Status(s).Render(Glyph(s))
}

// withGlyphs fills the glyph cache from the status styles.
func (t Theme) withGlyphs() Theme {
	t.glyph = make(map[Status]string, len(Statuses))
	for _, s := range Statuses {
		t.glyph[s] = t.Status(s).Render(Glyph(s))
	}
	return t
}

// Label is the glyph and the status word, styled: "✗ failed".
func (t Theme) Label(s Status) string { return t.Status(s).Render(Glyph(s) + " " + string(s)) }

// palette is a theme's colours by semantic role.
type palette struct {
	fg, muted, accent, border, title, titleBg, selectedFg, selectedBg color.Color
	bannerFg, bannerBg, errorFg, prodFg, prodBg, devFg, devBg         color.Color
	applied, pending, running, blocked, failed, stale, missing        color.Color
	outdated                                                          color.Color
	boldStatuses                                                      bool
}

func fromPalette(name string, p palette) Theme {
	fg := func(c color.Color) lipgloss.Style { return lipgloss.NewStyle().Foreground(c) }
	t := Theme{
		Name:        name,
		Base:        fg(p.fg),
		Muted:       fg(p.muted),
		Accent:      fg(p.accent).Bold(true),
		Border:      fg(p.border),
		Title:       fg(p.title).Background(p.titleBg).Bold(true),
		Selected:    fg(p.selectedFg).Background(p.selectedBg).Bold(true),
		Banner:      fg(p.bannerFg).Background(p.bannerBg).Bold(true),
		Error:       fg(p.errorFg).Bold(true),
		Prod:        fg(p.prodFg).Background(p.prodBg).Bold(true),
		Dev:         fg(p.devFg).Background(p.devBg).Bold(true),
		BorderColor: p.border,
	}
	t.status = map[Status]lipgloss.Style{
		Applied:  fg(p.applied),
		Pending:  fg(p.pending),
		Running:  fg(p.running),
		Blocked:  fg(p.blocked),
		Failed:   fg(p.failed),
		Stale:    fg(p.stale),
		Missing:  fg(p.missing),
		Outdated: fg(p.outdated),
	}
	if p.boldStatuses {
		for s, st := range t.status {
			if s != Pending && s != Missing {
				t.status[s] = st.Bold(true)
			}
		}
	}
	return t.withGlyphs()
}

// Dark is the default theme, for a dark terminal background.
func Dark() Theme { return fromPalette("dark", hexInks(true)) }

// Light is for a light terminal background: the same roles, darker inks.
func Light() Theme { return fromPalette("light", hexInks(false)) }

// hexInks is the palette of Dark (dark) or Light: each role's two inks
// side by side, the dark theme's first.
func hexInks(dark bool) palette {
	ink := func(onDark, onLight string) color.Color {
		if dark {
			return lipgloss.Color(onDark)
		}
		return lipgloss.Color(onLight)
	}
	return palette{
		fg: ink("#D0D0D0", "#262626"), muted: ink("#808080", "#6C6C6C"), accent: ink("#87AFFF", "#005FAF"), border: ink("#585858", "#A8A8A8"),
		title: ink("#FFFFFF", "#000000"), titleBg: ink("#303A4E", "#D0DCF0"), selectedFg: ink("#FFFFFF", "#000000"), selectedBg: ink("#3A4A6B", "#BCD0F0"),
		bannerFg: ink("#FFFFFF", "#FFFFFF"), bannerBg: ink("#AF0000", "#AF0000"), errorFg: ink("#FF5F5F", "#AF0000"),
		prodFg: ink("#FFFFFF", "#FFFFFF"), prodBg: ink("#AF0000", "#AF0000"), devFg: ink("#000000", "#FFFFFF"), devBg: ink("#5FAF5F", "#008700"),
		applied: ink("#5FD75F", "#008700"), pending: ink("#8A8A8A", "#6C6C6C"), running: ink("#5FAFFF", "#005FD7"), blocked: ink("#FFD75F", "#AF5F00"),
		failed: ink("#FF5F5F", "#D70000"), stale: ink("#D787FF", "#8700AF"), missing: ink("#6C6C6C", "#9E9E9E"), outdated: ink("#D7AF5F", "#875F00"),
	}
}

// HighContrast uses the 16 basic ANSI colours, bright and bold, which every
// terminal and every SSH hop renders, at the highest contrast the palette
// has.
func HighContrast() Theme {
	return fromPalette("high-contrast", palette{
		fg: lipgloss.BrightWhite, muted: lipgloss.White, accent: lipgloss.BrightCyan, border: lipgloss.BrightWhite,
		title: lipgloss.Black, titleBg: lipgloss.BrightWhite, selectedFg: lipgloss.Black, selectedBg: lipgloss.BrightYellow,
		bannerFg: lipgloss.BrightWhite, bannerBg: lipgloss.Red, errorFg: lipgloss.BrightRed,
		prodFg: lipgloss.BrightWhite, prodBg: lipgloss.Red, devFg: lipgloss.Black, devBg: lipgloss.BrightGreen,
		applied: lipgloss.BrightGreen, pending: lipgloss.White, running: lipgloss.BrightCyan, blocked: lipgloss.BrightYellow,
		failed: lipgloss.BrightRed, stale: lipgloss.BrightMagenta, missing: lipgloss.White, outdated: lipgloss.Yellow,
		boldStatuses: true,
	})
}

// None has no colour at all (NO_COLOR): text attributes only — bold for
// titles, reverse video for the cursor row and the banner — and the status
// glyphs carry every status.
func None() Theme {
	plain := lipgloss.NewStyle()
	t := Theme{
		Name:     "none",
		Base:     plain,
		Muted:    plain,
		Accent:   plain.Bold(true),
		Border:   plain,
		Title:    plain.Bold(true).Reverse(true),
		Selected: plain.Reverse(true),
		Banner:   plain.Bold(true).Reverse(true),
		Error:    plain.Bold(true),
		Prod:     plain.Bold(true).Reverse(true),
		Dev:      plain.Bold(true),
	}
	t.status = map[Status]lipgloss.Style{}
	for _, s := range Statuses {
		t.status[s] = plain
	}
	return t.withGlyphs()
}

// Default is the theme used when none is named: dark.
const Default = "dark"

var constructors = map[string]func() Theme{
	"dark":          Dark,
	"light":         Light,
	"high-contrast": HighContrast,
	"none":          None,
}

// Names lists the theme names Get accepts, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(constructors))
}

// Get returns the theme called name (case-insensitive; "" is the default),
// or an error that lists the names there are.
func Get(name string) (Theme, error) {
	if name == "" {
		name = Default
	}
	if f, ok := constructors[strings.ToLower(name)]; ok {
		return f(), nil
	}
	return Theme{}, fmt.Errorf("unknown theme %q: use one of %s", name, strings.Join(Names(), ", "))
}

// Select picks the theme a process starts with: the named one when a name
// is given (a flag is an explicit request, which no-color.org lets win),
// else "none" when NO_COLOR is set to anything non-empty, else the default.
// getenv is os.Getenv, injectable for tests and SSH sessions.
func Select(name string, getenv func(string) string) (Theme, error) {
	if name == "" && getenv != nil && getenv("NO_COLOR") != "" {
		return None(), nil
	}
	return Get(name)
}
