// The frame recorder's readers: only tests read the frames it keeps.

package tui

// last is the newest frame ("" before the first one).
func (f *frameRecorder) last() (plain string, top viewKind, title string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.frames) == 0 {
		return "", "", ""
	}
	fr := f.frames[len(f.frames)-1]
	return fr.plain, fr.top, fr.title
}

// since returns the frames from index i on (counted from the program's
// first frame; the oldest kept one when i was dropped) and the index of
// the first of them.
func (f *frameRecorder) since(i int) ([]recordedFrame, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i = max(i, f.first)
	if i-f.first >= len(f.frames) {
		return nil, i
	}
	return append([]recordedFrame(nil), f.frames[i-f.first:]...), i
}
