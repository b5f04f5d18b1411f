package tui

// topView is a screen one key away: it has a number key (1, 2, …), a
// palette command and an Options.View name, and switching to it goes back
// to it when it is on the stack.
type topView struct {
	kind viewKind
	key  string
	// help is its line in the palette and the help screen.
	help string
	open func(c *common) view
}

// topViews are the top-level screens in key order; the first is the
// bottom of the stack, which esc always leads back to. Adding a screen is
// its file plus one line here; a view opened from another (model, why,
// run) needs only its file.
var topViews = []topView{
	{viewPipelines, "1", "the pipelines view", func(c *common) view { return newPipelines(c) }},
	{viewBlocked, "2", "the blocked units, by what they hold", func(c *common) view { return newBlocked(c) }},
	{viewRuns, "3", "the run history", func(c *common) view { return newRuns(c) }},
	{viewAudit, "4", "the audit log: who did what, newest first", func(c *common) view { return newAudit(c) }},
	{viewIncidents, "i", "the incidents: what broke, by root cause", func(c *common) view { return newIncidents(c) }},
}

// topViewNamed is the top-level screen called name.
func topViewNamed(name string) (topView, bool) {
	for _, t := range topViews {
		if string(t.kind) == name {
			return t, true
		}
	}
	return topView{}, false
}
