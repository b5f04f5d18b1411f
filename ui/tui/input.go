package tui

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/themes"
)

// lineInput is a one-line text field: the palette, the / filter and the
// torch confirmation. (bubbles' textinput would pull in a clipboard module
// the build does not carry; this is the little of it the UI needs.) The
// cursor is drawn as a reverse-video cell and never blinks, so frames stay
// the same until something changes — quiet over SSH, stable in tests.
type lineInput struct {
	prompt      string
	placeholder string
	value       []rune
	pos         int
}

func (in *lineInput) Value() string { return string(in.value) }

func (in *lineInput) SetValue(s string) {
	in.value = []rune(s)
	in.pos = len(in.value)
}

// update edits the field for a key press or a paste and reports whether
// the value changed.
func (in *lineInput) update(msg tea.Msg) bool {
	before := string(in.value)
	switch msg := msg.(type) {
	case tea.PasteMsg:
		in.insert(strings.Map(func(r rune) rune {
			if unicode.IsControl(r) {
				return -1
			}
			return r
		}, msg.Content))
	case tea.KeyPressMsg:
		switch msg.String() {
		case "backspace", "ctrl+h":
			if in.pos > 0 {
				in.value = append(in.value[:in.pos-1], in.value[in.pos:]...)
				in.pos--
			}
		case "delete", "ctrl+d":
			if in.pos < len(in.value) {
				in.value = append(in.value[:in.pos], in.value[in.pos+1:]...)
			}
		case "left", "ctrl+b":
			in.pos = max(0, in.pos-1)
		case "right", "ctrl+f":
			in.pos = min(len(in.value), in.pos+1)
		case "home", "ctrl+a":
			in.pos = 0
		case "end", "ctrl+e":
			in.pos = len(in.value)
		case "ctrl+u":
			in.value = append([]rune{}, in.value[in.pos:]...)
			in.pos = 0
		case "ctrl+k":
			in.value = in.value[:in.pos]
		case "ctrl+w", "alt+backspace":
			i := in.pos
			for i > 0 && in.value[i-1] == ' ' {
				i--
			}
			for i > 0 && in.value[i-1] != ' ' {
				i--
			}
			in.value = append(in.value[:i], in.value[in.pos:]...)
			in.pos = i
		default:
			if msg.Text != "" && msg.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
				in.insert(msg.Text)
			}
		}
	}
	return string(in.value) != before
}

func (in *lineInput) insert(s string) {
	rs := []rune(s)
	v := make([]rune, 0, len(in.value)+len(rs))
	v = append(append(append(v, in.value[:in.pos]...), rs...), in.value[in.pos:]...)
	in.value = v
	in.pos += len(rs)
}

// view draws the field in w cells: the prompt, the text scrolled so the
// cursor shows, and the cursor cell.
func (in *lineInput) view(t themes.Theme, w int) string {
	prompt := t.Accent.Render(in.prompt)
	room := max(1, w-width(in.prompt)-1)
	if len(in.value) == 0 && in.placeholder != "" {
		return prompt + t.Selected.Render(" ") + t.Muted.Render(clip(in.placeholder, room))
	}
	from := 0
	if in.pos > room {
		from = in.pos - room
	}
	to := min(len(in.value), from+room)
	before := string(in.value[from:in.pos])
	cur, after := " ", ""
	if in.pos < len(in.value) {
		cur = string(in.value[in.pos])
		after = string(in.value[in.pos+1 : max(in.pos+1, to)])
	}
	return prompt + t.Base.Render(before) + t.Selected.Render(cur) + t.Base.Render(after)
}
