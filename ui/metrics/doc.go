// Package metrics is what `bollhav serve --metrics ADDR` serves: Prometheus
// (and OpenMetrics) text at /metrics, /healthz and /readyz, for the alerting
// stack that pages the person who then opens bollhav.
//
// A scrape never reads the store: a Monitor keeps a snapshot of the gauges
// (units by status, blocked units, open incidents with what each holds, newest
// applied_at, freshness limits) refreshed in the background, and counts what
// the store's change feed shows happening (claims, retries, lease expiries,
// unit durations) and the runs that finish, from the moment it starts. So a
// scrape costs the same whether the store is SQLite on a laptop or a busy
// PostgreSQL, and an alerting stack that scrapes every few seconds adds no
// load to the store. docs/oncall.md lists every metric and what each
// counts; docs/BENCHMARKS.md has the scrape's cost at 1,000 models.
package metrics
