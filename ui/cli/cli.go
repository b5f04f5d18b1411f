// Package cli is bollhav's command line: each command's flags, its work
// through the engine and its text or JSON rendering, so that main.go stays a
// dispatcher.
package cli

import (
	gocontext "context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
	"github.com/bollhav/bollhav/themes"
	"github.com/bollhav/bollhav/ui/untrusted"
	"github.com/spf13/pflag"
)

// Exit codes of the design (docs/design.md, The command line): 0 success; 1 a
// run had failed units or a hard gate error (and lint proved a contract can
// never be satisfied); 2 bad usage, spec or DSN; 130 a command a SIGINT or
// SIGTERM stopped (128 + SIGINT, what a shell reports for an interrupted
// process), except those that stop on a signal their own way (ownsSignals).
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitInterrupted = 130
)

// Streams are the process's standard streams, injectable for tests.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// Globals are the flags every command accepts.
type Globals struct {
	DSN      string
	Spec     string
	Env      string
	Output   string
	AsOf     string
	ReadOnly bool
	Theme    string
	// AllowLintErrors lets apply, run and worker take a spec whose
	// contracts lint proves can never be satisfied.
	AllowLintErrors bool
}

func (g *Globals) register(fs *pflag.FlagSet) {
	fs.StringVar(&g.DSN, "dsn", "", "state store: postgres://… or a SQLite path (env BOLLHAV_DSN; default .bollhav/state.db beside the spec)")
	fs.StringVar(&g.Spec, "spec", "bollhav.yaml", "the spec file")
	fs.StringVar(&g.Env, "env", "", "environment schema suffix (env SCHEMA_SUFFIX)")
	fs.StringVarP(&g.Output, "output", "o", "text", "output format: text or json")
	fs.StringVar(&g.AsOf, "as-of", "", "evaluate as of this time (RFC 3339) instead of now")
	fs.BoolVar(&g.ReadOnly, "read-only", false, "refuse every action that changes state")
	fs.BoolVar(&g.AllowLintErrors, "allow-lint-errors", false, "apply and run a spec whose contracts lint proves can never be satisfied (a task cycle is refused all the same)")
	fs.StringVar(&g.Theme, "theme", "", "theme of the UI and of the status colours of text output: dark, light, high-contrast or none")
}

// command is one subcommand: its help and its body.
type command struct {
	name string
	// args is what the usage line names after the command: its arguments
	// and the flags it cannot do without ("[flags]" is added).
	args     string
	summary  string
	long     string
	examples []string
	flags    func(fs *pflag.FlagSet)
	// globals are the global flags the command uses, by name; its help
	// lists only those. Every command still accepts them all (a script
	// may give --dsn to every command), and checkGlobals checks them all.
	globals []string
	run     func(c *cmdContext, args []string) int
	// ownsSignals marks a command that stops on SIGINT or SIGTERM its own
	// way and says how in its exit status (run, worker, watch, serve, demo,
	// ui: each documents it in its help), and decides itself whether a
	// second signal ends the process at once. Any other command a signal
	// stops exits ExitInterrupted, and the next signal ends the process.
	ownsSignals bool
	// memoryLimit, when not zero, is the process's soft memory limit while
	// the command runs (boundMemory): batchMemoryLimit for the commands
	// that work over the whole spec at once.
	memoryLimit int64
	// gcPercent, when not zero, is the collector's pace while the command
	// runs (boundGC): triageGCPercent for the one-shot reads.
	gcPercent int
}

// cmdContext is what a running command gets: the parsed globals and
// streams, and the process's context.
type cmdContext struct {
	Globals
	Streams
	// given holds the flags set on the command line, before or after the
	// command name, so a flag given as "" can still win over its variable.
	given map[string]bool
	// ctx is the process's one signal-aware context (Main): the first
	// SIGINT or SIGTERM cancels it. Every command works on it, so an
	// interrupt stops its store calls and its runs, and the command returns
	// through its deferred clean-up (units back to pending, the store
	// closed) instead of the process dying in the middle.
	ctx gocontext.Context
	// restoreSignals gives SIGINT and SIGTERM back their default action,
	// so that the next one ends the process at once: after the first, a
	// clean-up that hangs (a unit's command that ignores the stop, a store
	// that does not answer) is not left unkillable.
	restoreSignals func()
	// notes are said on stderr after the command's output when it
	// succeeds: what it read instead of a store that is not there yet.
	notes []string
}

func (c *cmdContext) flagGiven(name string) bool { return c.given[name] }

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// usageError is bad usage: printed with a hint to the command's help, exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// Main runs bollhav with args (without the program name) as the process
// and returns its exit code. It makes the process's one signal-aware
// context, which the first SIGINT or SIGTERM cancels, and runs the command
// on it: main and the tests that start the CLI as a process of its own go
// through here, so they handle signals alike.
func Main(args []string, s Streams) int {
	ctx, stop := signal.NotifyContext(gocontext.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return mainContext(ctx, stop, args, s)
}

// mainContext is Main on ctx, whose end is what an interrupt is to the
// command; restoreSignals gives the signals back their default action.
func mainContext(ctx gocontext.Context, restoreSignals func(), args []string, s Streams) int {
	// Errors and logs quote what bollhav does not control — a unit's
	// error, a warehouse's or a store's words — and bollhav writes no
	// styling there: every escape sequence that reaches stderr is one of
	// theirs, so stderr shows each as text (untrusted.Writer). Stdout is
	// cleaned where each command prints a stored string, as it carries
	// bollhav's own styles and the live view of run.
	s.Err = untrusted.NewWriter(s.Err)
	p := process{ctx: ctx, restoreSignals: restoreSignals}
	var g Globals
	fs := pflag.NewFlagSet("bollhav", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	fs.SetOutput(io.Discard)
	g.register(fs)
	version := fs.Bool("version", false, "print the version")
	help := fs.BoolP("help", "h", false, "show help")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(s.Err, "bollhav: %v\nRun 'bollhav help' for usage.\n", err)
		return ExitUsage
	}
	switch {
	case *version:
		fmt.Fprintf(s.Out, "bollhav %s\n%s %s/%s\n", Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return ExitOK
	case *help:
		printUsage(s.Out)
		return ExitOK
	}
	rest := fs.Args()
	if len(rest) == 0 {
		// No command: the UI on a terminal; the overview anywhere else.
		if uiWanted(s) {
			return p.runCommand(commands["ui"], g, fs, nil, s)
		}
		printUsage(s.Out)
		return ExitOK
	}
	name, rest := rest[0], rest[1:]
	if name == "help" {
		return runHelp(rest, s)
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(s.Err, "bollhav: unknown command %q\nRun 'bollhav help' for the list of commands.\n", name)
		return ExitUsage
	}
	return p.runCommand(cmd, g, fs, rest, s)
}

// process is what Main holds for the whole process: its signal-aware
// context, shared by whichever command runs.
type process struct {
	ctx            gocontext.Context
	restoreSignals func()
}

func (p process) runCommand(cmd *command, g Globals, globals *pflag.FlagSet, args []string, s Streams) int {
	c := &cmdContext{Globals: g, Streams: s, ctx: p.ctx, restoreSignals: p.restoreSignals}
	fs := commandFlags(cmd, &c.Globals)
	// Globals given before the command name keep their values: re-apply them.
	globals.Visit(func(f *pflag.Flag) {
		if cf := fs.Lookup(f.Name); cf != nil {
			_ = cf.Value.Set(f.Value.String())
		}
	})
	help := fs.BoolP("help", "h", false, "show help")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(s.Err, "bollhav %s: %v\nRun 'bollhav help %s' for usage.\n", cmd.name, err, cmd.name)
		return ExitUsage
	}
	if *help {
		printCommandHelp(s.Out, cmd)
		return ExitOK
	}
	c.given = map[string]bool{}
	globals.Visit(func(f *pflag.Flag) { c.given[f.Name] = true })
	fs.Visit(func(f *pflag.Flag) { c.given[f.Name] = true })
	if c.Output != "text" && c.Output != "json" {
		fmt.Fprintf(s.Err, "bollhav %s: invalid --output %q: use text or json\n", cmd.name, c.Output)
		return ExitUsage
	}
	if err := c.checkGlobals(); err != nil {
		fmt.Fprintf(s.Err, "bollhav %s: %v\n", cmd.name, err)
		return ExitUsage
	}
	if !cmd.ownsSignals {
		defer gocontext.AfterFunc(p.ctx, p.restoreSignals)()
	}
	if cmd.memoryLimit > 0 {
		defer boundMemory(cmd.memoryLimit)()
	}
	if cmd.gcPercent > 0 {
		defer boundGC(cmd.gcPercent)()
	}
	code := cmd.run(c, fs.Args())
	if code == ExitOK {
		for _, n := range c.notes {
			fmt.Fprintf(s.Err, "bollhav %s: %s\n", cmd.name, n)
		}
	}
	if p.ctx.Err() != nil && !cmd.ownsSignals {
		// The command has cleaned up (its deferred closes ran); whatever
		// it printed about its cancelled work, the status says why.
		fmt.Fprintf(s.Err, "bollhav %s: interrupted\n", cmd.name)
		return ExitInterrupted
	}
	return code
}

// checkGlobals validates the global flags every command accepts, so a bad
// value is an error even for a command that does not use it yet.
func (c *cmdContext) checkGlobals() error {
	if c.AsOf != "" {
		if _, err := state.ParseTime(c.AsOf); err != nil {
			return fmt.Errorf("--as-of: %w", err)
		}
	}
	if _, err := spec.ParseEnv(c.Env); err != nil {
		return fmt.Errorf("--env: %w", err)
	}
	// Every command colours its text by the theme, so every command
	// refuses one it does not have (only ui did; the others fell back to
	// the default and exited 0).
	if c.Theme != "" {
		if _, err := themes.Get(c.Theme); err != nil {
			return fmt.Errorf("--theme: %w", err)
		}
	}
	return nil
}

func commandFlags(cmd *command, g *Globals) *pflag.FlagSet {
	fs := pflag.NewFlagSet("bollhav "+cmd.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	own := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { own[f.Name] = true })
	g.register(fs)
	fs.VisitAll(func(f *pflag.Flag) {
		if !own[f.Name] && !slices.Contains(cmd.globals, f.Name) {
			_ = fs.MarkHidden(f.Name)
		}
	})
	return fs
}

// Global flag names, for commands' globals.
const (
	gSpec      = "spec"
	gDSN       = "dsn"
	gEnv       = "env"
	gOutput    = "output"
	gAsOf      = "as-of"
	gReadOnly  = "read-only"
	gAllowLint = "allow-lint-errors"
	gTheme     = "theme"
)

// storeGlobals are the globals of a command that reads the store of an
// environment and prints text or JSON.
var storeGlobals = []string{gSpec, gDSN, gEnv, gOutput}

// fail prints err for the command and returns its exit code: usage errors
// and everything else alike exit 2 unless the caller decides otherwise.
func (c *cmdContext) fail(name string, err error) int {
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(c.Err, "bollhav %s: %s\nRun 'bollhav help %s' for usage.\n", name, ue.msg, name)
		return ExitUsage
	}
	fmt.Fprintf(c.Err, "bollhav %s: %v\n", name, err)
	return ExitUsage
}

func runHelp(args []string, s Streams) int {
	if len(args) == 0 {
		printUsage(s.Out)
		return ExitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(s.Err, "bollhav help: unknown command %q\n", args[0])
		return ExitUsage
	}
	printCommandHelp(s.Out, cmd)
	return ExitOK
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "bollhav %s — a pipeline explorer with an embedded engine\n\n", Version())
	fmt.Fprintln(w, "Usage: bollhav [global flags] <command> [args]")
	fmt.Fprintln(w, "\nCommands:")
	names := slices.Sorted(maps.Keys(commands))
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nGlobal flags:")
	var g Globals
	fs := pflag.NewFlagSet("bollhav", pflag.ContinueOnError)
	g.register(fs)
	fmt.Fprint(w, fs.FlagUsages())
	fmt.Fprintln(w, "\nRun 'bollhav help <command>' for a command's flags and examples.")
}

func printCommandHelp(w io.Writer, cmd *command) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", usageLine(cmd), cmd.summary)
	if cmd.long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(cmd.long))
	}
	var g Globals
	fs := commandFlags(cmd, &g)
	fmt.Fprintf(w, "\nFlags:\n%s", fs.FlagUsages())
	if len(cmd.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range cmd.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

// usageLine is a command's usage: its name, its arguments and the flags
// it cannot do without, then [flags].
func usageLine(cmd *command) string {
	return strings.Join(slices.DeleteFunc([]string{"bollhav", cmd.name, cmd.args, "[flags]"}, func(s string) bool { return s == "" }), " ")
}

// Version is what the binary was built from (versionOf its build
// information).
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return versionOf(bi)
}

// versionOf is the version bi names: the module's (go install
// …@v1.2.3, or the pseudo-version go build stamps in a git clone), else
// the VCS revision and commit time go build recorded, marked "modified"
// when the tree had uncommitted changes, else "devel" and why there is
// nothing more to say.
func versionOf(bi *debug.BuildInfo) string {
	if bi == nil {
		return "devel (no build information)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel, with no version or VCS information built in (-buildvcs=false, or not built in a git clone)"
	}
	v := "devel " + rev[:min(len(rev), 12)]
	if at != "" {
		v += " " + at
	}
	if modified {
		v += " modified"
	}
	return v
}
