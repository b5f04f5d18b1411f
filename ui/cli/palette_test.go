package cli

import (
	"testing"

	"github.com/bollhav/bollhav/themes"
)

// TestPaletteFollowsTheTheme: the command line draws a status word in the
// style the terminal UI gives that status under the same --theme, and the
// none theme draws it plain.
func TestPaletteFollowsTheTheme(t *testing.T) {
	for _, name := range themes.Names() {
		th, err := themes.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		c := &cmdContext{Globals: Globals{Theme: name}}
		pal := c.palette()
		for word, role := range map[string]themes.Status{"applied": themes.Applied, "SUCCESS": themes.Applied, "failed": themes.Failed, "waiting": themes.Pending} {
			if got, want := pal.status(word), th.Status(role).Render(word); got != want {
				t.Errorf("--theme %s, %s: %q, want %q", name, word, got, want)
			}
		}
		if got := pal.status("cancelled"); got != "cancelled" {
			t.Errorf("--theme %s: a word that is not a status is styled: %q", name, got)
		}
	}
	if got := (&cmdContext{Globals: Globals{Theme: "none"}}).palette().status("failed"); got != "failed" {
		t.Errorf("--theme none: %q, want plain", got)
	}
}
