package tui

import (
	"sync"

	"github.com/charmbracelet/x/ansi"
)

// frameRecorder keeps the newest frame the program drew, as plain text, and
// the view on top when it was drawn: tests wait on what a user would see
// instead of parsing the renderer's escape sequences.
type frameRecorder struct {
	mu    sync.Mutex
	plain string
	top   viewKind
	title string
	n     int
}

func (f *frameRecorder) record(content string, a *App) {
	plain := ansi.Strip(content)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plain, f.top, f.title = plain, a.top().kind(), a.top().title()
	f.n++
}

func (f *frameRecorder) last() (plain string, top viewKind, title string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.plain, f.top, f.title
}
