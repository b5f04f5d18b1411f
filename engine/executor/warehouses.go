package executor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/bollhav/bollhav/engine/spec"
	"github.com/bollhav/bollhav/state"
)

// Warehouses holds one open connection pool per warehouse a model's
// connection names, opened on first use and shared by every model and run
// that names the same DSN: a run of 500 units opens one pool, not 500.
// It is safe for concurrent use.
//
// The executor knows no backend: whoever builds a Warehouses (the CLI, the
// composition root, with the backends of state/stores; a test with its
// own) gives it Open and Locate, hands it to the engine, and closes it when
// the process is done with it. The engine never closes it.
type Warehouses struct {
	// Getenv reads a connection's variable; os.Getenv when nil.
	Getenv func(string) string
	// Open opens a warehouse by DSN. Nil refuses every model on a
	// connection: there is no backend to open it with.
	Open func(ctx context.Context, dsn string) (state.Warehouse, error)
	// Locate reads where a DSN points without connecting, for Where. Nil
	// leaves the location unknown.
	Locate func(dsn string) (state.Location, error)

	mu    sync.Mutex
	byDSN map[string]state.Warehouse
}

// ErrNoWarehouses is a model on a connection run by an engine that was
// given no way to open a warehouse (no Warehouses, or one without Open).
var ErrNoWarehouses = errors.New("no warehouse opener: this engine was built without one")

// ErrConnectionEnv is a connection whose environment variable is unset or
// empty: nothing can run on it, and the CLI exits 2 naming the variable.
var ErrConnectionEnv = errors.New("connection environment variable not set")

// CheckConnections refuses, before anything runs, models whose connection
// names an environment variable that is unset or empty. Each model's
// variable is named once, in the models' order.
func CheckConnections(models []*spec.Model, getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	var missing []string
	users := map[string][]string{}
	for _, m := range models {
		if m.Connection == nil || !spec.IsDataRun(m) {
			continue
		}
		v := m.Connection.DSNEnvVar
		if strings.TrimSpace(getenv(v)) == "" {
			if users[v] == nil {
				missing = append(missing, v)
			}
			users[v] = append(users[v], m.Name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	parts := make([]string, len(missing))
	for i, v := range missing {
		parts[i] = fmt.Sprintf("$%s is not set or empty (the connection of %s)", v, listNames(users[v]))
	}
	return fmt.Errorf("%w: %s: set it to the warehouse's DSN", ErrConnectionEnv, strings.Join(parts, "; "))
}

func listNames(names []string) string {
	if len(names) > 3 {
		return strings.Join(names[:3], ", ") + fmt.Sprintf(" and %d more", len(names)-3)
	}
	return strings.Join(names, ", ")
}

// Get returns the warehouse the connection c names, opening it on first
// use. A failed open is not remembered: the next unit tries again, so a
// warehouse that comes back is used without a restart. A nil w, or one
// without Open, returns ErrNoWarehouses.
func (w *Warehouses) Get(ctx context.Context, c *spec.Connection) (state.Warehouse, error) {
	if w == nil || w.Open == nil {
		return nil, fmt.Errorf("warehouse $%s: %w", c.DSNEnvVar, ErrNoWarehouses)
	}
	getenv := w.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	dsn := strings.TrimSpace(getenv(c.DSNEnvVar))
	if dsn == "" {
		return nil, fmt.Errorf("%w: $%s is not set or empty: set it to the warehouse's DSN", ErrConnectionEnv, c.DSNEnvVar)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if wh := w.byDSN[dsn]; wh != nil {
		return wh, nil
	}
	wh, err := w.Open(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("warehouse $%s: %w", c.DSNEnvVar, err)
	}
	if w.byDSN == nil {
		w.byDSN = map[string]state.Warehouse{}
	}
	w.byDSN[dsn] = wh
	return wh, nil
}

// Close closes every pool opened so far. It is for whoever built w; a nil
// w has nothing to close.
func (w *Warehouses) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var errs []error
	for dsn, wh := range w.byDSN {
		errs = append(errs, wh.Close())
		delete(w.byDSN, dsn)
	}
	return errors.Join(errs...)
}

// Where says where a model's data lives, for status and why: "the state
// store's database", or its connection's variable and the driver, host and
// database its DSN names (read by w.Locate, not connected to; never the
// user or the password). A nil w, or one without Locate, reads the
// variable with os.Getenv and leaves the location unknown.
func (w *Warehouses) Where(m *spec.Model) DataHome {
	if m == nil || m.Connection == nil {
		return DataHome{}
	}
	getenv := os.Getenv
	if w != nil && w.Getenv != nil {
		getenv = w.Getenv
	}
	h := DataHome{EnvVar: m.Connection.DSNEnvVar}
	dsn := strings.TrimSpace(getenv(h.EnvVar))
	if dsn == "" {
		h.Problem = "not set"
		return h
	}
	if w == nil || w.Locate == nil {
		h.Problem = "location unknown"
		return h
	}
	loc, err := w.Locate(dsn)
	if err != nil {
		h.Problem = "unreadable DSN"
		return h
	}
	h.Location = loc
	return h
}

// DataHome is where a model's data lives.
type DataHome struct {
	// EnvVar is the connection's variable; "" for the state store's
	// database.
	EnvVar   string
	Location state.Location
	// Problem is why Location is unknown: "not set", "unreadable DSN",
	// "location unknown" (no Locate).
	Problem string
}

// String reads "the state store's database" or
// "$SHOP_WAREHOUSE_DSN (postgres 127.0.0.1:5432/shop)".
func (h DataHome) String() string {
	switch {
	case h.EnvVar == "":
		return "the state store's database"
	case h.Problem != "":
		return "$" + h.EnvVar + " (" + h.Problem + ")"
	}
	return "$" + h.EnvVar + " (" + h.Location.String() + ")"
}
