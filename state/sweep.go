package state

import "context"

// SweepReader is a Store that can hand the engine's gate sweep every unit of
// an environment in one streamed read. A sweep judges each unit that is not
// applied against its upstreams' applied rows; reading those model by model
// through ScanUnits and Applied costs two round trips per model and a full
// Unit per row, where the sweep needs four numbers. Both backends implement
// it; the engine falls back to ScanUnits for a Store that does not, so it
// stays optional, like DataStore.
type SweepReader interface {
	// SweepUnits calls fn once for each model of env that has units, in
	// no particular order of models, with all of that model's units in
	// window order (SortSweepUnits). fn may keep the slice. Only what a
	// gate reads is returned: window, status and applied_at.
	SweepUnits(ctx context.Context, env string, fn func(model string, units []SweepUnit) error) error
}

// SweepUnit is one unit as the gate sweep reads it. Times are Unix
// microseconds — the precision both stores keep — and the status is one
// byte, so a million units take 32 MB that hold no pointer: the garbage
// collector never scans them, and windows compare as integers.
type SweepUnit struct {
	// Since and Until bound the window; both are 0 for a timeless model's
	// existence row (no real unit is empty, so 0, 0 is unambiguous).
	Since, Until int64
	// AppliedAt is set when Status is Applied, 0 otherwise.
	AppliedAt int64
	Status    StatusCode
}

// StatusCode is a UnitStatus in one byte.
type StatusCode uint8

// The codes of the five statuses; the zero code is no known status.
const (
	CodePending StatusCode = iota + 1
	CodeRunning
	CodeApplied
	CodeBlocked
	CodeFailed
)

var codeStatus = [...]UnitStatus{CodePending: Pending, CodeRunning: Running, CodeApplied: Applied, CodeBlocked: Blocked, CodeFailed: Failed}

// Status is the code's UnitStatus ("" for the zero code).
func (c StatusCode) Status() UnitStatus {
	if int(c) < len(codeStatus) {
		return codeStatus[c]
	}
	return ""
}

// CodeOf is the code of a status spelled as s (a UnitStatus or the bytes a
// store holds), 0 for an unknown one. It does not keep s.
func CodeOf[T ~string | ~[]byte](s T) StatusCode {
	for c := CodePending; c <= CodeFailed; c++ {
		if string(s) == string(codeStatus[c]) {
			return c
		}
	}
	return 0
}

// SweepUnitOf converts a Unit to its sweep form.
func SweepUnitOf(u Unit) SweepUnit {
	su := SweepUnit{Status: CodeOf(u.Status)}
	if !u.Window.IsZero() {
		su.Since, su.Until = u.Window.Since.UnixMicro(), u.Window.Until.UnixMicro()
	}
	if u.AppliedAt != nil && u.Status == Applied {
		su.AppliedAt = u.AppliedAt.UnixMicro()
	}
	return su
}

// SortSweepUnits puts units in window order: by since, then until. Stores
// return a model's rows as a few sorted runs (the rows a prefill inserted,
// then each batch of rows an update rewrote), so this is a natural merge
// sort: it finds the runs and merges them pairwise, O(n log runs), and
// returns at once when there is one run.
func SortSweepUnits(us []SweepUnit) {
	var bounds []int // the start of each run, and len(us)
	for i := range us {
		if i == 0 || sweepLess(us[i], us[i-1]) {
			bounds = append(bounds, i)
		}
	}
	if len(bounds) <= 1 {
		return
	}
	bounds = append(bounds, len(us))
	src, dst := us, make([]SweepUnit, len(us))
	for len(bounds) > 2 {
		next := bounds[:0:0]
		for k := 0; k+1 < len(bounds); k += 2 {
			lo, mid := bounds[k], bounds[k+1]
			hi := mid
			if k+2 < len(bounds) {
				hi = bounds[k+2]
			}
			mergeSweep(dst[lo:hi], src[lo:mid], src[mid:hi])
			next = append(next, lo)
		}
		bounds = append(next, len(us))
		src, dst = dst, src
	}
	if &src[0] != &us[0] {
		copy(us, src)
	}
}

func mergeSweep(out, a, b []SweepUnit) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if sweepLess(b[j], a[i]) {
			out[k] = b[j]
			j++
		} else {
			out[k] = a[i]
			i++
		}
		k++
	}
	k += copy(out[k:], a[i:])
	copy(out[k:], b[j:])
}

func sweepLess(a, b SweepUnit) bool {
	return a.Since < b.Since || a.Since == b.Since && a.Until < b.Until
}
