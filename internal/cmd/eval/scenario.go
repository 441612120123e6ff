// Package eval measures how well the bridge's model agent (acp-lsp-bridge agent --model-url …)
// predicts the next edit: it replays recorded edits of small scenarios to the real agent over ACP,
// asks nes/suggest at the cursor, applies the suggestion and scores it against the edit a careful
// person would make next (exact matches, chrF of the changed lines, how often it spoke or kept
// quiet when it should, and the latency of nes/suggest).
//
// A scenario is one text file in a txtar-like format (FormatHelp describes it). The binary ships
// two sets (BuiltIn): next edits near the cursor (testdata/scenarios), for the formats that
// rewrite a region, and completions at the cursor (testdata/fim), for the fill-in-the-middle
// formats.
package eval

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The kinds of scenario: what the next edit is.
const (
	// KindFinishLine: the user is typing a line; the next edit finishes it.
	KindFinishLine = "finish-line"
	// KindSameChange: the user changed one place; the next edit makes the same change at the
	// other places of the same shape.
	KindSameChange = "same-change"
	// KindNewParameter: the user added a parameter to a function; the next edit passes it at
	// the callers.
	KindNewParameter = "new-parameter"
	// KindRename: the user renamed an identifier at one place; the next edit renames its other
	// occurrences in the same file.
	KindRename = "rename"
	// KindFix: the last edit broke something (a type, a use, a missing import); the next edit
	// fixes it.
	KindFix = "fix"
	// KindComplete: the next edit inserts text at the cursor and changes nothing else: a
	// completion, what a fill-in-the-middle model is asked for (the FIM set).
	KindComplete = "complete"
	// KindNothing: the user finished an edit and the code is complete: nothing should be
	// suggested.
	KindNothing = "nothing"
)

// Kinds lists the kinds in the order reports show them.
var Kinds = []string{KindFinishLine, KindSameChange, KindNewParameter, KindRename, KindFix, KindComplete, KindNothing}

// Cursor marks the cursor in the last recorded version of a scenario's document.
const Cursor = "‸"

// Ext is the file name extension of scenario files.
const Ext = ".txtar"

// FormatHelp describes the scenario file format (eval --help shows it).
const FormatHelp = `A scenario is one file ending in .txtar: a header of "key: value" lines, then sections, each
starting with a line "-- NAME --" and holding the text up to the next such line (every line of it
ends in a line break). Lines of the header that are empty or start with "#" are comments.

  name: go-finish-return          optional; default: the file name without .txtar
  kind: finish-line               finish-line, same-change, new-parameter, rename, fix, complete
                                  or nothing
  language: go                    the document's language id, as an editor sends it
  path: stats/mean.go             the document's path, relative, with "/"
  description: ...                optional, one line
  expect: none                    only for a scenario where nothing should be suggested
  diagnostic: 7 error: msg        optional, repeatable: a problem the editor shows in the last
                                  version (1-based line, severity, message)

  -- before --                    the document as it was opened (document/didOpen)
  -- edit --                      the document after one recorded edit (one document/didChange);
                                  repeat, oldest first; the last holds the cursor, marked ‸
  -- expect --                    the document after the next edit (not with "expect: none")
  -- open: lib/util.go --         optional, repeatable: another file open in the editor (opened
                                  first), its language from its extension

Kind nothing goes with "expect: none", every other kind with an "-- expect --" section that differs
from the last version; for kind complete, only by text inserted at the cursor. Each edit must
change the version before it. A document cannot hold a line that reads like a marker ("-- x --"),
nor end without a line break.`

// Example is a small scenario file, for the help.
const Example = `kind: finish-line
language: python
path: shop/cart.py
description: finish the sum over the cart's items

-- before --
def total(items):
    return 0
-- edit --
def total(items):
    return sum(item.price for item in ‸)
-- expect --
def total(items):
    return sum(item.price for item in items)
`

// The sets of scenarios the binary ships.
const (
	// SetNES is the next edits near the cursor (every kind but complete), for the formats that
	// rewrite a region around the cursor.
	SetNES = "nes"
	// SetFIM is the completions at the cursor (kinds complete and nothing), for the formats
	// that fill in the middle: the answer is inserted at the cursor.
	SetFIM = "fim"
)

// setDirs are the folders of the sets in embedded.
var setDirs = map[string]string{SetNES: "testdata/scenarios", SetFIM: "testdata/fim"}

//go:embed testdata/scenarios/*.txtar testdata/fim/*.txtar
var embedded embed.FS

// BuiltIn returns the scenarios of a set the binary ships (SetNES or SetFIM), sorted by file
// name.
func BuiltIn(set string) ([]*Scenario, error) {
	dir, ok := setDirs[set]
	if !ok {
		return nil, fmt.Errorf("no built-in set %q: want %s or %s", set, SetNES, SetFIM)
	}
	sub, err := fs.Sub(embedded, dir)
	if err != nil {
		return nil, err
	}
	return Load(sub, "")
}

// Embedded returns the NES set (BuiltIn(SetNES)).
func Embedded() ([]*Scenario, error) { return BuiltIn(SetNES) }

// Scenario is one recorded editing situation and the edit expected next.
type Scenario struct {
	// File names the scenario file (for messages).
	File        string
	Name        string
	Kind        string
	Description string
	Language    string
	// Path is the document's path relative to the workspace folder, with "/".
	Path string
	// Versions are the document as opened and after each recorded edit, oldest first (at least
	// two); the last is the text at the cursor, without the marker.
	Versions []string
	// CursorOffset is the cursor's byte offset in the last version.
	CursorOffset int
	// WantChange tells that an edit is expected; Expected is then the document after it.
	// Without it, Expected is the last version (nothing should change).
	WantChange bool
	Expected   string
	// Open are the other files open in the editor.
	Open []OpenFile
	// Diagnostics are the problems the editor shows in the last version.
	Diagnostics []Diagnostic
}

// Last is the document as it is when the suggestion is asked.
func (s *Scenario) Last() string { return s.Versions[len(s.Versions)-1] }

// OpenFile is another file open in the editor.
type OpenFile struct {
	Path, Language, Text string
}

// Diagnostic is a problem the editor shows.
type Diagnostic struct {
	Line     int // 0-based
	Severity string
	Message  string
}

// Load parses the scenario files (*.txtar) of dir in fsys, sorted by file name. It fails on the
// first malformed file, and when there is none.
func Load(fsys fs.FS, dir string) ([]*Scenario, error) {
	if dir == "" {
		dir = "."
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []*Scenario
	names := map[string]string{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), Ext) {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		s, err := Parse(e.Name(), data)
		if err != nil {
			return nil, err
		}
		if other, dup := names[s.Name]; dup {
			return nil, fmt.Errorf("%s: the name %q is also the name of %s", e.Name(), s.Name, other)
		}
		names[s.Name] = e.Name()
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scenario files (*%s)", Ext)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}

// ParseError is a malformed scenario file: the file and the line (1-based; 0 for the file as a
// whole).
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// section is one "-- NAME --" section of a file.
type section struct {
	name string
	arg  string // for "open: PATH"
	line int    // of the marker
	text string
}

// Parse reads one scenario file; file names it in errors.
func Parse(file string, data []byte) (*Scenario, error) {
	fail := func(line int, format string, args ...any) error {
		return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if !utf8.Valid(data) {
		return nil, fail(0, "not valid UTF-8")
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}

	s := &Scenario{File: file}
	header := map[string]int{} // key → line
	var diagLines []int
	var sections []*section
	for i, l := range lines {
		n := i + 1
		if name, arg, ok := marker(l); ok {
			sections = append(sections, &section{name: name, arg: arg, line: n})
			continue
		}
		if len(sections) > 0 {
			cur := sections[len(sections)-1]
			cur.text += l
			if !strings.HasSuffix(l, "\n") {
				cur.text += "\n"
			}
			continue
		}
		body := strings.TrimSpace(l)
		if body == "" || strings.HasPrefix(body, "#") {
			continue
		}
		if strings.HasPrefix(body, "--") {
			return nil, fail(n, "%q is not a section marker: want \"-- NAME --\" (before, edit, expect or open: PATH)", body)
		}
		key, value, ok := strings.Cut(body, ":")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			return nil, fail(n, "want \"key: value\" in the header, got %q", body)
		}
		if prev, dup := header[key]; dup && key != "diagnostic" {
			return nil, fail(n, "%s given twice (first on line %d)", key, prev)
		}
		header[key] = n
		if value == "" {
			return nil, fail(n, "%s: no value", key)
		}
		switch key {
		case "name":
			s.Name = value
		case "kind":
			if !slices.Contains(Kinds, value) {
				return nil, fail(n, "kind %q: want one of %s", value, strings.Join(Kinds, ", "))
			}
			s.Kind = value
		case "language":
			s.Language = value
		case "path":
			if why := badPath(value); why != "" {
				return nil, fail(n, "path %q: %s", value, why)
			}
			s.Path = value
		case "description":
			s.Description = value
		case "expect":
			if value != "none" {
				return nil, fail(n, "expect %q: the only value is \"none\" (nothing should be suggested); an expected text goes in an \"-- expect --\" section", value)
			}
		case "diagnostic":
			d, err := parseDiagnostic(value)
			if err != nil {
				return nil, fail(n, "diagnostic %q: %v", value, err)
			}
			s.Diagnostics = append(s.Diagnostics, d)
			diagLines = append(diagLines, n)
		default:
			return nil, fail(n, "unknown header key %q (want name, kind, language, path, description, expect or diagnostic)", key)
		}
	}
	for _, k := range []string{"kind", "language", "path"} {
		if _, ok := header[k]; !ok {
			return nil, fail(1, "the header has no %q line", k)
		}
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(path.Base(file), Ext)
	}
	_, expectNone := header["expect"]

	// The sections: before, then edits, then expect (unless expect: none), and open files
	// anywhere.
	var expectLine, cursorLine int
	openPaths := map[string]int{s.Path: header["path"]}
	for _, sec := range sections {
		switch sec.name {
		case "before":
			if len(s.Versions) > 0 {
				return nil, fail(sec.line, "a second \"-- before --\" section; each recorded edit goes in an \"-- edit --\" section")
			}
			s.Versions = append(s.Versions, sec.text)
		case "edit":
			if len(s.Versions) == 0 {
				return nil, fail(sec.line, "an \"-- edit --\" section before \"-- before --\"")
			}
			if expectLine > 0 {
				return nil, fail(sec.line, "an \"-- edit --\" section after \"-- expect --\"")
			}
			if strings.Contains(s.Versions[len(s.Versions)-1], Cursor) {
				return nil, fail(cursorLine, "the cursor %s is in an edit that is not the last; mark it in the last only", Cursor)
			}
			t := sec.text
			if strings.Contains(t, Cursor) {
				cursorLine = sec.line + 1 + strings.Count(t[:strings.Index(t, Cursor)], "\n")
				if strings.Count(t, Cursor) > 1 {
					return nil, fail(cursorLine, "the cursor %s is marked more than once", Cursor)
				}
				t = strings.Replace(t, Cursor, "", 1)
			}
			if t == s.Versions[len(s.Versions)-1] {
				return nil, fail(sec.line, "this edit changes nothing: it is the same as the version before it")
			}
			s.Versions = append(s.Versions, sec.text)
		case "expect":
			if expectLine > 0 {
				return nil, fail(sec.line, "a second \"-- expect --\" section (first on line %d)", expectLine)
			}
			if expectNone {
				return nil, fail(sec.line, "an \"-- expect --\" section in a scenario with \"expect: none\" (line %d)", header["expect"])
			}
			if len(s.Versions) < 2 {
				return nil, fail(sec.line, "\"-- expect --\" before any \"-- edit --\" section")
			}
			expectLine = sec.line
			s.Expected = sec.text
		case "open":
			if why := badPath(sec.arg); why != "" {
				return nil, fail(sec.line, "open file %q: %s", sec.arg, why)
			}
			if prev, dup := openPaths[sec.arg]; dup {
				return nil, fail(sec.line, "%s is already open (line %d)", sec.arg, prev)
			}
			openPaths[sec.arg] = sec.line
			s.Open = append(s.Open, OpenFile{Path: sec.arg, Language: LanguageOf(sec.arg), Text: sec.text})
		default:
			return nil, fail(sec.line, "unknown section %q: want before, edit, expect or open: PATH", sec.name)
		}
		if sec.name != "edit" && strings.Contains(sec.text, Cursor) {
			at := sec.line + 1 + strings.Count(sec.text[:strings.Index(sec.text, Cursor)], "\n")
			return nil, fail(at, "the cursor %s belongs in the last \"-- edit --\" section only", Cursor)
		}
	}
	switch {
	case len(s.Versions) == 0:
		return nil, fail(0, "no \"-- before --\" section")
	case len(s.Versions) == 1:
		return nil, fail(0, "no \"-- edit --\" section: the agent must see at least one recorded edit")
	case cursorLine == 0:
		return nil, fail(0, "no cursor: mark it with %s in the last \"-- edit --\" section", Cursor)
	}
	last := s.Versions[len(s.Versions)-1]
	s.CursorOffset = strings.Index(last, Cursor)
	s.Versions[len(s.Versions)-1] = strings.Replace(last, Cursor, "", 1)
	last = s.Last()

	switch {
	case expectNone:
		s.Expected = last
	case expectLine == 0:
		return nil, fail(0, "no \"-- expect --\" section: give the text after the next edit, or \"expect: none\" in the header when nothing should be suggested")
	case s.Expected == last:
		return nil, fail(expectLine, "the expected text is the last version: write \"expect: none\" in the header when nothing should be suggested")
	default:
		s.WantChange = true
	}
	if s.Kind == KindNothing && s.WantChange {
		return nil, fail(header["kind"], "kind nothing expects no change: use \"expect: none\" and no \"-- expect --\" section")
	}
	if s.Kind != KindNothing && !s.WantChange {
		return nil, fail(header["kind"], "kind %s expects a change: give an \"-- expect --\" section", s.Kind)
	}
	if s.Kind == KindComplete && !insertedAt(last, s.CursorOffset, s.Expected) {
		return nil, fail(expectLine, "kind complete expects text inserted at the cursor and nothing else changed: the expected text must be the last version with text added where %s is", Cursor)
	}
	nl := strings.Count(last, "\n") + 1
	for i, d := range s.Diagnostics {
		if d.Line >= nl {
			return nil, fail(diagLines[i], "diagnostic on line %d: the last version has %d lines", d.Line+1, nl)
		}
	}
	return s, nil
}

// insertedAt tells that after is before with text inserted at offset at.
func insertedAt(before string, at int, after string) bool {
	return len(after) > len(before) && strings.HasPrefix(after, before[:at]) && strings.HasSuffix(after, before[at:])
}

// marker reads a section marker line, "-- NAME --" or "-- open: PATH --".
func marker(l string) (name, arg string, ok bool) {
	l = strings.TrimRight(l, "\n")
	if !strings.HasPrefix(l, "-- ") || !strings.HasSuffix(l, " --") || len(l) < 7 {
		return "", "", false
	}
	name = strings.TrimSpace(l[3 : len(l)-3])
	if n, a, found := strings.Cut(name, ":"); found {
		return strings.TrimSpace(n), strings.TrimSpace(a), true
	}
	return name, "", true
}

// badPath says why p cannot be a scenario's file path, or "".
func badPath(p string) string {
	switch {
	case p == "":
		return "empty"
	case strings.Contains(p, `\`):
		return `use "/", not "\"`
	case strings.HasPrefix(p, "/") || (len(p) > 1 && p[1] == ':'):
		return "want a relative path"
	case path.Clean(p) != p || p == "." || strings.HasPrefix(p, "../") || p == "..":
		return "want a clean relative path inside the workspace (no . or .. parts)"
	}
	return ""
}

// parseDiagnostic reads "LINE SEVERITY: MESSAGE".
func parseDiagnostic(v string) (Diagnostic, error) {
	num, rest, ok := strings.Cut(v, " ")
	sev, msg, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return Diagnostic{}, fmt.Errorf("want \"LINE SEVERITY: MESSAGE\", such as \"7 error: undefined: x\"")
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 {
		return Diagnostic{}, fmt.Errorf("the line %q is not a number from 1", num)
	}
	sev = strings.TrimSpace(sev)
	switch sev {
	case "error", "warning", "information", "hint":
	default:
		return Diagnostic{}, fmt.Errorf("severity %q: want error, warning, information or hint", sev)
	}
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return Diagnostic{}, fmt.Errorf("no message")
	}
	return Diagnostic{Line: n - 1, Severity: sev, Message: msg}, nil
}

// languages maps file name extensions to the language ids editors send.
var languages = map[string]string{
	".go": "go", ".py": "python", ".ts": "typescript", ".tsx": "typescriptreact", ".js": "javascript",
	".jsx": "javascriptreact", ".mjs": "javascript", ".rs": "rust", ".java": "java", ".kt": "kotlin",
	".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".rb": "ruby",
	".lua": "lua", ".php": "php", ".swift": "swift", ".sh": "shellscript", ".md": "markdown",
	".json": "json", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".sql": "sql", ".zig": "zig",
}

// LanguageOf is the language id of a file from its extension ("plaintext" when unknown).
func LanguageOf(p string) string {
	if l, ok := languages[strings.ToLower(path.Ext(p))]; ok {
		return l
	}
	return "plaintext"
}
