package themes

import (
	"slices"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

func TestNamesAndGet(t *testing.T) {
	want := []string{"dark", "high-contrast", "light", "none"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, n := range want {
		th, err := Get(n)
		if err != nil || th.Name != n {
			t.Errorf("Get(%q) = %q, %v", n, th.Name, err)
		}
	}
	if th, err := Get(""); err != nil || th.Name != Default {
		t.Errorf("Get(\"\") = %q, %v; want the default %q", th.Name, err, Default)
	}
	if th, err := Get("High-Contrast"); err != nil || th.Name != "high-contrast" {
		t.Errorf("names are case-insensitive: %q, %v", th.Name, err)
	}
	_, err := Get("solarized")
	if err == nil || !strings.Contains(err.Error(), "dark, high-contrast, light, none") {
		t.Errorf("an unknown theme names the known ones: %v", err)
	}
}

func TestSelectHonoursNoColor(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"", nil, "dark"},
		{"", map[string]string{"NO_COLOR": "1"}, "none"},
		{"", map[string]string{"NO_COLOR": ""}, "dark"}, // set but empty does not count (no-color.org)
		{"light", map[string]string{"NO_COLOR": "1"}, "light"},
		{"high-contrast", nil, "high-contrast"},
	}
	for _, c := range cases {
		th, err := Select(c.name, env(c.env))
		if err != nil || th.Name != c.want {
			t.Errorf("Select(%q, %v) = %q, %v; want %q", c.name, c.env, th.Name, err, c.want)
		}
	}
	if _, err := Select("nope", env(nil)); err == nil {
		t.Error("Select of an unknown name is an error")
	}
}

func TestGlyphsAreDistinctAndOneCellWide(t *testing.T) {
	seen := map[string]Status{}
	for _, s := range Statuses {
		g := Glyph(s)
		if w := lipgloss.Width(g); w != 1 {
			t.Errorf("glyph of %s %q is %d cells wide, want 1", s, g, w)
		}
		if other, dup := seen[g]; dup {
			t.Errorf("%s and %s share the glyph %q: status would need colour to tell apart", s, other, g)
		}
		seen[g] = s
	}
	if Glyph("bogus") != "?" {
		t.Errorf("an unknown status gets ?")
	}
}

func TestEveryThemeStylesEveryStatus(t *testing.T) {
	for _, n := range Names() {
		th, _ := Get(n)
		for _, s := range Statuses {
			if _, ok := th.status[s]; !ok {
				t.Errorf("theme %s has no style for %s", n, s)
			}
			if got := ansi.Strip(th.Label(s)); got != Glyph(s)+" "+string(s) {
				t.Errorf("theme %s label of %s = %q", n, s, got)
			}
		}
	}
}

func TestColourThemesColourStatusesAndNoneDoesNot(t *testing.T) {
	// A foreground colour is SGR 38 (extended) or 30–37/90–97 (basic).
	hasColour := func(s string) bool {
		for _, p := range []string{"[38;", "[48;", "[3", "[9", ";3", ";9"} {
			if strings.Contains(s, p) {
				return true
			}
		}
		return false
	}
	for _, n := range []string{"dark", "light", "high-contrast"} {
		th, _ := Get(n)
		if !hasColour(th.Status(Failed).Render("x")) {
			t.Errorf("theme %s renders failed without colour: %q", n, th.Status(Failed).Render("x"))
		}
	}
	none := None()
	styles := []lipgloss.Style{none.Base, none.Muted, none.Accent, none.Border, none.Title, none.Selected, none.Banner,
		none.Error, none.Prod, none.Dev}
	for _, s := range Statuses {
		styles = append(styles, none.Status(s))
	}
	for i, st := range styles {
		if out := st.Render("x"); hasColour(out) {
			t.Errorf("theme none style %d renders colour: %q", i, out)
		}
	}
	// The cursor row must still be visible without colour.
	if none.Selected.Render("x") == "x" {
		t.Error("theme none's selected row is indistinguishable from plain text")
	}
}
