// Package serve is `bollhav serve --ssh`: the terminal UI over SSH for
// on-call engineers, built on wish. Every session runs its own UI (its own
// window size and colours) over one shared engine and store pool; who may
// do what comes from the public key that authenticated, and is enforced in
// the engine each session gets, not only in its UI.
package serve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/activeterm"
	wishtea "charm.land/wish/v2/bubbletea"
	gossh "golang.org/x/crypto/ssh"

	"github.com/bollhav/bollhav/engine"
)

// ModelFunc builds one session's UI over its engine. ctx ends with the
// session (or the server), which must stop the work the UI started.
type ModelFunc func(ctx context.Context, e *engine.Engine, s ssh.Session) (tea.Model, error)

// Config is a server's setup.
type Config struct {
	// Addr is host:port to listen on.
	Addr string
	// StateDir holds the host key (created on first start).
	StateDir string
	Keys     Keys
	// Engine is shared by every session: each gets a copy whose Actor
	// names the SSH user and key, and which is read-only for viewers.
	Engine *engine.Engine
	// NewModel builds a session's UI.
	NewModel ModelFunc
	// IdleTimeout closes a session with no input for this long (0: 30 min).
	IdleTimeout time.Duration
	// MaxSessions refuses sessions beyond this many at once (0: 32).
	MaxSessions int
	Log         *slog.Logger
}

// Server is a running SSH UI server.
type Server struct {
	cfg         Config
	srv         *ssh.Server
	log         *slog.Logger
	ctx         context.Context
	stop        context.CancelFunc
	mu          sync.Mutex
	live        map[ssh.Session]struct{}
	wg          sync.WaitGroup
	HostKeyPath string
}

// New checks cfg (both key files parse; the host key loads or is created)
// and returns a server ready to Serve.
func New(cfg Config) (*Server, error) {
	if cfg.Engine == nil || cfg.NewModel == nil {
		return nil, errors.New("serve: an engine and a UI are required")
	}
	if _, _, err := cfg.Keys.Check(); err != nil {
		return nil, err
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Minute
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = 32
	}
	log := cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	signer, keyPath, err := LoadOrCreateHostKey(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, log: log, ctx: ctx, stop: stop, live: map[ssh.Session]struct{}{}, HostKeyPath: keyPath}
	srv, err := wish.NewServer(
		// The host key first: without one, wish writes a new id_ed25519
		// into the working directory.
		func(srv *ssh.Server) error { srv.AddHostKey(signer); return nil },
		wish.WithAddress(cfg.Addr),
		wish.WithIdleTimeout(cfg.IdleTimeout),
		// Public keys only: with no password or keyboard-interactive
		// handler, those methods are refused.
		wish.WithPublicKeyAuth(func(_ ssh.Context, key ssh.PublicKey) bool {
			// Deciding here is safe only as a yes/no: the client may offer
			// keys it cannot sign for, so the role is looked up again from
			// the key the session actually authenticated with.
			return cfg.Keys.RoleOf(key) != NoRole
		}),
		wish.WithMiddleware(
			wishtea.MiddlewareWithProgramHandler(s.program),
			activeterm.Middleware(),
			s.admit,
		),
	)
	if err != nil {
		stop()
		return nil, err
	}
	s.srv = srv
	return s, nil
}

// Serve accepts connections on l until Shutdown.
func (s *Server) Serve(l net.Listener) error {
	err := s.srv.Serve(l)
	if errors.Is(err, ssh.ErrServerClosed) {
		return nil
	}
	return err
}

// ListenAndServe listens on the configured address.
func (s *Server) ListenAndServe() error {
	l, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// Shutdown says goodbye to every session, stops their UIs (their engine
// work finishes or releases its claims as its context ends) and closes the
// server, waiting at most until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	for sess := range s.live {
		_, _ = fmt.Fprint(sess, "\r\nbollhav is shutting down; goodbye.\r\n")
	}
	s.mu.Unlock()
	s.stop()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	// The sessions have ended (or ctx gave up on them); a client may keep
	// its connection open regardless, so close them rather than wait.
	return s.srv.Close()
}

// Sessions is how many sessions are open.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

// admit is the outermost middleware: it refuses sessions beyond the
// maximum, counts the session while it lives and keeps one session's panic
// from ending the server.
func (s *Server) admit(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		s.mu.Lock()
		if len(s.live) >= s.cfg.MaxSessions {
			s.mu.Unlock()
			wish.Fatalln(sess, "bollhav: too many sessions; try again later")
			return
		}
		s.live[sess] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("a session panicked; the server goes on", "user", sess.User(), "panic", r)
				wish.Fatalln(sess, "bollhav: internal error; the session ends")
			}
			s.mu.Lock()
			delete(s.live, sess)
			s.mu.Unlock()
			s.wg.Done()
		}()
		next(sess)
	}
}

// program builds the session's tea.Program over its own engine.
func (s *Server) program(sess ssh.Session) *tea.Program {
	key := sess.PublicKey()
	role := s.cfg.Keys.RoleOf(key)
	if role == NoRole {
		// The key was removed between authentication and the session.
		wish.Fatalln(sess, "bollhav: your key is not authorized")
		return nil
	}
	e := *s.cfg.Engine
	e.ReadOnly = e.ReadOnly || role == Viewer
	e.Actor = Actor(sess.User(), key)
	ctx, cancel := context.WithCancel(s.ctx)
	go func() {
		<-sess.Context().Done()
		cancel()
	}()
	m, err := s.cfg.NewModel(ctx, &e, sess)
	if err != nil {
		cancel()
		wish.Fatalln(sess, "bollhav: "+err.Error())
		return nil
	}
	s.log.Info("session", "user", sess.User(), "role", role.String(), "key", gossh.FingerprintSHA256(key), "remote", sess.RemoteAddr().String())
	opts := append(wishtea.MakeOptions(sess), tea.WithContext(ctx))
	return tea.NewProgram(m, opts...)
}

// Actor names an SSH user for the audit log: "ssh:USER SHA256:…", the
// fingerprint of the key that authenticated.
func Actor(user string, key gossh.PublicKey) string {
	return "ssh:" + user + " " + gossh.FingerprintSHA256(key)
}
