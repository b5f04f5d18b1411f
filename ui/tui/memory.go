package tui

// MemoryLimit is the UI process's soft memory limit (runtime/debug's
// SetMemoryLimit), which the command that starts the UI sets unless
// GOMEMLIMIT sets another. A UI stays open for hours on an on-call laptop
// or an SSH host, and its work comes in bursts — parsing a spec of ten
// thousand models (a transient 150 MB of YAML syntax tree), tracing the
// incidents of ten million units — after which Go's default keeps the
// heap at twice what was live. Under the limit the collector runs sooner
// instead: at ten million units the launch's peak RSS goes from 356–391
// MB to about 240 MB, the trace's time unchanged (docs/BENCHMARKS.md).
// 240 MiB, not 256: with the Blocked view loaded at 10M units, 256 left
// the process's RSS at 294–300 MB, the goal's edge, as SQLite's page
// caches and the binary are outside what the runtime counts. It is soft:
// a process that needs more gets more. It lives here, with the screens
// whose loads it bounds, so their benchmarks load them under it as the
// UI process does.
const MemoryLimit = 240 << 20
