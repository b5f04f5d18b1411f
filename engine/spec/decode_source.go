package spec

import (
	"cmp"
	"net/url"
	"strings"

	"github.com/bollhav/bollhav/state"
	"github.com/goccy/go-yaml/ast"
)

// sourceKeys are the keys of one upstream entry; the last four are its type
// keys, of which at most one may be set.
var (
	sourceKeys    = []string{"name", "contract", "freshness", "deactivate_for_dev", "require_current", "model", "file", "api", "hardcoded"}
	typeKeys      = []string{"model", "file", "api", "hardcoded"}
	typeKinds     = map[string]SourceKind{"model": KindModel, "file": KindFile, "api": KindAPI, "hardcoded": KindHardcoded}
	contractNamed = map[string]ContractLevel{"exists": Exists, "exact": Exact, "encapsulate": Encapsulate, "through": Through, "whole": Whole}
)

// sourceSite is a decoded source with the positions its rules point at.
type sourceSite struct {
	src Source
	// name is the name value; nameOK is false when it was missing or
	// invalid.
	name   Position
	nameOK bool
	// contractKey and contractVal are zero when no contract is set.
	contractKey, contractVal Position
	freshnessKey             Position
	requireCurrentKey        Position
}

// decodeSource reads one upstream entry. With no type key it is a model
// source, the common case of a gated upstream.
func (d *decoder) decodeSource(n ast.Node) *sourceSite {
	d.source = ""
	mark := len(d.errs)
	fs := d.mapping(n, "a source", sourceKeys...)
	if fs == nil {
		return nil
	}
	site := &sourceSite{src: Source{Kind: KindModel, Pos: d.pos(d.resolve(n))}}
	src := &site.src
	site.name = src.Pos
	nameField := fs.present("name")
	named := false
	if nameField == nil {
		if !fs.meant("name") {
			d.errAt(src.Pos, "source has no name")
		}
	} else if s, ok := d.str(nameField); ok {
		src.Name, site.name, named = s, nameField.valPos, true
	}

	typeField := d.exactlyOne(fs, typeKeys, "source has more than one type (%s and %s): a source is exactly one of model, file, api or hardcoded")
	if typeField != nil {
		src.Kind = typeKinds[typeField.key]
	}
	switch src.Kind {
	case KindModel:
		src.Model = d.decodeSourceModel(typeField)
	case KindFile:
		src.File = d.decodeSourceFile(typeField)
	case KindAPI:
		src.API = d.decodeSourceAPI(typeField)
	case KindHardcoded:
		src.Hardcoded = d.decodeSourceHardcoded(typeField)
	}

	if named {
		why := otherSourceNameProblem(src.Name)
		if src.Kind == KindModel {
			why = modelSourceNameProblem(src.Name)
		}
		if why != "" {
			d.errAt(site.name, "invalid source name %q: %s", src.Name, why)
		} else {
			site.nameOK = true
			d.setSource(src.Name, mark)
		}
	}
	if f := fs.present("contract"); f != nil {
		site.contractKey, site.contractVal = f.keyPos, f.valPos
		if s, ok := d.str(f); ok {
			level, known := contractNamed[strings.ToLower(s)]
			switch {
			case known:
				src.Contract = level
			case strings.EqualFold(s, "window"):
				d.errAt(f.valPos, "contract WINDOW was removed: use ENCAPSULATE, which accepts a single containing row and a gap-free union of finer rows")
			default:
				d.errAt(f.valPos, "unknown contract %q: want exists, exact, encapsulate, through or whole", s)
			}
		}
	}
	if f := fs.present("freshness"); f != nil {
		site.freshnessKey = f.keyPos
		src.Freshness = d.decodeFreshness(f)
	}
	if f := fs.present("deactivate_for_dev"); f != nil {
		src.DeactivateForDev, _ = d.boolean(f)
	}
	if f := fs.present("require_current"); f != nil {
		site.requireCurrentKey = f.keyPos
		src.RequireCurrent, _ = d.boolean(f)
	}
	d.checkSource(site)
	return site
}

// decodeFreshness reads freshness: {within, scope}; scope defaults to latest.
func (d *decoder) decodeFreshness(f *field) *Freshness {
	fs := d.mapping(f.val, "freshness", "within", "scope")
	if fs == nil {
		return nil
	}
	fr := &Freshness{Scope: Latest}
	if v := fs.present("within"); v == nil {
		if !fs.meant("within") {
			d.errAt(f.keyPos, "freshness needs within: the age, like 24h or 1d, beyond which the upstream is stale")
		}
	} else if s, ok := d.str(v); ok {
		within, err := state.ParseDuration(s)
		if err != nil {
			d.errAt(v.valPos, "%v", err)
		}
		fr.Within = within
	}
	pickWord(d, fs.present("scope"), "freshness scope", &fr.Scope, []word[FreshnessScope]{{"latest", Latest}, {"all", All}})
	return fr
}

// typeConfig returns the mapping under a type key; a type key with no value
// ("model:") is an empty config.
func (d *decoder) typeConfig(f *field, allowed ...string) *fields {
	if f == nil || f.val == nil || isNull(f.val) {
		return &fields{by: map[string]*field{}}
	}
	return d.mapping(f.val, f.key, allowed...)
}

// decodeSourceModel reads a model: block; f is nil for a source with no type
// key, which is a model source with no read config.
func (d *decoder) decodeSourceModel(f *field) *SourceModel {
	sm := &SourceModel{}
	fs := d.typeConfig(f, "schema", "catalog", "dsn_env_var", "read_query", "partitioned_by", "infer_schema_length", "extra")
	if fs == nil {
		return sm
	}
	// An absent or null field reads as "", which the fields already hold.
	sm.Schema, _ = d.ident(fs.present("schema"))
	sm.Catalog, _ = d.ident(fs.present("catalog"))
	sm.DSNEnvVar, _ = d.envVar(fs.present("dsn_env_var"))
	sm.ReadQuery, _ = d.nonEmptyStr(fs.present("read_query"))
	sm.PartitionedBy, _ = d.ident(fs.present("partitioned_by"))
	if v := fs.present("infer_schema_length"); v != nil {
		if n, ok := d.count(v, 0); ok {
			sm.InferSchemaLength = &n
		}
	}
	sm.Extra = d.extra(fs)
	return sm
}

// decodeSourceFile reads a file: block; path is required.
func (d *decoder) decodeSourceFile(f *field) *SourceFile {
	sf := &SourceFile{}
	fs := d.typeConfig(f, "path", "encoding", "separator", "infer_schema_length", "remove_top_rows", "archive_folder", "dateformat", "file_ending")
	if fs == nil {
		return sf
	}
	if v := fs.present("path"); v == nil {
		if !fs.meant("path") {
			d.errAt(f.keyPos, "file needs a path")
		}
	} else {
		sf.Path, _ = d.nonEmptyStr(v)
	}
	sf.Encoding, _ = d.nonEmptyStr(fs.present("encoding"))
	if v := fs.present("separator"); v != nil {
		if s, ok := d.str(v); ok {
			if len(s) != 1 {
				d.errAt(v.valPos, "separator must be a single one-byte character, like \",\", \";\" or \"\\t\", got %q", s)
			} else {
				sf.Separator = s
			}
		}
	}
	if v := fs.present("infer_schema_length"); v != nil {
		if n, ok := d.count(v, 0); ok {
			sf.InferSchemaLength = &n
		}
	}
	if v := fs.present("remove_top_rows"); v != nil {
		sf.RemoveTopRows, _ = d.count(v, 0)
	}
	sf.ArchiveFolder, _ = d.nonEmptyStr(fs.present("archive_folder"))
	sf.DateFormat, _ = d.nonEmptyStr(fs.present("dateformat"))
	sf.FileEnding, _ = d.nonEmptyStr(fs.present("file_ending"))
	return sf
}

// decodeSourceAPI reads an api: block; base_url must be an absolute http(s)
// URL, since a relative one would resolve against nothing.
func (d *decoder) decodeSourceAPI(f *field) *SourceAPI {
	sa := &SourceAPI{}
	fs := d.typeConfig(f, "base_url", "extra")
	if fs == nil {
		return sa
	}
	if v := fs.present("base_url"); v == nil {
		if !fs.meant("base_url") {
			d.errAt(f.keyPos, "api needs a base_url")
		}
	} else if s, ok := d.str(v); ok {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			d.errAt(v.valPos, "invalid base_url %q: want an absolute http or https URL", s)
		} else {
			sa.BaseURL = s
		}
	}
	sa.Extra = d.extra(fs)
	return sa
}

// decodeSourceHardcoded reads a hardcoded: block: exactly one of rows (a
// list of mappings from column to scalar) and sql must be set.
func (d *decoder) decodeSourceHardcoded(f *field) *SourceHardcoded {
	sh := &SourceHardcoded{}
	fs := d.typeConfig(f, "rows", "sql", "extra")
	if fs == nil {
		return sh
	}
	rows, sql := fs.present("rows"), fs.present("sql")
	switch {
	case rows != nil && sql != nil:
		d.errAt(f.keyPos, "hardcoded has both rows and sql: set exactly one")
	case rows == nil && sql == nil:
		if !fs.meant("rows", "sql") {
			d.errAt(f.keyPos, "hardcoded needs exactly one of rows or sql, got neither")
		}
	case sql != nil:
		sh.SQL, _ = d.nonEmptyStr(sql)
	default:
		sh.Rows = d.rows(rows)
	}
	sh.Extra = d.extra(fs)
	return sh
}

// rows reads hardcoded rows: at least one, each a mapping from a column
// identifier to a scalar (the columns of a table; nested values have no
// column type).
func (d *decoder) rows(f *field) []map[string]any {
	out := []map[string]any{}
	listed := d.eachItem(f, "rows is empty: a hardcoded source needs at least one row (its keys name the columns)", func(i int, item, r ast.Node) {
		if !isMapping(r) {
			d.errorf(item, "row %d must be a mapping from column to value, got %s", i+1, describe(r))
			return
		}
		row, good := d.objectValue(r, 1, func(col string, keyPos, valPos Position, v any) {
			if why := identProblem(col); why != "" {
				d.errAt(keyPos, "row %d: invalid column name %q: %s", i+1, col, why)
			}
			switch v.(type) {
			case map[string]any:
				d.errAt(valPos, "row %d: column %s holds a mapping; a row holds scalars only", i+1, col)
			case []any:
				d.errAt(valPos, "row %d: column %s holds a list; a row holds scalars only", i+1, col)
			}
		})
		if good {
			out = append(out, row)
		}
	})
	if !listed {
		return nil
	}
	return out
}

// extra reads a free-form extra: mapping, or nil when absent.
func (d *decoder) extra(fs *fields) map[string]any {
	v := fs.present("extra")
	if v == nil {
		return nil
	}
	if !isMapping(v.val) {
		d.errAt(v.valPos, "extra must be a mapping, got %s", describe(v.val))
		return nil
	}
	m, _ := d.objectValue(v.val, 1, nil)
	return m
}

// setSource names the source being decoded, also on the errors reported since
// mark. Only a valid name becomes context (see decodeModel).
func (d *decoder) setSource(name string, mark int) {
	d.source = name
	for _, e := range d.errs[mark:] {
		e.Source = cmp.Or(e.Source, name)
	}
}
