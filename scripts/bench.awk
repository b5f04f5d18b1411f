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

/^Benchmark/ {
  name = $1
  sub(/^Benchmark/, "", name)
  sub(/-[0-9]+$/, "", name)
  delete m
  for (i = 3; i < NF; i += 2) m[$(i + 1)] = $i
  value = ""; floor = ""; ratio = ""; goal = "—"; ok = ""

  if (name ~ /^(Engine|Warehouse)Throughput/) {
    value = sprintf("%.0f u/s", m["units/s"])
    if ("floor-tps" in m) {
      floor = sprintf("%.0f tps", m["floor-tps"])
      r = m["units/s"] / m["floor-tps"]; ratio = sprintf("%.2f", r)
      goal = ">= 0.5x pgbench TPS"; ok = verdict(r, 0.5, 0)
    }
  } else if (name ~ /^LiveLatency/) {
    v = ("p50-ns" in m) ? m["p50-ns"] : m["ns/op"]
    value = human(v)
    limit = (name ~ /postgres/) ? 250e6 : 1e9
    goal = "<= " human(limit) " (p50)"; ok = verdict(v, limit, 1)
    if ("max-ns" in m) goal = goal ", max " human(m["max-ns"])
  } else if (name ~ /^IncrementalGate/) {
    # A batch of 100 changed units to updated verdicts (median of the
    # batches), beside the full sweep of the same store in the same run.
    v = m["p50-ns"]; value = human(v)
    floor = human(m["floor-ns/op"]); r = v / m["floor-ns/op"]; ratio = sprintf("%.3f", r)
    goal = "<= 20 ms, >= 50x sweep (<= 0.02)"
    ok = (verdict(v, 20e6, 1) == "met" && verdict(r, 0.02, 1) == "met") ? "met" : "MISSED"
  } else if ("peak-MB" in m && name ~ /peak|rss|RSS/) {
    value = sprintf("%.0f MB", m["peak-MB"]); goal = "<= 300 MB peak RSS"; ok = verdict(m["peak-MB"], 300, 1)
  } else {
    v = m["ns/op"]; value = human(v)
    if ("floor-ns/op" in m && m["floor-ns/op"] > 0) {
      floor = human(m["floor-ns/op"]); r = v / m["floor-ns/op"]; ratio = sprintf("%.2f", r)
    }
    if (name ~ /^GateSweepSQL/) { goal = "<= 0.33 (3x faster than SQL)"; ok = verdict(r, 0.334, 1) }
    else if (name ~ /^GateSweep/ && name ~ /units=1M/) { goal = "<= 1 s"; ok = verdict(v, 1e9, 1) }
    else if (name ~ /^GateSweep/) { goal = "growth (see 1M row)" }
    else if (name ~ /^Load/) { goal = "<= 1.3x COPY"; ok = verdict(r, 1.3, 1) }
    else if (name ~ /^Coverage/) { goal = "Go vs range_agg" }
    else if (name ~ /^StatusBatch/) { goal = "<= 50 ms"; ok = verdict(v, 50e6, 1) }
    else if (name ~ /^UIScale/ && name ~ /first/) { goal = "<= 100 ms"; ok = verdict(v, 100e6, 1) }
    else if (name ~ /^UIScale/ && name ~ /render|move/) { goal = "<= 16 ms"; ok = verdict(v, 16e6, 1) }
    if ("peak-MB" in m) goal = goal sprintf("; peak RSS %.0f MB (<= 300: %s)", m["peak-MB"], verdict(m["peak-MB"], 300, 1))
  }
  printf "%-58s %12s %12s %8s  %-30s %s\n", name, value, floor, ratio, goal, ok
}
