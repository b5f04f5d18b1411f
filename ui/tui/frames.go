package tui

import (
	"sync"

	"github.com/charmbracelet/x/ansi"
)

// frameRecorder keeps the frames the program drew, as plain text, each with
// the view on top when it was drawn: tests wait on what a user would see
// instead of parsing the renderer's escape sequences. It keeps the history,
// not only the newest frame, because a message a user reads for a moment (a
// run's "started" toast that its "succeeded" replaces a few milliseconds
// later on a fast machine) is on screen for less time than a test polls:
// a test that waits for it looks through every frame drawn since its
// previous wait instead of hoping to catch it. Only tests set one.
type frameRecorder struct {
	mu     sync.Mutex
	frames []recordedFrame
	// first is the index, counted from the program's first frame, of
	// frames[0]: the oldest frames are dropped past maxRecordedFrames.
	first int
}

// recordedFrame is one frame as drawn.
type recordedFrame struct {
	plain string
	top   viewKind
	title string
}

// maxRecordedFrames bounds the history (a few MB at 200×50): a wait looks
// at the frames since the previous one, which are far fewer.
const maxRecordedFrames = 4096

func (f *frameRecorder) record(content string, a *App) {
	fr := recordedFrame{plain: ansi.Strip(content), top: a.top().kind(), title: a.top().title()}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.frames); n > 0 && f.frames[n-1] == fr {
		return // a redraw of the same screen tells a test nothing new
	}
	f.frames = append(f.frames, fr)
	if len(f.frames) > maxRecordedFrames {
		drop := len(f.frames) - maxRecordedFrames/2
		f.frames = append([]recordedFrame(nil), f.frames[drop:]...)
		f.first += drop
	}
}
