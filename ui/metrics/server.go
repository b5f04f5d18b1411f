package metrics

import (
	"context"
	"errors"
	"log"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Server is the HTTP side of `serve --metrics`: /metrics, /healthz and
// /readyz on one listener.
type Server struct {
	srv *http.Server
}

// Handler routes /metrics (Prometheus text, or OpenMetrics when the scraper
// asks for it), /healthz and /readyz; anything else is 404.
func (m *Monitor) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", gzipFast(promhttp.HandlerFor(m.Gatherer(), promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		// gzipFast compresses, faster than promhttp's default level.
		DisableCompression: true,
		ErrorLog:           slog.NewLogLogger(m.cfg.Log.Handler(), slog.LevelWarn),
		// A collector error (there should be none: the snapshot is in
		// memory) still serves the rest.
		ErrorHandling: promhttp.ContinueOnError,
	})))
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("GET /readyz", m.readyz)
	return mux
}

// NewServer serves m's handler. Timeouts keep a slow or idle client from
// holding a connection forever.
func NewServer(m *Monitor) *Server {
	return &Server{srv: &http.Server{
		Handler:           m.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          log.New(slogWriter{m.cfg.Log}, "", 0),
	}}
}

// Serve answers on l until Shutdown; it returns nil after a Shutdown.
func (s *Server) Serve(l net.Listener) error {
	if err := s.srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting and waits for the requests in flight, until ctx
// ends.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// slogWriter turns net/http's log lines into warnings of the serve log.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.l.Warn("metrics http: " + string(trimNewline(p)))
	return len(p), nil
}

func trimNewline(p []byte) []byte {
	for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
		p = p[:len(p)-1]
	}
	return p
}
