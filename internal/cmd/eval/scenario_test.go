package eval

import (
	"errors"
	"go/format"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

const goodScenario = `# A comment line.
name: tiny
kind: finish-line
language: go
path: pkg/a.go
description: finish the call
diagnostic: 4 error: undefined: Printl

-- open: pkg/b.go --
package pkg
-- before --
package pkg

func f() {
}
-- edit --
package pkg

func f() {
	fmt.Print
}
-- edit --
package pkg

func f() {
	fmt.Printl‸
}
-- expect --
package pkg

func f() {
	fmt.Println()
}
`

func TestParseGood(t *testing.T) {
	s, err := Parse("tiny.txtar", []byte(goodScenario))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "tiny" || s.Kind != KindFinishLine || s.Language != "go" || s.Path != "pkg/a.go" || s.Description != "finish the call" {
		t.Errorf("header: %+v", s)
	}
	if len(s.Versions) != 3 {
		t.Fatalf("%d versions, want 3", len(s.Versions))
	}
	if s.Versions[0] != "package pkg\n\nfunc f() {\n}\n" {
		t.Errorf("before %q", s.Versions[0])
	}
	last := "package pkg\n\nfunc f() {\n\tfmt.Printl\n}\n"
	if s.Last() != last {
		t.Errorf("last %q (the cursor marker must be gone)", s.Last())
	}
	if s.CursorOffset != strings.Index(last, "Printl")+len("Printl") {
		t.Errorf("cursor at %d", s.CursorOffset)
	}
	if !s.WantChange || s.Expected != "package pkg\n\nfunc f() {\n\tfmt.Println()\n}\n" {
		t.Errorf("expected %q (want change %v)", s.Expected, s.WantChange)
	}
	if len(s.Open) != 1 || s.Open[0].Path != "pkg/b.go" || s.Open[0].Language != "go" || s.Open[0].Text != "package pkg\n" {
		t.Errorf("open %+v", s.Open)
	}
	if len(s.Diagnostics) != 1 || s.Diagnostics[0] != (Diagnostic{Line: 3, Severity: "error", Message: "undefined: Printl"}) {
		t.Errorf("diagnostics %+v", s.Diagnostics)
	}
}

func TestParseExample(t *testing.T) {
	s, err := Parse("example.txtar", []byte(Example))
	if err != nil {
		t.Fatal(err)
	}
	if !s.WantChange || len(s.Versions) != 2 || s.Last()[s.CursorOffset:] != ")\n" {
		t.Errorf("%+v", s)
	}
}

func TestParseNothingExpected(t *testing.T) {
	src := "kind: nothing\nlanguage: python\npath: a.py\nexpect: none\n-- before --\nx = 1\n-- edit --\nx = 12‸\n"
	s, err := Parse("quiet.txtar", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "quiet" || s.WantChange || s.Expected != "x = 12\n" || s.Expected != s.Last() || s.CursorOffset != 6 {
		t.Errorf("%+v", s)
	}
}

// A completion at the cursor: the expected text is the last version with text inserted there.
func TestParseComplete(t *testing.T) {
	src := "kind: complete\nlanguage: go\npath: a.go\n-- before --\nx\n-- edit --\nx = a‸\n-- expect --\nx = a + b\n"
	s, err := Parse("fim.txtar", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != KindComplete || !s.WantChange || s.CursorOffset != 5 || s.Expected != "x = a + b\n" {
		t.Errorf("%+v", s)
	}
}

// Each malformed file is refused with the file, the line and what is wrong.
func TestParseMalformed(t *testing.T) {
	const head = "kind: finish-line\nlanguage: go\npath: a.go\n"
	for _, tc := range []struct {
		name, src, want string
	}{
		{"no sections", head, "bad.txtar: no \"-- before --\" section"},
		{"not key value", "kind finish-line\n", "bad.txtar:1: want \"key: value\""},
		{"unknown key", head + "color: red\n", "bad.txtar:4: unknown header key \"color\""},
		{"unknown kind", "kind: refactor\n", "bad.txtar:1: kind \"refactor\": want one of finish-line"},
		{"twice", head + "kind: fix\n", "bad.txtar:4: kind given twice (first on line 1)"},
		{"missing key", "kind: fix\nlanguage: go\n-- before --\na\n", "bad.txtar:1: the header has no \"path\" line"},
		{"absolute path", "path: /etc/x.go\n", "bad.txtar:1: path \"/etc/x.go\": want a relative path"},
		{"dotdot path", "path: ../x.go\n", "bad.txtar:1: path \"../x.go\": want a clean relative path"},
		{"bad marker", head + "--before--\n", "bad.txtar:4: \"--before--\" is not a section marker"},
		{"unknown section", head + "-- before --\na\n-- after --\nb\n", "bad.txtar:6: unknown section \"after\""},
		{"edit first", head + "-- edit --\na‸\n", "bad.txtar:4: an \"-- edit --\" section before \"-- before --\""},
		{"no edit", head + "-- before --\na\n-- expect --\nb\n", "bad.txtar:6: \"-- expect --\" before any \"-- edit --\" section"},
		{"no cursor", head + "-- before --\na\n-- edit --\nb\n-- expect --\nc\n", "bad.txtar: no cursor"},
		{"two cursors", head + "-- before --\na\n-- edit --\nb‸\nc‸\n-- expect --\nc\n", "bad.txtar:7: the cursor ‸ is marked more than once"},
		{"cursor early", head + "-- before --\na\n-- edit --\nb‸\n-- edit --\nc\n-- expect --\nd\n", "bad.txtar:7: the cursor ‸ is in an edit that is not the last"},
		{"cursor in expect", head + "-- before --\na\n-- edit --\nb‸\n-- expect --\nc‸\n", "bad.txtar:9: the cursor ‸ belongs in the last \"-- edit --\" section only"},
		{"edit changes nothing", head + "-- before --\na\n-- edit --\na‸\n", "bad.txtar:6: this edit changes nothing"},
		{"no expect", head + "-- before --\na\n-- edit --\nb‸\n", "bad.txtar: no \"-- expect --\" section"},
		{"expect is last", head + "-- before --\na\n-- edit --\nb‸\n-- expect --\nb\n", "bad.txtar:8: the expected text is the last version: write \"expect: none\""},
		{"expect none with section", head + "expect: none\n-- before --\na\n-- edit --\nb‸\n-- expect --\nc\n", "bad.txtar:9: an \"-- expect --\" section in a scenario with \"expect: none\" (line 4)"},
		{"expect other", "expect: something\n", "bad.txtar:1: expect \"something\": the only value is \"none\""},
		{"nothing with change", "kind: nothing\nlanguage: go\npath: a.go\n-- before --\na\n-- edit --\nb‸\n-- expect --\nc\n", "bad.txtar:1: kind nothing expects no change"},
		{"change without expect", head + "expect: none\n-- before --\na\n-- edit --\nb‸\n", "bad.txtar:1: kind finish-line expects a change"},
		{"two expects", head + "-- before --\na\n-- edit --\nb‸\n-- expect --\nc\n-- expect --\nd\n", "bad.txtar:10: a second \"-- expect --\" section (first on line 8)"},
		{"edit after expect", head + "-- before --\na\n-- edit --\nb‸\n-- expect --\nc\n-- edit --\nd\n", "bad.txtar:10: an \"-- edit --\" section after \"-- expect --\""},
		{"second before", head + "-- before --\na\n-- before --\nb\n", "bad.txtar:6: a second \"-- before --\" section"},
		{"open twice", head + "-- open: b.go --\nx\n-- open: b.go --\ny\n", "bad.txtar:6: b.go is already open (line 4)"},
		{"open is the document", head + "-- open: a.go --\nx\n", "bad.txtar:4: a.go is already open (line 3)"},
		{"bad diagnostic", head + "diagnostic: x error: y\n", "bad.txtar:4: diagnostic \"x error: y\": the line \"x\" is not a number"},
		{"diagnostic severity", head + "diagnostic: 1 fatal: y\n", "bad.txtar:4: diagnostic \"1 fatal: y\": severity \"fatal\""},
		{"diagnostic past the end", head + "diagnostic: 9 error: y\n-- before --\na\n-- edit --\nb‸\n-- expect --\nc\n", "bad.txtar:4: diagnostic on line 9: the last version has 2 lines"},
		{"empty value", "kind:\n", "bad.txtar:1: kind: no value"},
		{"not utf-8", "kind: \xff\n", "bad.txtar: not valid UTF-8"},
		{"complete changes more", "kind: complete\nlanguage: go\npath: a.go\n-- before --\nx\n-- edit --\nx = a‸\n-- expect --\ny = a + b\n", "bad.txtar:8: kind complete expects text inserted at the cursor and nothing else changed"},
		{"complete inserts elsewhere", "kind: complete\nlanguage: go\npath: a.go\n-- before --\nx\n-- edit --\nx‸ = a\n-- expect --\nx = a + b\n", "bad.txtar:8: kind complete expects text inserted at the cursor"},
	} {
		_, err := Parse("bad.txtar", []byte(tc.src))
		var pe *ParseError
		if err == nil || !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one starting %q", tc.name, err, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"b.txtar":   {Data: []byte(goodScenario)},
		"a.txtar":   {Data: []byte(strings.Replace(goodScenario, "name: tiny", "name: other", 1))},
		"notes.txt": {Data: []byte("not a scenario")},
	}
	ss, err := Load(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 2 || ss[0].File != "a.txtar" || ss[1].File != "b.txtar" {
		t.Errorf("loaded %d, first %s", len(ss), ss[0].File)
	}
	fsys["c.txtar"] = &fstest.MapFile{Data: []byte(goodScenario)}
	if _, err := Load(fsys, "."); err == nil || !strings.Contains(err.Error(), `c.txtar: the name "tiny" is also the name of b.txtar`) {
		t.Errorf("duplicate names: %v", err)
	}
	delete(fsys, "c.txtar")
	fsys["d.txtar"] = &fstest.MapFile{Data: []byte("kind: fix\nbogus\n")}
	if _, err := Load(fsys, "."); err == nil || err.Error() != `d.txtar:2: want "key: value" in the header, got "bogus"` {
		t.Errorf("malformed: %v", err)
	}
	if _, err := Load(fstest.MapFS{"x.txt": {}}, "."); err == nil || !strings.Contains(err.Error(), "no scenario files") {
		t.Errorf("empty: %v", err)
	}
}

// checkSet checks what every built-in set must be: each scenario consistent and described, its
// language its path's, its path and its document its own, Go left as gofmt leaves it. It returns
// the count of each kind and the languages of each.
func checkSet(t *testing.T, ss []*Scenario) (kinds map[string]int, langs map[string]map[string]bool) {
	t.Helper()
	kinds = map[string]int{}
	langs = map[string]map[string]bool{}
	paths := map[string]string{}
	docs := map[string]string{}
	for _, s := range ss {
		kinds[s.Kind]++
		if langs[s.Kind] == nil {
			langs[s.Kind] = map[string]bool{}
		}
		langs[s.Kind][s.Language] = true
		// The expected text differs from the last version exactly when a change is expected.
		if s.WantChange != (s.Expected != s.Last()) {
			t.Errorf("%s: want change %v, but expected == last is %v", s.Name, s.WantChange, s.Expected == s.Last())
		}
		if s.WantChange != (s.Kind != KindNothing) {
			t.Errorf("%s: kind %s, want change %v", s.Name, s.Kind, s.WantChange)
		}
		if s.Description == "" {
			t.Errorf("%s: no description", s.Name)
		}
		if LanguageOf(s.Path) != s.Language {
			t.Errorf("%s: language %s, but the path %s says %s", s.Name, s.Language, s.Path, LanguageOf(s.Path))
		}
		if other, dup := paths[s.Path]; dup {
			t.Errorf("%s: path %s is also %s's", s.Name, s.Path, other)
		}
		paths[s.Path] = s.Name
		// A fake model finds the scenario a prompt is of by its document.
		if other, dup := docs[s.Last()]; dup {
			t.Errorf("%s: the same document as %s", s.Name, other)
		}
		docs[s.Last()] = s.Name
		// What a careful Go programmer leaves is formatted.
		if s.Language == "go" {
			if out, err := format.Source([]byte(s.Expected)); err != nil || string(out) != s.Expected {
				t.Errorf("%s: the expected text is not gofmt's: %v\n%s", s.Name, err, out)
			}
		}
		if !slices.Contains(Kinds, s.Kind) {
			t.Errorf("%s: unknown kind %s", s.Name, s.Kind)
		}
	}
	return kinds, langs
}

// The NES set: enough scenarios, every kind but complete covered in several languages, and each
// one consistent.
func TestEmbeddedScenarios(t *testing.T) {
	ss, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) < 20 {
		t.Errorf("%d scenarios, want at least 20", len(ss))
	}
	kinds, langs := checkSet(t, ss)
	for _, k := range Kinds {
		if k == KindComplete {
			if kinds[k] > 0 {
				t.Errorf("%d completions at the cursor in the NES set: they belong in the FIM set", kinds[k])
			}
			continue
		}
		if kinds[k] < 4 {
			t.Errorf("kind %s: %d scenarios, want at least 4", k, kinds[k])
		}
		for _, l := range []string{"go", "python", "rust"} {
			if !langs[k][l] {
				t.Errorf("kind %s has no %s scenario", k, l)
			}
		}
		if !langs[k]["typescript"] && !langs[k]["javascript"] {
			t.Errorf("kind %s has no TypeScript or JavaScript scenario", k)
		}
	}
	if kinds[KindNothing] < 3 {
		t.Errorf("%d scenarios where nothing is to be done, want several", kinds[KindNothing])
	}
	others := 0
	for _, s := range ss {
		if !slices.Contains([]string{"go", "python", "typescript", "javascript", "rust"}, s.Language) {
			others++
		}
	}
	if others < 2 {
		t.Errorf("%d scenarios in other languages, want some", others)
	}
}

// The FIM set: only completions at the cursor and cases where nothing is to be inserted, a dozen
// completions or more in six languages, and each one consistent.
func TestBuiltInFIMScenarios(t *testing.T) {
	ss, err := BuiltIn(SetFIM)
	if err != nil {
		t.Fatal(err)
	}
	kinds, langs := checkSet(t, ss)
	if kinds[KindComplete] < 12 || kinds[KindNothing] < 3 || len(kinds) != 2 {
		t.Errorf("kinds %v: want at least 12 completions, at least 3 where nothing is to be inserted, and no other kind", kinds)
	}
	for _, l := range []string{"go", "python", "typescript", "javascript", "c", "rust", "java"} {
		if !langs[KindComplete][l] {
			t.Errorf("no completion in %s", l)
		}
	}
	if len(langs[KindNothing]) < 3 {
		t.Errorf("the cases where nothing is to be inserted are in %d languages, want 3 or more", len(langs[KindNothing]))
	}
	for _, s := range ss {
		if s.Kind != KindComplete {
			continue
		}
		// The completion: what is inserted at the cursor (the parser checks it is only that).
		ins := s.Expected[s.CursorOffset : len(s.Expected)-(len(s.Last())-s.CursorOffset)]
		if strings.TrimSpace(ins) == "" || strings.HasSuffix(ins, "\n") {
			t.Errorf("%s: the completion %q is empty or ends its line: a FIM answer's trailing line breaks are dropped", s.Name, ins)
		}
	}
	if _, err := BuiltIn("zeta"); err == nil || !strings.Contains(err.Error(), `no built-in set "zeta": want nes or fim`) {
		t.Errorf("an unknown set: %v", err)
	}
}
