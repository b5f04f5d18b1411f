package spec

import (
	"fmt"
	"strings"

	"github.com/bollhav/bollhav/state"
	"github.com/goccy/go-yaml/ast"
)

// runKeys are the keys of a run block; the first three choose the executor.
var (
	runKeys      = []string{"command", "sql", "query", "write", "timeout"}
	executorKeys = []string{"command", "sql", "query"}
)

// decodeRun reads a run block (docs/design.md, Executors): exactly one of
// command (an argv), sql (one statement or a list) or query. A query needs a
// write on a temporal model, where each window's rows must land somewhere
// defined; on a timeless model a query without a write is a view.
func (d *decoder) decodeRun(f *field, temporality Temporality) Run {
	run := Run{Pos: f.keyPos}
	fs := d.mapping(f.val, "run", runKeys...)
	if fs == nil {
		return run
	}
	chosen := d.exactlyOne(fs, executorKeys, "run has both %s and %s: a run uses exactly one of command, sql or query")
	write := fs.get("write")
	switch {
	case chosen == nil:
		if !fs.meant(executorKeys...) {
			d.errAt(f.keyPos, "run needs one of command, sql or query")
		}
	case chosen.key == "command":
		run.Kind, run.Command = RunCommand, d.argv(chosen)
	case chosen.key == "sql":
		run.Kind, run.SQL = RunSQL, d.statements(chosen)
	case chosen.key == "query":
		run.Kind = RunQuery
		run.Query, _ = d.nonEmptyStr(chosen)
		if isNull(chosen.val) {
			d.errAt(chosen.valPos, "query is empty")
		} else {
			d.checkTransaction(chosen.valPos, "query", run.Query)
		}
		if write == nil && temporality == Temporal {
			d.errAt(chosen.keyPos, "a temporal model's query needs a write (append, upsert or recreate_partition): it says how each window's rows land in the target; only a timeless model's query without a write becomes a view")
		} else if write == nil {
			run.Kind = RunView
		}
	}
	switch {
	case write == nil:
	case fs.get("query") == nil:
		d.errAt(write.keyPos, "write applies to a query: it says how the query's rows land in the target")
	case chosen.key == "query":
		run.Write = d.decodeWrite(write)
	}
	if v := fs.present("timeout"); v != nil {
		if s, ok := d.str(v); ok {
			t, err := state.ParseDuration(s)
			if err != nil {
				d.errAt(v.valPos, "invalid timeout: %v", err)
			}
			run.Timeout = t
		}
	}
	return run
}

// argv reads a command: a non-empty list whose first element names the
// program. Scalars are taken as written, so "--days=07" stays itself.
func (d *decoder) argv(f *field) []string {
	if _, scalar := scalarText(f.val); scalar && !isNull(f.val) {
		d.errAt(f.valPos, "command must be a list (an argv) such as [\"./load_orders.sh\", \"--full\"]; a string is not split into arguments")
		return nil
	}
	argv := []string{}
	listed := d.eachItem(f, "command is empty: want an argv such as [\"./load_orders.sh\", \"--full\"]", func(i int, item, r ast.Node) {
		s, ok := scalarText(r)
		switch {
		case !ok || isNull(r):
			d.errorf(item, "command argument %d must be a string, got %s", i, describe(r))
		case i == 0 && strings.TrimSpace(s) == "":
			d.errorf(item, "command's program (argument 0) is empty")
		default:
			argv = append(argv, s)
		}
	})
	if !listed {
		return nil
	}
	return argv
}

// statements reads sql: one statement, or a list run in order.
func (d *decoder) statements(f *field) []string {
	if s, ok := scalarText(f.val); ok {
		if strings.TrimSpace(s) == "" {
			d.errAt(f.valPos, "sql is empty")
			return nil
		}
		d.checkTransaction(f.valPos, "sql", s)
		return []string{s}
	}
	out := []string{}
	listed := d.eachItem(f, "sql is an empty list: give at least one statement", func(i int, item, r ast.Node) {
		s, ok := scalarText(r)
		switch {
		case !ok || isNull(r):
			d.errorf(item, "sql statement %d must be a string, got %s", i+1, describe(r))
		case strings.TrimSpace(s) == "":
			d.errorf(item, "sql statement %d is empty", i+1)
		default:
			d.checkTransaction(d.pos(item), fmt.Sprintf("sql statement %d", i+1), s)
			out = append(out, s)
		}
	})
	if !listed {
		return nil
	}
	return out
}

// checkTransaction refuses SQL that begins, ends or splits a transaction:
// the engine runs a unit's statements in the one transaction that also
// records it applied, so a COMMIT inside them would commit the data without
// the state — and a failure after it would leave rows behind that a retry
// writes again.
func (d *decoder) checkTransaction(at Position, what, sql string) {
	if kw, ok := transactionStatement(sql); ok {
		d.errAt(at, "%s contains %s: bollhav runs a unit's SQL in one transaction with its applied state, so the data lands exactly once; remove the transaction statement", what, kw)
	}
}

// writeModes names the write modes as the spec spells them.
var writeModes = map[string]WriteMode{"append": Append, "upsert": Upsert, "recreate_partition": RecreatePartition}

// decodeWrite reads write: {mode, keys, column}. Keys belong to upsert and
// column to recreate_partition only: a setting the mode ignores is a mistake
// the user would not otherwise notice.
func (d *decoder) decodeWrite(f *field) *Write {
	fs := d.mapping(f.val, "write", "mode", "keys", "column")
	if fs == nil {
		return nil
	}
	w := &Write{}
	mode := fs.present("mode")
	if mode == nil {
		if !fs.meant("mode") {
			d.errAt(f.keyPos, "write needs a mode: append, upsert or recreate_partition")
		}
		return w
	}
	if s, ok := d.str(mode); ok {
		m, known := writeModes[strings.ToLower(s)]
		if !known {
			d.errAt(mode.valPos, "unknown write mode %q: want append, upsert or recreate_partition", s)
		}
		w.Mode = m
	}
	keys := fs.get("keys")
	var keyItems []ast.Node
	if keys != nil {
		keyItems, _ = d.list(keys)
		for i, item := range keyItems {
			r := d.resolve(item)
			if r == nil {
				continue
			}
			k, ok := scalarText(r)
			if !ok || isNull(r) {
				d.errorf(item, "upsert key %d must be a column name, got %s", i+1, describe(r))
				continue
			}
			if why := identProblem(k); why != "" {
				d.errorf(item, "invalid upsert key %q: %s", k, why)
				continue
			}
			w.Keys = append(w.Keys, k)
		}
	}
	column := fs.present("column")
	if column != nil {
		w.Column, _ = d.ident(column)
	}
	if keys != nil && isNull(keys.val) && w.Mode != Upsert {
		keys = nil // "keys:" with nothing is no keys
	}
	switch w.Mode {
	case Upsert:
		if keys == nil || isNull(keys.val) {
			d.errAt(mode.valPos, "upsert needs keys: the columns that identify a row")
		} else if len(keyItems) == 0 {
			d.errAt(keys.valPos, "upsert keys is empty: name the columns that identify a row")
		}
		if column != nil {
			d.errAt(column.keyPos, "column applies only to recreate_partition")
		}
	case RecreatePartition:
		if column == nil {
			d.errAt(mode.valPos, "recreate_partition needs a column: the partition column whose window is deleted and rewritten")
		}
		if keys != nil {
			d.errAt(keys.keyPos, "keys apply only to upsert")
		}
	case Append:
		if keys != nil {
			d.errAt(keys.keyPos, "keys apply only to upsert")
		}
		if column != nil {
			d.errAt(column.keyPos, "column applies only to recreate_partition")
		}
	}
	return w
}
