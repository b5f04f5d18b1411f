package tui

// MemoryLimit is the UI process's soft memory limit (runtime/debug's
// SetMemoryLimit), which the command that starts the UI sets unless
// GOMEMLIMIT sets another. A UI stays open for hours on an on-call laptop
// or an SSH host, and its work comes in bursts — parsing a spec of ten
// thousand models (a transient 150 MB of YAML syntax tree), tracing the
// incidents of ten million units — after which Go's default keeps the
// heap at twice what was live. Under the limit the collector runs sooner
// instead: at ten million units the launch's peak RSS goes from 356–391
// MB to about 266 MB, the trace's time unchanged (docs/BENCHMARKS.md). It
// is soft: a process that needs more gets more. It lives here, with the
// screens whose loads it bounds, so their benchmarks load them under it
// as the UI process does.
const MemoryLimit = 256 << 20
