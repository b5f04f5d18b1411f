package metrics

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// readyTimeout bounds /readyz's read of the store: a probe that hangs is
// worse than one that says "not ready".
const readyTimeout = 3 * time.Second

// healthz answers that the process is up and serving HTTP; it reads
// nothing, so a slow store never gets a live process restarted.
func healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, "ok")
}

// readyz answers whether the store can be read and is at the schema
// version this process started with (a newer bollhav migrating it
// meanwhile means this one no longer knows its tables). The reason for a
// 503 is one line naming the store's kind, never its DSN; the error itself
// goes to the log.
func (m *Monitor) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	v, err := m.schemaVersionNow(ctx)
	switch {
	case err != nil:
		m.cfg.Log.Warn("readyz: the state store cannot be read", "backend", m.backend(), "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: the %s state store cannot be read\n", m.backend())
	case v > m.schemaVersion:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: the %s state store is at schema version %d, newer than the %d this bollhav knows; upgrade bollhav\n",
			m.backend(), v, m.schemaVersion)
	case v < m.schemaVersion:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "not ready: the %s state store is at schema version %d, older than the %d it had when bollhav started\n",
			m.backend(), v, m.schemaVersion)
	default:
		fmt.Fprintln(w, "ready")
	}
}
