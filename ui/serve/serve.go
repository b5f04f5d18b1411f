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
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/ssh"
	"charm.land/wish/v2"
	"charm.land/wish/v2/activeterm"
	wishtea "charm.land/wish/v2/bubbletea"
	gossh "golang.org/x/crypto/ssh"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/ui/untrusted"
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
	live        map[ssh.Session]*sessionUI
	wg          sync.WaitGroup
	limit       *rateLog
	closed      bool           // Shutdown has begun; guarded by mu
	listeners   []net.Listener // closed by Shutdown; guarded by mu
	HostKeyPath string
	// HostKey is the host key's type and fingerprint as ssh shows them on
	// a first connection ("ssh-ed25519 SHA256:…"), which serve prints at
	// start so that the first ssh to it can be checked, not trusted blind.
	HostKey string
}

// refused logs a refused login attempt — at most once a minute per client
// address, with how many were held back — naming the address, the user
// name the client sent (sanitised) and what it offered.
func (s *Server) refused(addr net.Addr, user, offered, reason string) {
	ok, held := s.limit.allow("login "+addrText(addr), time.Now())
	if !ok {
		return
	}
	s.log.Warn("refused login", "remote", addrText(addr), "user", untrusted.UserName(user), "offered", offered, "reason", reason, "held_back", held)
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
	limit := newRateLog(time.Minute)
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = 32
	}
	log := cmp.Or(cfg.Log, slog.New(slog.DiscardHandler))
	signer, keyPath, err := LoadOrCreateHostKey(cfg.StateDir)
	if err != nil {
		return nil, err
	}
	// A line that breaks while serving grants nothing and is logged (once a
	// minute per problem); the file's other lines keep working.
	cfg.Keys.problems = func(err error) {
		if ok, held := limit.allow("keys "+err.Error(), time.Now()); ok {
			log.Warn("authorized keys: a line is ignored", "problem", err.Error(), "repeats", held)
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, log: log, ctx: ctx, stop: stop, live: map[ssh.Session]*sessionUI{}, HostKeyPath: keyPath, limit: limit,
		HostKey: signer.PublicKey().Type() + " " + gossh.FingerprintSHA256(signer.PublicKey())}
	srv, err := wish.NewServer(
		// The host key first: without one, wish writes a new id_ed25519
		// into the working directory.
		func(srv *ssh.Server) error { srv.AddHostKey(signer); return nil },
		wish.WithAddress(cfg.Addr),
		// A connection with no traffic at all is dropped; a session's
		// keepalives (keepAlive) are traffic, so this closes connections
		// that opened no session or whose client is gone. How long a
		// session may go without a key press is its UI's idle timeout,
		// which warns first and knows a session that is only watching.
		wish.WithIdleTimeout(transportIdle),
		// Public keys only: with no password or keyboard-interactive
		// handler, those methods are refused.
		wish.WithPublicKeyAuth(func(ctx ssh.Context, key ssh.PublicKey) bool {
			// Deciding here is safe only as a yes/no: the client may offer
			// keys it cannot sign for, so the role is looked up again from
			// the key the session actually authenticated with.
			g := cfg.Keys.Authorize(key, ctx.RemoteAddr(), time.Now())
			if g.Role == NoRole {
				reason := cmp.Or(g.Refusal, "the key is in no authorized keys file")
				s.refused(ctx.RemoteAddr(), ctx.User(), "publickey "+gossh.FingerprintSHA256(key), reason)
			}
			return g.Role != NoRole
		}),
		// Passwords and keyboard-interactive are not offered; a client
		// that tries them anyway is logged like a refused key.
		func(srv *ssh.Server) error {
			srv.ServerConfigCallback = func(ssh.Context) *gossh.ServerConfig {
				return &gossh.ServerConfig{AuthLogCallback: func(conn gossh.ConnMetadata, method string, err error) {
					if err != nil && method != "none" && method != "publickey" {
						s.refused(conn.RemoteAddr(), conn.User(), method, "only public keys are accepted")
					}
				}}
			}
			return nil
		},
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

// Serve accepts connections on l until Shutdown. l is closed by Shutdown
// even when Shutdown comes first: the ssh server tracks a listener only
// once its accept loop runs, and a Shutdown in between would otherwise
// leave that loop accepting forever.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = l.Close()
		return nil
	}
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	err := s.srv.Serve(l)
	if errors.Is(err, ssh.ErrServerClosed) {
		return nil
	}
	return err
}

// goodbye is what every session reads when the server stops.
const goodbye = "\r\nbollhav is shutting down; goodbye.\r\n"

// uiExitGrace is how long Shutdown waits for the sessions' UIs to give
// their terminals back before it writes the goodbye over them.
const uiExitGrace = 2 * time.Second

// clientHangUpGrace is how long Shutdown lets clients close their
// connections after their sessions ended.
const clientHangUpGrace = time.Second

// Shutdown stops every session's UI (their engine work finishes or releases
// its claims as its context ends), tells each session goodbye once its UI
// has left the screen, and closes the server, waiting at most until ctx
// ends.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	for _, l := range s.listeners {
		_ = l.Close()
	}
	s.mu.Unlock()
	s.stop()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	grace := time.NewTimer(uiExitGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		// A UI that has not let go of its terminal by now still gets its
		// goodbye, written over it, so nobody is left staring at a screen
		// that no longer answers.
		s.mu.Lock()
		live := make([]ssh.Session, 0, len(s.live))
		for sess := range s.live {
			live = append(live, sess)
		}
		s.mu.Unlock()
		for _, sess := range live {
			// Never under mu, and never on this goroutine: a client that
			// stopped reading blocks the write until srv.Close below.
			go func() { _, _ = fmt.Fprint(sess, goodbye) }()
		}
		select {
		case <-done:
		case <-ctx.Done():
		}
	case <-ctx.Done():
	}
	// The sessions have ended (or ctx gave up on them). Let the clients
	// hang up first, for a moment: closing a connection whose last packets
	// the server has not read resets it, and a reset can discard the
	// goodbye the client has not read yet. A client that keeps its
	// connection open is then closed anyway.
	lctx, cancel := context.WithTimeout(ctx, clientHangUpGrace)
	defer cancel()
	_ = s.srv.Shutdown(lctx)
	return s.srv.Close()
}

// admit is the outermost middleware: it refuses sessions beyond the
// maximum, counts the session while it lives and keeps one session's panic
// from ending the server.
func (s *Server) admit(next ssh.Handler) ssh.Handler {
	return func(sess ssh.Session) {
		s.mu.Lock()
		if s.closed {
			// A session opened on a connection that outlived the listeners
			// (a multiplexed client): Shutdown is already waiting on wg.
			s.mu.Unlock()
			wish.Fatalln(sess, strings.TrimSpace(goodbye))
			return
		}
		if len(s.live) >= s.cfg.MaxSessions {
			s.mu.Unlock()
			wish.Fatalln(sess, "bollhav: too many sessions; try again later")
			return
		}
		s.live[sess] = &sessionUI{}
		s.wg.Add(1)
		s.mu.Unlock()
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("a session panicked; the server goes on", "user", sess.User(), "panic", r)
				wish.Fatalln(sess, "bollhav: internal error; the session ends")
			}
			s.mu.Lock()
			ui := s.live[sess]
			delete(s.live, sess)
			closing := s.closed
			s.mu.Unlock()
			ui.end(s.log)
			switch {
			case closing:
				// Written after the UI restored the terminal: written
				// before, the restore of the alternate screen wipes it.
				_, _ = fmt.Fprint(sess, goodbye)
			case ui.reason() != "":
				_, _ = fmt.Fprint(sess, "\r\nbollhav: "+ui.reason()+".\r\n")
			}
			s.wg.Done()
		}()
		next(sess)
	}
}

// program builds the session's tea.Program over its own engine.
func (s *Server) program(sess ssh.Session) *tea.Program {
	key := sess.PublicKey()
	g := s.cfg.Keys.Authorize(key, sess.RemoteAddr(), time.Now())
	role := g.Role
	switch {
	case role == NoRole:
		// The key was removed (or expired) between authentication and
		// the session.
		wish.Fatalln(sess, "bollhav: your key is not authorized")
		return nil
	case g.NoPTY:
		wish.Fatalln(sess, "bollhav: this key may not open a terminal (no-pty or restrict in its authorized_keys line), and the UI needs one")
		return nil
	}
	sess.Context().SetValue(roleKey{}, role)
	e := s.cfg.Engine.As(Actor(sess.User(), key), s.cfg.Engine.ReadOnly() || role == Viewer)
	ctx, cancel := context.WithCancel(s.ctx)
	go func() {
		// sess.Context() is the connection's: it outlives this session when
		// the client multiplexes, so also stop when the session's UI ends.
		select {
		case <-sess.Context().Done():
		case <-ctx.Done():
		}
		cancel()
	}()
	m, err := s.cfg.NewModel(ctx, e, sess)
	if err != nil {
		cancel()
		wish.Fatalln(sess, "bollhav: "+err.Error())
		return nil
	}
	if conn, ok := sess.Context().Value(ssh.ContextKeyConn).(gossh.Conn); ok {
		go keepAlive(ctx, conn, keepAliveEvery)
	}
	s.mu.Lock()
	if ui := s.live[sess]; ui != nil {
		ui.model, ui.cancel = m, cancel
	}
	s.mu.Unlock()
	s.log.Info("session", "user", untrusted.UserName(sess.User()), "role", role.String(), "key", gossh.FingerprintSHA256(key), "remote", sess.RemoteAddr().String())
	// The server owns the process's signals: a session's program must not
	// take the server's SIGTERM for its own and quit before Shutdown has
	// marked the server closing (its session would then end without the
	// goodbye); Shutdown stops every program through ctx instead — by
	// quitting it, not by cancelling it: a cancelled program's Run returns
	// the context's error, which the SSH middleware logs at error level for
	// every session a normal shutdown ends.
	p := tea.NewProgram(m, append(wishtea.MakeOptions(sess), tea.WithoutSignalHandler())...)
	go func() {
		<-ctx.Done() // cancelled when the session ends, too
		p.Quit()
	}()
	return p
}

// roleKey is the session context's key of the role its key was given.
type roleKey struct{}

// SessionRole is the role the session's key was given (NoRole before the
// session's UI is built), for a UI that says who its user is.
func SessionRole(sess ssh.Session) Role {
	r, _ := sess.Context().Value(roleKey{}).(Role)
	return r
}

// SessionUser is the session's user name as the client sent it, cleaned
// for the screen (untrusted.UserName).
func SessionUser(sess ssh.Session) string { return untrusted.UserName(sess.User()) }

// Actor names an SSH session for the audit log: "ssh:SHA256:… USER". The
// fingerprint of the key that authenticated comes first because it is the
// verified part; the user name is whatever the client sent, so it comes
// second, cleaned, and quoted when it holds anything but a plain name — a
// user called "carol SHA256:<someone else's>" cannot pass for that key.
func Actor(user string, key gossh.PublicKey) string {
	return "ssh:" + gossh.FingerprintSHA256(key) + " " + untrusted.UserName(user)
}
