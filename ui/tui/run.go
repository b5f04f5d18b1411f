package tui

import (
	"context"
	"errors"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
)

// Options configure the UI.
type Options struct {
	// Theme names the theme (themes.Names); empty picks one: "none" under
	// NO_COLOR, else dark, or light on a light terminal background.
	Theme string
	// ReadOnly hides every action; the engine is made read-only too, so an
	// action is refused even if something asked for one.
	ReadOnly bool
	// Input and Output are the terminal; stdin and stdout when nil.
	Input  io.Reader
	Output io.Writer
	// View is the first screen: "pipelines", "blocked", "runs", "audit",
	// "incidents", "model" (Model) or "why" (Model at At). Esc leads back to
	// pipelines from any of them. Empty (the default) opens on the
	// incidents when anything is failed, blocked or stale, else on the
	// pipelines with an "all clear" line.
	View  string
	Model string
	At    time.Time
	// Getenv reads the environment (NO_COLOR); os.Getenv when nil. An SSH
	// session passes the session's environment.
	Getenv func(string) string
	// Feed is a change feed shared by every UI of the process (NewFeed);
	// nil: the UI follows the store itself.
	Feed *Feed
	// FirstLook is the incidents' first look (engine.Glance) read before
	// the program started: the landing incidents view shows it as its
	// first answer instead of reading one, and traces from there. The
	// launcher reads it while a large spec parses (cli openUIEngine),
	// which is most of a launch at ten thousand models. Nil: read it.
	FirstLook *gate.IncidentReport
	// FeedPoll is the longest a change in the store waits unseen when the
	// store sends no wake-up (default DefaultFeedPoll), for a UI's own feed.
	FeedPoll time.Duration
	// Location is the viewer's time zone, which T shows instants in;
	// nil: the zone TZ (from Getenv) names, else the process's. An SSH
	// session passes the zone its client sent, or UTC: the server's own
	// says nothing of the viewer's.
	Location *time.Location
	// User and Role say who the session is, in the header ("alice
	// (viewer)"): an SSH session's user name and its key's role. Empty
	// for a local UI.
	User, Role string
	// IdleTimeout closes the UI when no key was pressed for this long,
	// with a warning a minute before (0: never); a UI only watching a
	// live view is kept unless IdleClosesWatchers (idle.go).
	IdleTimeout        time.Duration
	IdleClosesWatchers bool
}

// NewModel is the UI as a Bubble Tea model over e, for a caller that runs
// the program itself (an SSH session with its own input, output and
// environment: pass its Getenv). The UI's loads, its change feed and the
// runs it starts live on ctx: cancel it when the program ends. It draws in
// the alternate screen with mouse wheel reporting on; Input and Output are
// ignored.
func NewModel(ctx context.Context, e *engine.Engine, opts Options) (tea.Model, error) {
	return newApp(ctx, e, withDefaults(opts), standardRenderers())
}

// Run runs the terminal UI on e until the user quits or ctx ends. Runs
// started from the UI are cancelled when it ends, and Run returns only once
// they have recorded it (at most RunDrainTimeout): the engine puts their
// interrupted units back to pending and records each run cancelled.
func Run(parent context.Context, e *engine.Engine, opts Options) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	app, err := newApp(ctx, e, withDefaults(opts), standardRenderers())
	if err != nil {
		return err
	}
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	_, err = tea.NewProgram(app, popts...).Run()
	// The program has ended (q, q again over a run, or the caller's
	// context): stop the runs it started and wait for them to record it.
	cancel()
	wctx, wcancel := context.WithTimeout(context.Background(), RunDrainTimeout)
	defer wcancel()
	werr := app.WaitRuns(wctx)
	if errors.Is(err, tea.ErrProgramKilled) && parent.Err() != nil {
		err = nil // ended by the caller's context: a normal stop
	}
	return errors.Join(err, werr)
}
