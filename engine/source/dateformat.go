package source

import (
	"fmt"
	"strings"
	"time"
)

// The forms dates and date-times are loaded in: ISO 8601, which every
// database reads without a format.
const (
	isoDate     = "2006-01-02"
	isoDatetime = "2006-01-02T15:04:05"
)

// dateLayout is a file source's dateformat, a strftime pattern, translated
// into a Go time layout. The zero value has no dateformat: only ISO dates
// ("2026-01-31") are recognised then.
type dateLayout struct {
	format string // as the spec wrote it
	layout string
	// hasTime is set when the format has %H, %M or %S: its columns become
	// date-times rather than dates.
	hasTime bool
}

// strftimeDirective is one supported directive: its Go layout element, the
// unpadded form preferred for parsing since strptime takes "5/1/2026" for
// %d/%m/%Y, and the zero-padded fallback.
type strftimeDirective struct {
	loose, padded string
	date, time    bool
}

var strftimeDirectives = map[byte]strftimeDirective{
	'Y': {"2006", "2006", true, false},
	'y': {"06", "06", true, false},
	'm': {"1", "01", true, false},
	'd': {"2", "02", true, false},
	'e': {"_2", "_2", true, false},
	'j': {"__2", "002", true, false},
	'b': {"Jan", "Jan", true, false},
	'B': {"January", "January", true, false},
	'H': {"15", "15", false, true},
	'M': {"4", "04", false, true},
	'S': {"5", "05", false, true},
}

// strftimeSegment is a literal run or a directive of a dateformat.
type strftimeSegment struct {
	literal string
	dir     *strftimeDirective
}

// Reference instants for checking a translation: every field differs from
// the values Go's layout elements spell (1/2/15/4/5/2006, Jan, Mon, PM), and
// the two differ in the number of digits of each field.
var layoutChecks = []time.Time{
	time.Date(1999, 12, 28, 23, 58, 59, 0, time.UTC),
	time.Date(2011, 3, 7, 8, 9, 6, 0, time.UTC),
}

// parseDateFormat translates a strftime dateformat such as "%d/%m/%Y" into a
// Go layout. Go layouts have no escape, so literal text that Go would read
// as an element ("20%y", "%d%mT") cannot be expressed: every translation is
// checked by formatting reference instants both ways, and one that differs is
// an error rather than a layout that quietly parses the wrong field.
func parseDateFormat(f string) (dateLayout, error) {
	if f == "" {
		return dateLayout{}, nil
	}
	var segs []strftimeSegment
	var lit strings.Builder
	hasDate, hasTime := false, false
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			lit.WriteByte(f[i])
			continue
		}
		if i++; i == len(f) {
			return dateLayout{}, fmt.Errorf("dateformat %q ends in a lone %%: write %%%% for a literal percent sign", f)
		}
		if f[i] == '%' {
			lit.WriteByte('%')
			continue
		}
		d, ok := strftimeDirectives[f[i]]
		if !ok {
			return dateLayout{}, fmt.Errorf("dateformat %q: unsupported directive %%%c: want %%Y %%y %%m %%d %%e %%j %%b %%B %%H %%M %%S or %%%%", f, f[i])
		}
		if lit.Len() > 0 {
			segs = append(segs, strftimeSegment{literal: lit.String()})
			lit.Reset()
		}
		segs = append(segs, strftimeSegment{dir: &d})
		hasDate, hasTime = hasDate || d.date, hasTime || d.time
	}
	if lit.Len() > 0 {
		segs = append(segs, strftimeSegment{literal: lit.String()})
	}
	if !hasDate {
		return dateLayout{}, fmt.Errorf("dateformat %q has no date directive: want at least one of %%Y %%y %%m %%d %%e %%j %%b %%B", f)
	}
	for _, padded := range []bool{false, true} {
		if layout, ok := translate(segs, padded); ok {
			return dateLayout{format: f, layout: layout, hasTime: hasTime}, nil
		}
	}
	return dateLayout{}, fmt.Errorf("dateformat %q cannot be translated to a Go time layout: literal digits or words next to a directive would be read as part of the date; separate directives with punctuation such as - / . or a space", f)
}

// translate builds the layout from segs and reports whether it formats the
// reference instants exactly as the segments one by one would.
func translate(segs []strftimeSegment, padded bool) (string, bool) {
	layout := joinSegments(segs, padded, func(l string) string { return l })
	for _, ref := range layoutChecks {
		if ref.Format(layout) != joinSegments(segs, padded, ref.Format) {
			return "", false
		}
	}
	return layout, true
}

// joinSegments writes segs in order: a literal as it is, a directive as
// directive gives its padded or loose layout.
func joinSegments(segs []strftimeSegment, padded bool, directive func(layout string) string) string {
	var b strings.Builder
	for _, s := range segs {
		switch {
		case s.dir == nil:
			b.WriteString(s.literal)
		case padded:
			b.WriteString(directive(s.dir.padded))
		default:
			b.WriteString(directive(s.dir.loose))
		}
	}
	return b.String()
}

// parseDate reads s as an ISO date or, when the dateformat has no time
// directives, with the dateformat.
func (d dateLayout) parseDate(s string) (time.Time, bool) {
	if len(s) == len(isoDate) {
		if t, err := time.Parse(isoDate, s); err == nil {
			return t, true
		}
	}
	if d.layout == "" || d.hasTime {
		return time.Time{}, false
	}
	t, err := time.Parse(d.layout, s)
	return t, err == nil
}

// parseDatetime reads s with a dateformat that has time directives.
func (d dateLayout) parseDatetime(s string) (time.Time, bool) {
	if d.layout == "" || !d.hasTime {
		return time.Time{}, false
	}
	t, err := time.Parse(d.layout, s)
	return t, err == nil
}

// describe names type t for "value … is not <t>", with the date forms
// that would have been accepted.
func (d dateLayout) describe(t ColumnType) string {
	switch t {
	case TypeInt:
		return "an int"
	case TypeFloat:
		return "a float"
	case TypeBool:
		return "a bool (true or false)"
	case TypeDate:
		if d.layout != "" {
			return fmt.Sprintf("a date (ISO 2026-01-31 or dateformat %s)", d.format)
		}
		return "a date (ISO 2026-01-31)"
	case TypeDatetime:
		return fmt.Sprintf("a date-time (dateformat %s)", d.format)
	}
	return t.String()
}
