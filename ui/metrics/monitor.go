package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/bollhav/bollhav/engine"
	"github.com/bollhav/bollhav/engine/gate"
	"github.com/bollhav/bollhav/engine/tick"
	"github.com/bollhav/bollhav/state"
)

// Defaults of Config.
const (
	// DefaultFeedPoll is how often the change feed is read: the counters
	// lag the store by at most this.
	DefaultFeedPoll = time.Second
	// DefaultInterval is how often the gauges are refreshed when the feed
	// showed a change: a gauge lags the store by at most this.
	DefaultInterval = 5 * time.Second
	// DefaultFullEvery is how often every model is read again whether or
	// not the feed named it: registrations (apply) are not in the feed.
	DefaultFullEvery = time.Minute
	// readTimeout bounds each refresh's reads, so a hung store delays a
	// refresh instead of stopping the loop for good.
	readTimeout = 30 * time.Second
)

// Config is what a Monitor watches and how often.
type Config struct {
	// Engine is the store and spec to watch, in its environment.
	Engine *engine.Engine
	// FeedPoll, Interval and FullEvery: DefaultFeedPoll, DefaultInterval
	// and DefaultFullEvery when zero.
	FeedPoll, Interval, FullEvery time.Duration
	// Incidents reads the open incidents; when nil, Engine.IncidentsReport
	// (what `bollhav incidents` reports). It
	// is called by the refresh, in the background, never by a scrape;
	// tests replace it.
	Incidents func(ctx context.Context) (*gate.IncidentReport, error)
	// Version is reported by bollhav_build_info.
	Version string
	// Log hears the refresh's failures; nothing is logged when nil.
	Log *slog.Logger
}

// Monitor keeps the snapshot a scrape reads and the counters the change
// feed drives. NewMonitor takes the first snapshot; Run keeps it fresh.
type Monitor struct {
	cfg Config
	e   *engine.Engine
	reg *prometheus.Registry

	snap atomic.Pointer[snapshot]
	// schemaVersion is the store's migration version when the Monitor
	// started: /readyz is not ready once the store is at another.
	schemaVersion int

	// mu serialises steps: Run's loop and a test's Refresh.
	mu          sync.Mutex
	after       int64
	obs         *observer
	runs        *runObserver
	lastGauges  time.Time
	lastFull    time.Time
	needFull    bool
	storeErrors *prometheus.CounterVec
	// failing is whether the last step failed: the log hears the first
	// failure and the recovery, not one line per second while a store is
	// down (bollhav_store_errors_total counts every one).
	failing bool
}

// NewMonitor reads where the change feed ends (counting starts there), the
// store's schema version and the first snapshot. It fails only when the
// store cannot be read.
func NewMonitor(ctx context.Context, cfg Config) (*Monitor, error) {
	if cfg.FeedPoll <= 0 {
		cfg.FeedPoll = DefaultFeedPoll
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.FullEvery <= 0 {
		cfg.FullEvery = DefaultFullEvery
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	m := &Monitor{cfg: cfg, e: cfg.Engine, reg: prometheus.NewRegistry()}
	rctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	var err error
	if m.schemaVersion, err = m.e.SchemaVersion(rctx); err != nil {
		return nil, fmt.Errorf("reading the state store's schema version: %w", err)
	}
	if m.after, err = m.e.LatestChangeSeq(rctx); err != nil {
		return nil, fmt.Errorf("reading the state store's change feed: %w", err)
	}
	m.register(time.Now())
	if err := m.refreshGauges(rctx, true); err != nil {
		return nil, fmt.Errorf("reading the state store: %w", err)
	}
	return m, nil
}

// register creates the counters and histograms and registers every
// collector on the Monitor's own registry (not the global one: two
// Monitors in one test process must not collide).
func (m *Monitor) register(started time.Time) {
	// Every family about a model carries model and pipeline, as the
	// gauges do, so a rule joins them on (model, pipeline) and sums by
	// pipeline alike; a run, of a pipeline or of named models, carries
	// pipeline only.
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	claims := counter("bollhav_unit_claims_total",
		"Units claimed to run (pending to running), by any worker or run on the store, since this process started.", "model", "pipeline")
	retries := counter("bollhav_unit_retries_total",
		"Failed tries sent back to pending by the model's retry budget (they run again after a backoff), since this process started.", "model", "pipeline")
	expiries := counter("bollhav_lease_expiries_total",
		"Running units returned to pending without an outcome: leases that expired (their worker died or hung), and units a stopping run or worker handed back unrun, since this process started.", "model", "pipeline")
	m.storeErrors = counter("bollhav_store_errors_total",
		"Failed reads of the state store by the metrics refresh, by what it was reading (kind: "+listOf(storeErrorKinds)+"). The gauges keep their last good values meanwhile.", "kind")
	unitDuration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "bollhav_unit_duration_seconds",
		Help: "Time from a unit's claim to its outcome (status: " + listOf(unitOutcomes) +
			"; retry is a failed try with tries left), for units claimed since this process started.",
		Buckets: prometheus.ExponentialBuckets(0.5, 4, 9), // 0.5 s … 9 h
	}, []string{"model", "pipeline", "status"})
	runDuration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "bollhav_run_duration_seconds",
		Help: "Duration of runs (bollhav run, or a run started from the UI) that finished since this process started, by pipeline (empty for a run of named models) and final status (" +
			listOf(finishedRuns) + ").",
		Buckets: prometheus.ExponentialBuckets(1, 4, 9), // 1 s … 18 h
	}, []string{"pipeline", "status"})
	m.obs = newObserver(m.e.Env().Suffix, m.pipelineOf, claims, retries, expiries, unitDuration)
	for _, kind := range storeErrorKinds {
		m.storeErrors.WithLabelValues(kind) // 0 until the first failure, so rate() sees it start
	}
	m.runs = newRunObserver(started, runDuration)
	m.reg.MustRegister(claims, retries, expiries, m.storeErrors, unitDuration, runDuration,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "bollhav_build_info",
			Help:        "Always 1; its labels name the bollhav version and the Go version it was built with.",
			ConstLabels: prometheus.Labels{"version": m.cfg.Version, "goversion": runtime.Version()}}, func() float64 { return 1 }),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// Gatherer is what /metrics serves: the snapshot's gauges and the
// registry's counters, histograms and process metrics.
func (m *Monitor) Gatherer() prometheus.Gatherer { return gatherer{m} }

// storeErrorKinds are the reads a refresh makes, the kinds of
// bollhav_store_errors_total.
var storeErrorKinds = []string{"feed", "units", "status", "registry", "incidents", "runs"}

// unitOutcomes are the statuses of bollhav_unit_duration_seconds: how an
// attempt ended (observer.finish).
var unitOutcomes = []string{string(state.Applied), string(state.Failed), string(state.Blocked), "retry"}

// finishedRuns are the statuses a run ends in, those of
// bollhav_run_duration_seconds.
var finishedRuns = slices.DeleteFunc(slices.Clone(state.RunStatuses), func(s state.RunStatus) bool { return s == state.RunRunning })

// pipelineOf names a model's pipeline as the snapshot knows it, else as
// the spec defines it (a model registered since the last full refresh).
func (m *Monitor) pipelineOf(model string) string {
	if s := m.snap.Load(); s != nil {
		if i, ok := findModel(s.models, model); ok {
			return s.models[i].pipeline
		}
	}
	if sm := m.e.Spec().Model(model); sm != nil {
		return sm.Pipeline
	}
	return ""
}

// Run keeps the Monitor current until ctx ends: it reads the change feed
// every FeedPoll, and refreshes the gauges every Interval when the feed
// named a model (every FullEvery in any case).
func (m *Monitor) Run(ctx context.Context) {
	tick.Every(ctx, m.cfg.FeedPoll, func() bool {
		m.step(ctx, false)
		return true
	})
}

// Refresh reads the feed and every model now, whatever the intervals: what
// a test calls instead of waiting for Run. It returns the first failure.
func (m *Monitor) Refresh(ctx context.Context) error {
	return m.step(ctx, true)
}

func (m *Monitor) step(ctx context.Context, force bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	var first error
	note := func(kind string, err error) {
		if err == nil || ctx.Err() != nil {
			return
		}
		m.storeErrors.WithLabelValues(kind).Inc()
		if first == nil {
			first = err
			if !m.failing {
				m.cfg.Log.Warn("metrics: reading the state store failed; the gauges keep their last values", "reading", kind, "err", err)
			}
		}
	}
	defer func() {
		if first == nil && m.failing {
			m.cfg.Log.Info("metrics: reading the state store works again")
		}
		m.failing = first != nil
	}()
	note("feed", m.drain(rctx))
	note("units", m.obs.classify(rctx, m.e.ScanStoredUnits))
	now := time.Now()
	full := force || m.needFull || now.Sub(m.lastFull) >= m.cfg.FullEvery
	if full || (len(m.obs.dirty) > 0 && now.Sub(m.lastGauges) >= m.cfg.Interval) {
		if err := m.refreshGauges(rctx, full); err != nil {
			note(refreshKind(err), err)
			// Try again after Interval, not on every feed poll.
			m.lastGauges = now
			if full {
				m.lastFull = now.Add(m.cfg.Interval - m.cfg.FullEvery)
			}
		}
		runs, err := m.e.Runs(rctx, runsRead)
		note("runs", err)
		if err == nil {
			// Runs going on, however old: a long backfill overtaken by
			// many newer runs is still followed to its end.
			var going []state.Run
			if going, err = m.e.UnfinishedRuns(rctx); err == nil {
				runs = append(runs, going...)
				err = m.runs.observe(rctx, runs, m.e.RunRecord)
			}
			note("runs", err)
		}
	}
	return first
}

// drain reads the feed from where it was left to its end.
func (m *Monitor) drain(ctx context.Context) error {
	const batch = 1000
	for {
		cs, err := m.e.Changes(ctx, m.after, batch)
		if err != nil {
			return err
		}
		for _, c := range cs {
			if c.Seq > m.after {
				m.obs.see(c)
				m.after = c.Seq
			}
		}
		if len(cs) < batch {
			return nil
		}
	}
}

// refreshError names which read of a refresh failed, for the store errors'
// kind label.
type refreshError struct {
	kind string
	err  error
}

func (e *refreshError) Error() string { return e.err.Error() }
func (e *refreshError) Unwrap() error { return e.err }

func refreshKind(err error) string {
	if re, ok := err.(*refreshError); ok {
		return re.kind
	}
	return "status"
}

// modelLines is every model's line of the snapshot (full), or the old
// snapshot's with the models the feed named since read again; a model the
// snapshot does not know (registered since) makes it a full read. full
// reports which it was. The blocked units by model are the kept counts,
// as status has them.
func (m *Monitor) modelLines(ctx context.Context, full bool) ([]modelSnap, bool, error) {
	e := m.e
	old := m.snap.Load()
	if old != nil && !full {
		models := append([]modelSnap(nil), old.models...)
		for name := range m.obs.dirty {
			i, ok := findModel(models, name)
			if !ok {
				return m.modelLines(ctx, true)
			}
			st, err := e.ModelStats(ctx, name)
			if err != nil {
				return nil, false, &refreshError{"status", fmt.Errorf("counting the units of %s: %w", name, err)}
			}
			models[i] = models[i].withStats(st)
		}
		return models, false, nil
	}
	sts, err := e.Status(ctx)
	if err != nil {
		return nil, true, &refreshError{"status", err}
	}
	models := make([]modelSnap, 0, len(sts))
	for _, st := range sts {
		models = append(models, modelFromStatus(st))
	}
	sortModels(models)
	recs, err := e.Models(ctx)
	if err != nil {
		return nil, true, &refreshError{"registry", err}
	}
	limits := freshnessLimits(e, recs)
	for i := range models {
		models[i].freshLimit = limits[models[i].name]
		m.obs.zero(models[i].name, models[i].pipeline)
	}
	return models, true, nil
}

// refreshGauges builds and publishes a new snapshot: every model (full),
// or only the models the feed named since the last refresh. On a failure
// the old snapshot stays and the named models stay due.
func (m *Monitor) refreshGauges(ctx context.Context, full bool) error {
	// The incidents come from the store's grouped, paged reads (the
	// refresh never holds every blocked unit, issue 33), read beside the
	// models' lines: the two share nothing, and at 10M units the lines
	// are a fifth of a refresh. The report is always waited for, so its
	// read never outlives the refresh.
	count := m.cfg.Incidents
	if count == nil {
		count = m.e.IncidentsReport
	}
	type answer struct {
		rep *gate.IncidentReport
		err error
	}
	report := make(chan answer, 1)
	go func() {
		rep, err := count(ctx)
		report <- answer{rep, err}
	}()
	models, full, err := m.modelLines(ctx, full)
	got := <-report
	if err != nil {
		return err
	}
	if got.err != nil {
		return &refreshError{"incidents", got.err}
	}
	rep := got.rep
	now := time.Now()
	snap := &snapshot{models: models, incidents: rep, at: now}
	snap.buildFamilies()
	m.snap.Store(snap)
	clear(m.obs.dirty)
	m.lastGauges, m.needFull = now, false
	if full {
		m.lastFull = now
	}
	return nil
}

// findModel finds name in models, which are sorted by name.
func findModel(models []modelSnap, name string) (int, bool) {
	lo, hi := 0, len(models)
	for lo < hi {
		mid := (lo + hi) / 2
		if models[mid].name < name {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(models) && models[lo].name == name
}

// schemaVersionNow reads the store's schema version, for /readyz.
func (m *Monitor) schemaVersionNow(ctx context.Context) (int, error) {
	return m.e.SchemaVersion(ctx)
}

// backend names the store's kind ("sqlite", "postgres") for messages that
// must not name its DSN.
func (m *Monitor) backend() string { return m.e.Backend() }
