package source

import (
	"fmt"
	"strconv"
	"strings"
)

// ColumnType is the type inferred for a file source's column.
type ColumnType int

// The inferred types. Text is the fallback every value fits.
const (
	TypeText ColumnType = iota
	TypeInt
	TypeFloat
	TypeBool
	TypeDate
	TypeDatetime
)

func (t ColumnType) String() string {
	return [...]string{"text", "int", "float", "bool", "date", "datetime"}[t]
}

// Column is one column of a file source.
type Column struct {
	Name string
	Type ColumnType
}

// cellKind is what a raw value is known to be before inference.
type cellKind uint8

const (
	cellNull   cellKind = iota
	cellText            // a CSV field: text that may spell a number, a bool or a date
	cellString          // a JSON string: text, or a date
	cellNumber          // a JSON number; text is its literal
	cellBool            // a JSON boolean; text is "true" or "false"
	cellJSON            // a JSON object or array; text is its compact JSON
)

// cell is one raw value.
type cell struct {
	text string
	kind cellKind
}

// csvCell is a CSV field; an empty one is NULL, as in polars (CSV cannot
// tell an empty string from a missing value).
func csvCell(s string) cell {
	if s == "" {
		return cell{}
	}
	return cell{s, cellText}
}

// typeSet is a set of the non-text types a value fits.
type typeSet uint8

const (
	fitsInt typeSet = 1 << iota
	fitsFloat
	fitsBool
	fitsDate
	fitsDatetime
	fitsAll = fitsInt | fitsFloat | fitsBool | fitsDate | fitsDatetime
)

// inferOrder is the preference among the types every sampled value fits.
// Dates come first: a column that parses with the user's dateformat is a
// date column even when its values also spell numbers ("%Y%m%d").
var inferOrder = []struct {
	fits typeSet
	t    ColumnType
}{{fitsDate, TypeDate}, {fitsDatetime, TypeDatetime}, {fitsInt, TypeInt}, {fitsFloat, TypeFloat}, {fitsBool, TypeBool}}

// fits is the set of types c could be. Text values are trimmed for this,
// so " 42" is a number, as a spreadsheet would read it.
func (c cell) fits(dates dateLayout) typeSet {
	s := strings.TrimSpace(c.text)
	var set typeSet
	switch c.kind {
	case cellNull:
		return fitsAll
	case cellNumber:
		if isInt(s) {
			return fitsInt | fitsFloat
		}
		return fitsFloat
	case cellBool:
		return fitsBool
	case cellJSON:
		return 0
	case cellText:
		switch {
		case isInt(s):
			set = fitsInt | fitsFloat
		case isFloat(s):
			set = fitsFloat
		case isBool(s):
			set = fitsBool
		}
	}
	if _, ok := dates.parseDate(s); ok {
		set |= fitsDate
	}
	if _, ok := dates.parseDatetime(s); ok {
		set |= fitsDatetime
	}
	return set
}

// inferType is the most specific type every non-NULL value of column i in
// the sample fits; a column with no values is text.
func inferType(sample []rawRecord, i int, dates dateLayout) ColumnType {
	set, any := fitsAll, false
	for _, rec := range sample {
		if i >= len(rec.cells) || rec.cells[i].kind == cellNull {
			continue
		}
		any = true
		if set &= rec.cells[i].fits(dates); set == 0 {
			return TypeText
		}
	}
	if !any {
		return TypeText
	}
	for _, o := range inferOrder {
		if set&o.fits != 0 {
			return o.t
		}
	}
	return TypeText
}

// converter returns the function that turns a raw value into a value of a
// column of type t; values outside the sample may not fit, and say so.
func converter(t ColumnType, dates dateLayout) func(cell) (any, error) {
	return func(c cell) (any, error) {
		if c.kind == cellNull {
			return nil, nil
		}
		s := strings.TrimSpace(c.text)
		switch t {
		case TypeText:
			return c.text, nil
		case TypeInt:
			if (c.kind == cellText || c.kind == cellNumber) && isInt(s) {
				n, _ := strconv.ParseInt(s, 10, 64)
				return n, nil
			}
		case TypeFloat:
			if (c.kind == cellText || c.kind == cellNumber) && (isInt(s) || isFloat(s)) {
				f, _ := strconv.ParseFloat(s, 64)
				return f, nil
			}
		case TypeBool:
			if (c.kind == cellText || c.kind == cellBool) && isBool(s) {
				return strings.EqualFold(s, "true"), nil
			}
		case TypeDate:
			if c.kind == cellText || c.kind == cellString {
				if d, ok := dates.parseDate(s); ok {
					return d.Format(isoDate), nil
				}
			}
		case TypeDatetime:
			if c.kind == cellText || c.kind == cellString {
				if d, ok := dates.parseDatetime(s); ok {
					return d.Format(isoDatetime), nil
				}
			}
		}
		return nil, fmt.Errorf("value %s is not %s", quoteShort(c.text), dates.describe(t))
	}
}

// isInt accepts an optionally signed decimal integer that fits int64, with
// no leading zeros: "007" or "01234" are identifiers (zip codes, account
// numbers) whose zeros a number column would lose, so they stay text.
func isInt(s string) bool {
	d := strings.TrimLeft(s, "+-")
	if len(s)-len(d) > 1 || d == "" || len(d) > 1 && d[0] == '0' {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// isFloat accepts a decimal number with a fraction or exponent ("1.5",
// "-2e3", ".5"). Words ParseFloat also takes — "NaN", "Inf" — are text, as
// are digit strings that are not ints (too long, or zero-led): those are
// identifiers that a float would round.
func isFloat(s string) bool {
	d := strings.TrimLeft(s, "+-")
	if len(s)-len(d) > 1 || !strings.ContainsAny(d, ".eE") || len(d) > 1 && d[0] == '0' && d[1] >= '0' && d[1] <= '9' {
		return false
	}
	digit := false
	for i := 0; i < len(d); i++ {
		switch c := d[i]; {
		case c >= '0' && c <= '9':
			digit = true
		case c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-':
		default:
			return false
		}
	}
	_, err := strconv.ParseFloat(s, 64)
	return digit && err == nil
}

// isBool accepts true and false in any case, as polars does; 0/1 and yes/no
// are left as what they look like.
func isBool(s string) bool { return strings.EqualFold(s, "true") || strings.EqualFold(s, "false") }

// quoteShort quotes a value for an error, cut to a readable length.
func quoteShort(s string) string {
	if len(s) > 60 {
		cut := 60
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}
