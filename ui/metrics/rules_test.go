package metrics_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/goccy/go-yaml"
	dto "github.com/prometheus/client_model/go"
)

// rulesFile is the alerting rules docs/oncall.md describes, as a
// Prometheus server loads them.
const rulesFile = "../../examples/prometheus/bollhav.rules.yml"

// notOurs are the series a rule may use that the exporter does not serve:
// up is the scrape's own, which Prometheus records per target.
var notOurs = map[string]bool{"up": true}

type rulesDoc struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// TestAlertRulesUseWhatTheExporterServes: every metric each rule's
// expression selects is a family `serve --metrics` serves (the Monitor's
// handler over a store with something in every family), every label it
// matches, joins on or groups by is one that family's series carry, every
// value it matches a label to is one the family serves or its HELP names,
// and every $labels.X an annotation reads is a label of the series the
// expression keeps (its first selector's). promtool, where CI has it,
// checks the PromQL itself and runs the rules' unit tests (.ci/run).
func TestAlertRulesUseWhatTheExporterServes(t *testing.T) {
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc rulesDoc
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	_, body := everyFamilyWorld(t)
	fams := parse(t, body)
	rules := 0
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			rules++
			name := r.Alert + r.Record
			if r.Alert == "" || r.Expr == "" || r.Annotations["summary"] == "" || r.Annotations["answer"] == "" {
				t.Errorf("%s: a rule needs alert, expr, a summary and the answer (the command to run)", name)
			}
			q, err := readPromQL(r.Expr)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			for _, problem := range q.check(fams) {
				t.Errorf("%s: %s\n  expr: %s", name, problem, r.Expr)
			}
			for key, text := range r.Annotations {
				for _, m := range labelRef.FindAllStringSubmatch(text, -1) {
					if !q.keeps(fams, m[1]) {
						t.Errorf("%s: annotation %s reads $labels.%s, which the series its expression keeps (%s) do not carry", name, key, m[1], q.selectors[0].name)
					}
				}
			}
		}
	}
	if rules == 0 {
		t.Fatalf("%s has no rules", rulesFile)
	}
}

// TestPromQLReaderFindsWhatRulesUse: the reader the rules test relies on
// finds selectors, their matchers and the labels of on, by and friends,
// and the check names what the exporter does not serve.
func TestPromQLReaderFindsWhatRulesUse(t *testing.T) {
	q, err := readPromQL(`sum by (pipeline) (rate(bollhav_unit_claims_total{model=~"raw\\..*"}[5m] offset 1h)) > on (pipeline, kind) group_left bollhav_x{kind="nope", status!="failed"} or up{job="bollhav"} == 0`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range q.selectors {
		got = append(got, fmt.Sprintf("%s %v", s.name, s.matchers))
	}
	want := []string{`bollhav_unit_claims_total [{model =~ raw\..*}]`, `bollhav_x [{kind = nope} {status != failed}]`, `up [{job = bollhav}]`}
	if !slices.Equal(got, want) {
		t.Errorf("selectors %q, want %q", got, want)
	}
	if !slices.Equal(q.grouping, []string{"pipeline", "pipeline", "kind"}) {
		t.Errorf("grouping labels %v", q.grouping)
	}
	fams := map[string]*dto.MetricFamily{
		"bollhav_unit_claims_total": {Metric: []*dto.Metric{{Label: labelPairs("model", "raw.a", "pipeline", "ingest")}}},
	}
	problems := strings.Join(q.check(fams), "\n")
	for _, want := range []string{"bollhav_x is not served", "bollhav_unit_claims_total does not carry label kind"} {
		if !strings.Contains(problems, want) {
			t.Errorf("check does not say %q:\n%s", want, problems)
		}
	}
	if strings.Contains("\n"+problems, "\nup ") {
		t.Errorf("check complains of up, Prometheus' own series:\n%s", problems)
	}
	for _, bad := range []string{`bollhav_units{status="failed"`, `foo("x)`, `bollhav_units{status}`} {
		if _, err := readPromQL(bad); err == nil {
			t.Errorf("%q reads without an error", bad)
		}
	}
}

func labelPairs(kv ...string) []*dto.LabelPair {
	var out []*dto.LabelPair
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, &dto.LabelPair{Name: &kv[i], Value: &kv[i+1]})
	}
	return out
}

// labelRef is a template's $labels.NAME.
var labelRef = regexp.MustCompile(`\$labels\.([A-Za-z_][A-Za-z0-9_]*)`)

// promQL is what the rules test reads of an expression: its series
// selectors in order and the labels its on, ignoring, by, without,
// group_left and group_right clauses name. It is a reader of the PromQL
// the rules use, not a parser of all PromQL: promtool checks that.
type promQL struct {
	selectors []selector
	grouping  []string
	// aggregated is whether an aggregation (sum, max, …) takes the series
	// apart, keeping only the labels it groups by.
	aggregated bool
}

type selector struct {
	name     string
	matchers []matcher
}

type matcher struct{ label, op, value string }

// aggregations are PromQL's aggregation operators.
var aggregations = map[string]bool{"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true}

// keywords are PromQL's words that are no series.
var keywords = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "on": true, "ignoring": true,
	"by": true, "without": true, "group_left": true, "group_right": true, "atan2": true}

// groupingWords take a list of labels in parentheses.
var groupingWords = map[string]bool{"on": true, "ignoring": true, "by": true, "without": true, "group_left": true, "group_right": true}

type token struct {
	kind byte // 'i' identifier, 's' string, 'n' number or duration, 'p' punctuation or operator
	text string
}

func lexPromQL(expr string) ([]token, error) {
	var out []token
	rs := []rune(expr)
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case r == '"' || r == '\'' || r == '`':
			j := i + 1
			var b strings.Builder
			for ; j < len(rs) && rs[j] != r; j++ {
				if rs[j] == '\\' && r != '`' && j+1 < len(rs) {
					j++
					if rs[j] != r && rs[j] != '\\' {
						b.WriteRune('\\')
					}
				}
				b.WriteRune(rs[j])
			}
			if j >= len(rs) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			out = append(out, token{'s', b.String()})
			i = j + 1
		case r == '_' || r == ':' || unicode.IsLetter(r):
			j := i
			for j < len(rs) && (rs[j] == '_' || rs[j] == ':' || unicode.IsLetter(rs[j]) || unicode.IsDigit(rs[j])) {
				j++
			}
			out = append(out, token{'i', string(rs[i:j])})
			i = j
		case unicode.IsDigit(r) || r == '.':
			j := i
			for j < len(rs) && (unicode.IsDigit(rs[j]) || unicode.IsLetter(rs[j]) || rs[j] == '.') {
				j++
			}
			out = append(out, token{'n', string(rs[i:j])})
			i = j
		default:
			j := i + 1
			if j < len(rs) && strings.ContainsRune("=~", rs[j]) && strings.ContainsRune("=!<>", r) {
				j++
			}
			out = append(out, token{'p', string(rs[i:j])})
			i = j
		}
	}
	return out, nil
}

func readPromQL(expr string) (*promQL, error) {
	toks, err := lexPromQL(expr)
	if err != nil {
		return nil, err
	}
	q := &promQL{}
	at := func(i int) token {
		if i < len(toks) {
			return toks[i]
		}
		return token{}
	}
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		switch {
		case tk.kind == 'p' && tk.text == "[":
			for i < len(toks) && toks[i].text != "]" {
				i++
			}
		case tk.kind == 'p' && tk.text == "{":
			return nil, fmt.Errorf("a selector without a metric name at token %d", i)
		case tk.kind != 'i':
		case groupingWords[tk.text]:
			if at(i+1).text != "(" {
				continue // group_left without labels
			}
			i += 2
			for ; i < len(toks) && toks[i].text != ")"; i++ {
				if toks[i].kind == 'i' {
					q.grouping = append(q.grouping, toks[i].text)
				} else if toks[i].text != "," {
					return nil, fmt.Errorf("%q in the labels of %s", toks[i].text, tk.text)
				}
			}
		case keywords[tk.text]:
			if tk.text == "offset" {
				i++
			}
		case aggregations[tk.text]:
			q.aggregated = true
		case at(i+1).text == "(":
			// a function: its arguments follow
		default:
			s := selector{name: tk.text}
			if at(i+1).text == "{" {
				i += 2
				for ; i < len(toks) && toks[i].text != "}"; i++ {
					if toks[i].text == "," {
						continue
					}
					l, op, v := toks[i], at(i+1), at(i+2)
					if l.kind != 'i' || op.kind != 'p' || v.kind != 's' {
						return nil, fmt.Errorf("a matcher of %s is not label op \"value\"", s.name)
					}
					s.matchers = append(s.matchers, matcher{l.text, op.text, v.text})
					i += 2
				}
				if i >= len(toks) {
					return nil, fmt.Errorf("the matchers of %s are not closed", s.name)
				}
			}
			q.selectors = append(q.selectors, s)
		}
	}
	if len(q.selectors) == 0 {
		return nil, fmt.Errorf("no series selector in %q", expr)
	}
	return q, nil
}

// familyOf is the family a series name belongs to: a histogram's
// _bucket, _sum and _count series are its family's.
func familyOf(fams map[string]*dto.MetricFamily, name string) (*dto.MetricFamily, bool) {
	if f, ok := fams[name]; ok {
		return f, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if f, ok := fams[base]; ok && f.GetType() == dto.MetricType_HISTOGRAM {
				return f, true
			}
		}
	}
	return nil, false
}

// carries reports whether f's series carry label (a histogram's _bucket
// series carry le too).
func carries(f *dto.MetricFamily, label string) bool {
	if label == "le" && f.GetType() == dto.MetricType_HISTOGRAM {
		return true
	}
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				return true
			}
		}
	}
	return false
}

// serves reports whether f serves label=value, or names value in its HELP
// (a kind no incident has right now).
func serves(f *dto.MetricFamily, label, value string) bool {
	for _, m := range f.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label && l.GetValue() == value {
				return true
			}
		}
	}
	return containsWord(f.GetHelp(), value)
}

// check names what the expression uses that fams does not serve.
func (q *promQL) check(fams map[string]*dto.MetricFamily) []string {
	var problems []string
	for _, s := range q.selectors {
		if notOurs[s.name] {
			continue
		}
		f, ok := familyOf(fams, s.name)
		if !ok {
			problems = append(problems, s.name+" is not served")
			continue
		}
		for _, m := range s.matchers {
			switch {
			case !carries(f, m.label):
				problems = append(problems, fmt.Sprintf("%s does not carry label %s", s.name, m.label))
			case m.op == "=" && !serves(f, m.label, m.value):
				problems = append(problems, fmt.Sprintf("%s never has %s=%q", s.name, m.label, m.value))
			}
		}
		for _, l := range q.grouping {
			if !carries(f, l) {
				problems = append(problems, fmt.Sprintf("%s does not carry label %s, which the expression joins or groups on", s.name, l))
			}
		}
	}
	return problems
}

// keeps reports whether the series the expression evaluates to carry
// label: those of its first selector (a comparison or an and keeps its
// left side's), or, after an aggregation, the labels it groups by.
func (q *promQL) keeps(fams map[string]*dto.MetricFamily, label string) bool {
	if q.aggregated {
		return slices.Contains(q.grouping, label)
	}
	f, ok := familyOf(fams, q.selectors[0].name)
	return ok && carries(f, label)
}
