package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// ContentHash fingerprints the inline content of a hardcoded source — its
// version, since a constant has no _data_modified to compare. It is
// "sha256:" and the hex SHA-256 of a canonical JSON form of rows or sql:
// object keys sorted, no insignificant whitespace, so it is the same in every
// process and for any map order, and changes exactly when rows or sql do.
// Extra is configuration, not content, and is left out. Rows and sql are
// tagged apart, so rows can never hash like a sql string.
func (h *SourceHardcoded) ContentHash() string {
	var b strings.Builder
	if h != nil && h.Rows != nil {
		b.WriteString(`{"rows":`)
		rows := make([]any, len(h.Rows))
		for i, r := range h.Rows {
			rows[i] = r
		}
		canonicalJSON(&b, rows)
	} else {
		b.WriteString(`{"sql":`)
		sql := ""
		if h != nil {
			sql = h.SQL
		}
		canonicalJSON(&b, sql)
	}
	b.WriteString("}")
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// canonicalJSON writes v with sorted object keys. Integers print as
// integers and floats always with a fraction or exponent, so 1 and 1.0 —
// different column types — hash differently. Values the loader never
// produces (non-finite floats, other Go types) still get a stable form
// instead of an error.
func canonicalJSON(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		q, _ := json.Marshal(x) // a string always marshals
		b.Write(q)
	case int:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case float64:
		writeFloat(b, x)
	case float32:
		writeFloat(b, float64(x))
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b.WriteByte(',')
			}
			canonicalJSON(b, k)
			b.WriteByte(':')
			canonicalJSON(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			canonicalJSON(b, e)
		}
		b.WriteByte(']')
	default:
		canonicalJSON(b, fmt.Sprintf("%s(%v)", reflect.TypeOf(v), v))
	}
}

// writeFloat prints f so that it never reads as an integer; non-finite
// values become the strings JSON lacks a number for.
func writeFloat(b *strings.Builder, f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		canonicalJSON(b, strconv.FormatFloat(f, 'g', -1, 64))
		return
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	b.WriteString(s)
}
