package source

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/bollhav/bollhav/state"
)

var FileColumnTypes = map[ColumnType]state.ColumnType{
	TypeText: state.ColumnText, TypeInt: state.ColumnInt, TypeFloat: state.ColumnFloat,
	TypeBool: state.ColumnBool, TypeDate: state.ColumnDate, TypeDatetime: state.ColumnDatetime,
}

// HardcodedTable turns inline rows into columns and rows. The columns are
// every key of every row in sorted order (a YAML mapping's key order is not
// kept); a column's type is the one all its values share, integers widen to
// floats, and any other mix is text. A key missing from a row is NULL.
func HardcodedTable(rows []map[string]any) ([]state.DataColumn, state.RowSource) {
	types := map[string]state.ColumnType{}
	seen := map[string]bool{}
	var names []string
	for _, r := range rows {
		for k, v := range r {
			if !seen[k] {
				seen[k] = true
				names = append(names, k)
			}
			if v == nil {
				continue
			}
			t := valueType(v)
			if old, ok := types[k]; ok && old != t {
				switch {
				case old == state.ColumnInt && t == state.ColumnFloat, old == state.ColumnFloat && t == state.ColumnInt:
					t = state.ColumnFloat
				default:
					t = state.ColumnText
				}
			}
			types[k] = t
		}
	}
	slices.Sort(names)
	cols := make([]state.DataColumn, len(names))
	for i, n := range names {
		cols[i] = state.DataColumn{Name: n, Type: types[n]}
	}
	out := make([][]any, len(rows))
	for i, r := range rows {
		row := make([]any, len(cols))
		for j, c := range cols {
			row[j] = columnValue(r[c.Name], c.Type)
		}
		out[i] = row
	}
	return cols, state.SliceRows(out)
}

func valueType(v any) state.ColumnType {
	switch v.(type) {
	case bool:
		return state.ColumnBool
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return state.ColumnInt
	case float32, float64:
		return state.ColumnFloat
	}
	return state.ColumnText
}

// columnValue converts v to its column's type: text columns get the value's
// text, float columns widen integers.
func columnValue(v any, t state.ColumnType) any {
	if v == nil {
		return nil
	}
	switch t {
	case state.ColumnText:
		if s, ok := v.(string); ok {
			return s
		}
		return fmt.Sprint(v)
	case state.ColumnFloat:
		if valueType(v) == state.ColumnInt {
			f, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
			return f
		}
	}
	return v
}
