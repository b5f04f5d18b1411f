package gen

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// The environment variables that scale the benchmarks built on the
// generator. A plain `go test -bench .` stays quick; scripts/bench sets
// the production scale (1,000 models, 1,000,000 units).
const (
	BenchUnitsEnvVar  = "BOLLHAV_BENCH_UNITS"
	BenchModelsEnvVar = "BOLLHAV_BENCH_MODELS"
	// BenchKeepEnvVar names a prefix for PostgreSQL fixtures kept between
	// runs (KeptSchema): a 10M-unit fixture takes 20 minutes to an hour
	// to generate here.
	BenchKeepEnvVar = "BOLLHAV_BENCH_KEEP"
)

// Defaults when the variables are unset.
const (
	DefaultBenchUnits  = 10_000
	DefaultBenchModels = 1000
)

// BenchUnits is the largest state a benchmark generates:
// BOLLHAV_BENCH_UNITS, or DefaultBenchUnits when it is unset or not a
// positive number.
func BenchUnits() int { return envInt(BenchUnitsEnvVar, DefaultBenchUnits) }

// BenchSizes are the sizes a cost-growth benchmark runs at: 10k, 100k and
// 1M units, up to BenchUnits.
func BenchSizes() []int {
	var out []int
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		if n <= BenchUnits() {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		out = []int{BenchUnits()}
	}
	return out
}

// SizeName names a size the way benchmark names carry it: "10k", "1M".
func SizeName(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1000 && n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// BenchConfig is the project a benchmark generates for units:
// BOLLHAV_BENCH_MODELS models (DefaultBenchModels when unset), seed 1.
func BenchConfig(units int) Config {
	return Config{Models: envInt(BenchModelsEnvVar, DefaultBenchModels), Units: units, Seed: 1}
}

// FixtureDSN returns a PostgreSQL DSN (URL or keyword form) that also sets
// synchronous_commit=off for its sessions: populating a fixture commits
// about 10,000 times per million units, and waiting for the disk on each
// would dominate. Use it only for stores whose data can be thrown away.
func FixtureDSN(dsn string) string {
	if strings.Contains(dsn, "://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return dsn
		}
		q := u.Query()
		q.Set("synchronous_commit", "off")
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " synchronous_commit=off"
}

// KeptSchema is the PostgreSQL schema a kept fixture of cfg lives in —
// BOLLHAV_BENCH_KEEP's prefix, then the project's size and seed — and
// false when the variable is unset (each benchmark generates a store of
// its own and drops it).
func KeptSchema(cfg Config) (string, bool) {
	// Lower case: a schema name folds to it unquoted.
	prefix := strings.ToLower(strings.TrimSpace(os.Getenv(BenchKeepEnvVar)))
	if prefix == "" {
		return "", false
	}
	return fmt.Sprintf("%s_m%d_u%d_s%d", prefix, cfg.Models, cfg.Units, cfg.Seed), true
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv(name))); err == nil && n > 0 {
		return n
	}
	return def
}
