package executor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// DefaultCommandTimeout bounds a command whose run block sets no timeout: a
// hung loader must not hold its unit's lease forever.
const DefaultCommandTimeout = time.Hour

// DefaultKillGrace is how long a timed-out or cancelled command has between
// SIGTERM and SIGKILL — enough to roll back a transaction or remove a temp
// file, short enough that a stuck one does not stall shutdown.
const DefaultKillGrace = 5 * time.Second

// pipeDrain bounds how long output is still read after the command's
// process group is gone; only a descendant that left the group (setsid) and
// kept the pipes open can make it matter.
const pipeDrain = 2 * time.Second

// CommandExecutor runs a command model (docs/design.md, Executors): the run
// block's argv, with no shell in between so arguments are never re-split or
// expanded, in the spec's directory, with the unit described in BOLLHAV_*
// variables. Exit 0 applies the unit; a stdout line rows_written=N reports
// its rows; anything else fails it with the tail of stderr as the error.
//
// The command runs in its own process group, and that whole group is killed
// when the command exits, times out or is cancelled: a unit's work ends with
// its unit, so no background child outlives the lease it ran under.
type CommandExecutor struct {
	// Logger receives every line the command prints, at debug level, with
	// the model, run id and stream as attributes; nil discards them.
	// Output is read as it arrives either way, never buffered whole.
	Logger *slog.Logger
	// KillGrace is the time between SIGTERM and SIGKILL on timeout or
	// cancellation; zero means DefaultKillGrace.
	KillGrace time.Duration
}

var _ Executor = (*CommandExecutor)(nil)

// Execute runs u's command and waits for it. It returns once the command
// and every process of its group have gone, also when ctx is cancelled or
// the run block's timeout expires.
func (e *CommandExecutor) Execute(ctx context.Context, u UnitRun) (Result, error) {
	if u.Model == nil {
		return Result{}, errors.New("command executor: unit has no model")
	}
	m := u.Model
	if m.Run.Kind != spec.RunCommand || len(m.Run.Command) == 0 {
		return Result{}, fmt.Errorf("model %s: the command executor runs a command, but the run block is %s", m.Name, m.Run.Kind)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, &CommandError{Status: "cancelled before it started", Err: err}
	}
	dir, err := filepath.Abs(u.SpecDir)
	if err != nil {
		return Result{}, fmt.Errorf("model %s: spec directory %q: %w", m.Name, u.SpecDir, err)
	}
	path, err := resolveProgram(m.Run.Command[0], dir)
	if err != nil {
		return Result{}, err
	}
	env, err := commandEnv(os.Environ(), u)
	if err != nil {
		return Result{}, err
	}
	timeout := m.Run.Timeout
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	grace := e.KillGrace
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	p := &commandProcess{
		cmd:     &exec.Cmd{Path: path, Args: m.Run.Command, Dir: dir, Env: env},
		redact:  newRedactor(os.Environ(), secretEnvNames(m)),
		logger:  e.Logger,
		logArgs: []any{"model", m.Name, "run_id", u.RunID},
	}
	return p.run(ctx, timeout, grace)
}

// commandProcess is one execution of a command: the process, its output
// readers and what they found.
type commandProcess struct {
	cmd     *exec.Cmd
	redact  *redactor
	logger  *slog.Logger
	logArgs []any

	stdout stdoutScan
	stderr tailBuffer
}

func (p *commandProcess) run(ctx context.Context, timeout, grace time.Duration) (Result, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return Result{}, err
	}
	defer errR.Close()
	// The child gets the write ends directly (they are *os.File, so exec
	// copies nothing), which lets Wait return as soon as the command exits
	// even if a straggler still holds the pipes.
	p.cmd.Stdout, p.cmd.Stderr = outW, errW
	setProcessGroup(p.cmd)
	err = p.cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		return Result{}, fmt.Errorf("command %q: %w", p.cmd.Args[0], err)
	}
	pid := p.cmd.Process.Pid

	var readers sync.WaitGroup
	readers.Go(func() { eachLine(outR, p.stdoutLine) })
	readers.Go(func() { eachLine(teeReader{errR, &p.stderr}, p.stderrLine) })

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	terminated := make(chan struct{})
	stop := context.AfterFunc(runCtx, func() {
		defer close(terminated)
		terminateGroup(pid, grace)
	})

	waitErr := p.cmd.Wait()
	stopped := stop()
	if stopped {
		// The command ended on its own: whatever it left running in its
		// group goes now.
		killGroup(pid)
		close(terminated)
	}
	<-terminated
	deadline := time.Now().Add(pipeDrain)
	outR.SetReadDeadline(deadline)
	errR.SetReadDeadline(deadline)
	readers.Wait()

	tail := p.redact.apply(p.stderr.tail())
	switch {
	case !stopped && ctx.Err() != nil:
		return Result{}, &CommandError{Status: "cancelled", Stderr: tail, Err: ctx.Err()}
	case !stopped:
		return Result{}, &CommandError{Status: "timed out after " + state.ShortDuration(timeout), Stderr: tail, Err: context.DeadlineExceeded}
	case waitErr != nil:
		var ee *exec.ExitError
		if errors.As(waitErr, &ee) {
			// ProcessState prints "exit status 3" or "signal: killed".
			return Result{}, &CommandError{Status: ee.ProcessState.String(), Stderr: tail, Err: waitErr}
		}
		return Result{}, fmt.Errorf("command %q: %w", p.cmd.Args[0], waitErr)
	case p.stdout.err != nil:
		return Result{}, p.stdout.err
	}
	return Result{RowsWritten: p.stdout.rows}, nil
}

// stdoutLine scans one stdout line for rows_written and logs it.
func (p *commandProcess) stdoutLine(line []byte, truncated bool) {
	p.stdout.line(line, truncated, p.redact)
	p.log("stdout", line)
}

// stderrLine logs one stderr line; the tail buffer already has it.
func (p *commandProcess) stderrLine(line []byte, _ bool) { p.log("stderr", line) }

func (p *commandProcess) log(stream string, line []byte) {
	if p.logger == nil || !p.logger.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	args := append([]any{"stream", stream, "line", p.redact.apply(string(line))}, p.logArgs...)
	p.logger.Debug("command output", args...)
}

// CommandError is a command that ran and did not succeed: it exited
// non-zero, died of a signal, timed out or was cancelled. Its text is the
// status, then the tail of stderr (secrets redacted), which is what an
// operator needs first when a unit fails.
type CommandError struct {
	// Status is "exit status 3", "signal: killed", "timed out after 1h" or
	// "cancelled".
	Status string
	// Stderr is the trimmed tail of stderr: at most about 2 KB and 20 lines.
	Stderr string
	// Err is the *exec.ExitError, context.DeadlineExceeded or the context's
	// error, for errors.Is and errors.As.
	Err error
}

func (e *CommandError) Error() string {
	if e.Stderr == "" {
		return e.Status
	}
	return e.Status + ": " + e.Stderr
}

func (e *CommandError) Unwrap() error { return e.Err }

// resolveProgram finds argv[0] the way a user reading the spec expects: a
// name with a slash is a path relative to the spec's directory (never to
// whatever directory bollhav was started from), a bare name is looked up in
// PATH. Missing or non-executable programs are reported before anything
// starts, with the path that was tried.
func resolveProgram(argv0, specDir string) (string, error) {
	if !strings.ContainsRune(argv0, '/') && !strings.ContainsRune(argv0, filepath.Separator) {
		path, err := exec.LookPath(argv0)
		if err != nil {
			return "", fmt.Errorf("command %q: not found in PATH (a program beside the spec needs a path, such as ./%s)", argv0, argv0)
		}
		return path, nil
	}
	path := argv0
	if !filepath.IsAbs(path) {
		path = filepath.Join(specDir, path)
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("command %q: %s does not exist (a relative program path is relative to the spec's directory)", argv0, path)
	case err != nil:
		return "", fmt.Errorf("command %q: %w", argv0, err)
	case info.IsDir():
		return "", fmt.Errorf("command %q: %s is a directory", argv0, path)
	case info.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("command %q: %s is not executable (chmod +x it)", argv0, path)
	}
	return path, nil
}
