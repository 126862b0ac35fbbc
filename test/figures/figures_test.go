package figures

import (
	"strings"
	"testing"
)

// README.md's figures table parses, every row has a value, a unit and a
// noise, and a measurement outside the noise does not hold.
func TestREADMEFiguresParse(t *testing.T) {
	quoted := Quoted(t)
	for _, id := range []string{"binary", "rss", "rss-probe", "startup-go", "cuda-cpu", "rss-cuda"} {
		f, ok := quoted[id]
		if !ok {
			t.Errorf("README.md quotes no figure %q", id)
			continue
		}
		if f.Unit == "" || f.Value <= 0 || f.Noise <= 0 {
			t.Errorf("figure %s: %+v", id, f)
		}
		if f.Holds(f.Value*(1+2*f.Noise)) || !f.Holds(f.Value) {
			t.Errorf("figure %s: Holds does not follow its noise", id)
		}
	}
}

func TestParseRejectsAMalformedTable(t *testing.T) {
	for _, doc := range []string{
		"no table",
		"<!-- figures -->\n| `a` | b | 3 MiB | ±5% | c |\n",
		"<!-- figures -->\n| `a` | b | many | ±5% | c |\n<!-- /figures -->",
		"<!-- figures -->\n| `a` | b | 3 MiB | 5 | c |\n<!-- /figures -->",
		"<!-- figures -->\n| `a` | b | 3 MiB | ±5% | c |\n| `a` | b | 3 MiB | ±5% | c |\n<!-- /figures -->",
		"<!-- figures -->\n| `a` | b | 5.5 ms | ±50% | c |\n<!-- /figures -->",
		"<!-- figures -->\n| `a` | b | 2 s | ±50% | c |\n<!-- /figures -->",
	} {
		if _, err := Parse(doc); err == nil {
			t.Errorf("Parse(%q) accepted it", strings.ReplaceAll(doc, "\n", `\n`))
		}
	}
	f, err := Parse("<!-- figures -->\n| id | figure | value | noise | measured by |\n|---|---|---:|---:|---|\n| `s` | speed | 2.5x | ±40% | c |\n<!-- /figures -->")
	if err != nil || f["s"].Value != 2.5 || f["s"].Unit != "x" || f["s"].Noise != 0.4 {
		t.Errorf("Parse = %+v, %v", f, err)
	}
}

// Rows cuts a table out between its markers, in order, without its header
// and rule, and refuses a line of another shape.
func TestRowsCutsTheTableBetweenItsMarkers(t *testing.T) {
	doc := "before\n<!-- t -->\n| k | v |\n|---|---:|\n| `a` | 1 |\n\n| b | 2 |\n<!-- /t -->\n| c | 3 |\n"
	rows, err := Rows(doc, "t", "k", 2)
	if err != nil || len(rows) != 2 || rows[0][0] != "`a`" || rows[1][1] != "2" {
		t.Errorf("Rows = %q, %v", rows, err)
	}
	for _, bad := range []string{"<!-- t -->\n| a | 1 |\n", "<!-- t -->\n| a | 1 | 2 |\n<!-- /t -->", "<!-- t -->\n| k | v |\n<!-- /t -->", "<!-- t -->\nprose\n<!-- /t -->"} {
		if _, err := Rows(bad, "t", "k", 2); err == nil {
			t.Errorf("Rows(%q) accepted it", bad)
		}
	}
}
