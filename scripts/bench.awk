# bench.awk turns `go test -bench` output into scripts/bench's table.
# ratio is always value/floor; the goal says which side of it is good.

function human(ns) {
  if (ns >= 1e9) return sprintf("%.2f s", ns / 1e9)
  if (ns >= 1e6) return sprintf("%.1f ms", ns / 1e6)
  if (ns >= 1e3) return sprintf("%.1f µs", ns / 1e3)
  return sprintf("%.0f ns", ns)
}

# verdict prints "met" or "MISSED" for a goal "<= limit" (le=1) or ">= limit".
function verdict(x, limit, le) {
  if (x == "") return "?"
  if (le) return (x <= limit) ? "met" : "MISSED"
  return (x >= limit) ? "met" : "MISSED"
}

BEGIN {
  printf "%-58s %12s %12s %8s  %-30s %s\n", "figure", "value", "floor", "ratio", "goal", ""
}

# RunMemory (issue 21, from scripts/runmemory): the larger peak RSS of two
# bounded runs over the backlog, fresh (plan + prefill) and pending.
/^BenchmarkRunMemory/ {
  name = $1
  sub(/^Benchmark/, "", name)
  delete m
  for (i = 3; i < NF; i += 2) m[$(i + 1)] = $i
  printf "%-58s %12s %12s %8s  %-30s %s\n", name, sprintf("%.0f MB", m["peak-MB"]), "", "",
    sprintf("<= 200 MB peak RSS (fresh %.0f, pending %.0f)", m["fresh-MB"], m["pending-MB"]), verdict(m["peak-MB"], 200, 1)
  next
}

# BigSpecMemory (issue 35, from scripts/bigspecmemory): peak RSS of apply
# (the larger of a first apply and a second over the registry it made) and
# of a short run over a generated spec of 60,000 models.
/^BenchmarkBigSpecMemory/ {
  name = $1
  sub(/^Benchmark/, "", name)
  delete m
  for (i = 3; i < NF; i += 2) m[$(i + 1)] = $i
  if (name ~ /\/apply$/)
    goal = sprintf("<= 300 MB peak RSS (fresh %.0f, again %.0f)", m["fresh-MB"], m["again-MB"])
  else
    goal = sprintf("<= 300 MB peak RSS (%d units, %.0f u/s)", m["applied"], m["units/s"])
  printf "%-58s %12s %12s %8s  %-30s %s\n", name, sprintf("%.0f MB", m["peak-MB"]), "", "", goal, verdict(m["peak-MB"], 300, 1)
  next
}

/^Benchmark/ {
  name = $1
  sub(/^Benchmark/, "", name)
  sub(/-[0-9]+$/, "", name)
  delete m
  for (i = 3; i < NF; i += 2) m[$(i + 1)] = $i
  value = ""; floor = ""; ratio = ""; goal = "—"; ok = ""

  if (name ~ /^BlockedCLI/) {
    # Issue 33: `bollhav blocked` as a process, exec to its first line
    # (the first page, ranked) beside Engine.Blocked's whole read of the
    # same store in the benchmark's process, then the child's peak RSS.
    v = m["first-line-s"] * 1e9; value = human(v)
    floor = human(m["full-read-s"] * 1e9); ratio = sprintf("%.2f", m["first-line-s"] / m["full-read-s"])
    goal = sprintf("<= 2 s first page (all %s)", human(m["all-s"] * 1e9)); ok = verdict(v, 2e9, 1)
    printf "%-58s %12s %12s %8s  %-30s %s\n", name "/first-line", value, floor, ratio, goal, ok
    printf "%-58s %12s %12s %8s  %-30s %s\n", name "/peak-rss", sprintf("%.0f MB", m["peak-MB"]), "", "", sprintf("<= 300 MB peak RSS (%d blocked)", m["blocked-units"]), verdict(m["peak-MB"], 300, 1)
    if ("incidents-s" in m) {
      v = m["incidents-s"] * 1e9
      printf "%-58s %12s %12s %8s  %-30s %s\n", name "/incidents", human(v), "", "", "<= 2 s, the whole report", verdict(v, 2e9, 1)
    }
    if ("refresh-s" in m) {
      v = m["refresh-s"] * 1e9
      printf "%-58s %12s %12s %8s  %-30s %s\n", name "/metrics-refresh", human(v), "", "", sprintf("<= 2 s (heap +%.0f MB, <= 300)", m["refresh-heap-MB"]), (v <= 2e9 && m["refresh-heap-MB"] <= 300) ? "met" : "MISSED"
    }
    name = name "/incidents-peak-rss"; value = sprintf("%.0f MB", m["incidents-peak-MB"]); floor = ""; ratio = ""
    goal = "<= 300 MB peak RSS"; ok = verdict(m["incidents-peak-MB"], 300, 1)
  } else if (name ~ /^(Engine|Warehouse)Throughput/) {
    value = sprintf("%.0f u/s", m["units/s"])
    if ("floor-tps" in m) {
      floor = sprintf("%.0f tps", m["floor-tps"])
      r = m["units/s"] / m["floor-tps"]; ratio = sprintf("%.2f", r)
      limit = (name ~ /models=1000/) ? 2 : 0.5
      goal = ">= " limit "x pgbench TPS"; ok = verdict(r, limit, 0)
    }
  } else if (name ~ /^LiveLatency/) {
    v = ("p50-ns" in m) ? m["p50-ns"] : m["ns/op"]
    value = human(v)
    limit = (name ~ /postgres/) ? 250e6 : 1e9
    goal = "<= " human(limit) " (p50)"; ok = verdict(v, limit, 1)
    if ("max-ns" in m) goal = goal ", max " human(m["max-ns"])
  } else if (name ~ /^StoreCopy/) {
    # Issue 35: `bollhav store copy` of the whole state, SQLite into an
    # empty PostgreSQL schema (a move's direction) and back (a snapshot's).
    value = human(m["ns/op"])
    goal = sprintf("< 60 s (%.0f units/s)", m["units/s"]); ok = verdict(m["ns/op"], 60e9, 1)
  } else if (name ~ /^Populate/) {
    # Issue 33: making a benchmark fixture (gen.Populate into an empty
    # store: one bulk copy). The goal is 10 minutes for 10M units,
    # prorated to the fixture's size.
    value = human(m["ns/op"]); units = m["units/s"] * m["s/fixture"]
    limit = 600e9 * units / 1e7
    goal = sprintf("< %s (10 min at 10M; %.0f units/s)", human(limit), m["units/s"]); ok = verdict(m["ns/op"], limit, 1)
  } else if (name ~ /^UpgradeLock/) {
    # Issue 35: the longest a worker's write waited while the store was
    # upgraded from version 7, beside its slowest write before the upgrade.
    # build=in-transaction is the earlier releases' upgrade, for reference.
    if (!("max-write-wait-ms" in m)) next
    v = m["max-write-wait-ms"] * 1e6; value = human(v)
    floor = human(m["write-floor-ms"] * 1e6)
    if (m["write-floor-ms"] > 0) ratio = sprintf("%.1f", m["max-write-wait-ms"] / m["write-floor-ms"])
    # Lock waits: how often the writer was seen (every 5 ms) waiting on a
    # lock rather than on the disk.
    locks = sprintf("%d lock-wait samples", m["lock-wait-samples/op"])
    if (name ~ /build=concurrent/) { goal = sprintf("< 1 s (upgrade %.1f s, %s)", m["upgrade-s"], locks); ok = verdict(v, 1e9, 1) }
    else goal = sprintf("— before (upgrade %.1f s, %s)", m["upgrade-s"], locks)
  } else if (name ~ /^IncrementalGate/) {
    # A batch of 100 changed units to updated verdicts (median of the
    # batches), beside the full sweep of the same store in the same run.
    v = m["p50-ns"]; value = human(v)
    floor = human(m["floor-ns/op"]); r = v / m["floor-ns/op"]; ratio = sprintf("%.3f", r)
    goal = "<= 20 ms, >= 50x sweep (<= 0.02)"
    ok = (verdict(v, 20e6, 1) == "met" && verdict(r, 0.02, 1) == "met") ? "met" : "MISSED"
  } else if (name ~ /^UIScale/ && name ~ /launch/) {
    # The whole program, exec to the first frame with data, and the
    # child's own peak RSS: two rows.
    v = m["launch-ns"]; value = human(v); goal = "<= 1 s (exec to data)"; ok = verdict(v, 1e9, 1)
    printf "%-58s %12s %12s %8s  %-30s %s\n", name, value, "", "", goal, ok
    # The traced incidents that replace the first look: issue 33's
    # launch-to-traced, <= 3 s at 10M units and <= 1 s at 1M.
    traced = name; sub(/launch-to-first-frame/, "launch-to-traced", traced)
    limit = (name ~ /units=10M/) ? 3e9 : 1e9
    printf "%-58s %12s %12s %8s  %-30s %s\n", traced, human(m["traced-ns"]), "", "", sprintf("<= %d s (glance replaced)", limit / 1e9), verdict(m["traced-ns"], limit, 1)
    name = name; sub(/launch-to-first-frame/, "launch-peak-rss", name)
    value = sprintf("%.0f MB", m["launch-peak-MB"]); goal = "<= 300 MB peak RSS"; ok = verdict(m["launch-peak-MB"], 300, 1)
  } else if ("peak-MB" in m && name ~ /peak|rss|RSS/) {
    value = sprintf("%.0f MB", m["peak-MB"]); goal = "<= 300 MB peak RSS"; ok = verdict(m["peak-MB"], 300, 1)
  } else {
    v = m["ns/op"]; value = human(v)
    if ("floor-ns/op" in m && m["floor-ns/op"] > 0) {
      floor = human(m["floor-ns/op"]); r = v / m["floor-ns/op"]; ratio = sprintf("%.2f", r)
    }
    if (name ~ /^GateSweepSQL/) { goal = "<= 0.10 (10x faster than SQL)"; ok = verdict(r, 0.10, 1) }
    else if (name ~ /^GateSweep/ && name ~ /units=1M/) { goal = "<= 1 s"; ok = verdict(v, 1e9, 1) }
    else if (name ~ /^GateSweep/) { goal = "growth (see 1M row)" }
    # The SQLite sweep against PostgreSQL's on the same generated data, in
    # the same run (the sqlite rows come first): a row of its own after
    # each postgres size.
    if (name ~ /^GateSweep\/store=sqlite\//) { size = name; sub(/.*units=/, "", size); sweepSqlite[size] = v }
    if (name ~ /^GateSweep\/store=postgres\//) { size = name; sub(/.*units=/, "", size); sweepRatio = size }
    else if (name ~ /^Load/) { goal = "<= 1.3x COPY"; ok = verdict(r, 1.3, 1) }
    else if (name ~ /^Coverage/) { goal = "Go vs range_agg" }
    else if (name ~ /^StatusBatch/) { goal = "<= 50 ms"; ok = verdict(v, 50e6, 1) }
    else if (name ~ /^UIScale/ && name ~ /first/) { goal = "<= 100 ms"; ok = verdict(v, 100e6, 1) }
    # Issue 33: the Blocked view's load, its first pages and their roots.
    else if (name ~ /^UIScale/ && name ~ /view=blocked\/load/) { goal = "<= 2 s"; ok = verdict(v, 2e9, 1) }
    # The lineage screen (issue 36): its first frame and a cursor move on
    # a 1,000-model lineage.
    else if (name ~ /^LineageScreen/ && name ~ /first-frame/) { goal = "<= 100 ms"; ok = verdict(v, 100e6, 1) }
    else if (name ~ /^LineageScreen/ && name ~ /cursor-move/) { goal = "<= 16 ms"; ok = verdict(v, 16e6, 1) }
    else if (name ~ /^UIScale/ && name ~ /render|move/) { goal = "<= 16 ms"; ok = verdict(v, 16e6, 1) }
    if ("peak-MB" in m) goal = goal sprintf("; peak RSS %.0f MB (<= 300: %s)", m["peak-MB"], verdict(m["peak-MB"], 300, 1))
  }
  printf "%-58s %12s %12s %8s  %-30s %s\n", name, value, floor, ratio, goal, ok
  if (sweepRatio != "" && (sweepRatio in sweepSqlite) && v > 0) {
    r = sweepSqlite[sweepRatio] / v
    g = (sweepRatio == "1M") ? "<= 1.2x PostgreSQL" : "(goal at 1M)"
    printf "%-58s %12s %12s %8s  %-30s %s\n", "GateSweepRatio/sqlite-vs-postgres/units=" sweepRatio, human(sweepSqlite[sweepRatio]), human(v),
      sprintf("%.2f", r), g, (sweepRatio == "1M") ? verdict(r, 1.2, 1) : ""
  }
  sweepRatio = ""
}
