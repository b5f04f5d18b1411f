package spec

import "errors"

// ForceChunks makes every spec of at least two entries per worker take the
// chunked parse and the parallel decode on workers cores (1: neither),
// until the returned restore is called.
func ForceChunks(workers int) (restore func()) {
	minBytes, minModels, w := chunkMinBytes, decodeMinModels, chunkWorkers
	chunkMinBytes, decodeMinModels = 0, 0
	if workers < 2 {
		chunkMinBytes, decodeMinModels = 1<<62, 1<<62
	}
	chunkWorkers = func() int { return workers }
	return func() { chunkMinBytes, decodeMinModels, chunkWorkers = minBytes, minModels, w }
}

// TakesChunks reports whether data is parsed in chunks under the current
// settings: laid out for it, and every chunk parsed cleanly.
func TakesChunks(data []byte) bool { return chunkedTree("t.yaml", data) != nil }

// ParseChunksOnly is Parse without the fallback to the whole parse: the
// chunked parse's own spec or problems, or an error when data does not
// take it.
func ParseChunksOnly(data []byte) (*Spec, error) {
	tree := chunkedTree("t.yaml", data)
	if tree == nil {
		return nil, errors.New("the spec did not take the chunked parse")
	}
	sp, errs := decodeTree("t.yaml", tree)
	if len(errs) > 0 {
		return nil, errs.finish()
	}
	return sp, nil
}
