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

// ForceChunkBytes bounds the chunks of the chunked parse at n bytes until
// the returned restore is called, so that a small spec is cut into many.
func ForceChunkBytes(n int) (restore func()) {
	was := chunkBytes
	chunkBytes = n
	return func() { chunkBytes = was }
}

// TakesChunks reports whether data is parsed in chunks under the current
// settings: laid out for it, and every chunk parsed cleanly.
func TakesChunks(data []byte) bool {
	_, _, took := parseInChunks("t.yaml", data)
	return took
}

// ParseChunksOnly is Parse without the fallback to the whole parse: the
// chunked parse's own spec or problems, or an error when data does not
// take it.
func ParseChunksOnly(data []byte) (*Spec, error) {
	sp, errs, took := parseInChunks("t.yaml", data)
	if !took {
		return nil, errors.New("the spec did not take the chunked parse")
	}
	if len(errs) > 0 {
		return nil, errs.finish()
	}
	return sp, nil
}
