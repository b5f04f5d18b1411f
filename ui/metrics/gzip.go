package metrics

import (
	"compress/gzip"
	"net/http"
	"strings"
	"sync"
)

// gzipFast compresses h's responses with gzip at BestSpeed for a client
// that accepts gzip (a Prometheus server always does). promhttp's own
// gzip uses the default level, which at 1,000 models cost two to three
// times the rest of the scrape (BenchmarkScrape); the exposition is so
// repetitive that BestSpeed keeps nearly all of the saving.
func gzipFast(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
			h.ServeHTTP(w, r)
			return
		}
		gz := gzipWriters.Get().(*gzip.Writer)
		defer gzipWriters.Put(gz)
		gz.Reset(w)
		w.Header().Set("Content-Encoding", "gzip")
		h.ServeHTTP(gzipResponse{ResponseWriter: w, gz: gz}, r)
		_ = gz.Close()
	})
}

var gzipWriters = sync.Pool{New: func() any {
	gz, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return gz
}}

// acceptsGzip reads an Accept-Encoding header: gzip is named and not
// refused with q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(params, " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// gzipResponse writes the body through gz; headers and status go to the
// ResponseWriter as they are (Content-Length must not be set by h).
type gzipResponse struct {
	http.ResponseWriter
	gz *gzip.Writer
}

func (g gzipResponse) Write(p []byte) (int, error) { return g.gz.Write(p) }
