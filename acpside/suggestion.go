package acpside

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Suggestion is one suggestion from nes/suggest. Exactly one of the kind fields is set for a kind
// the bridge knows; for an unknown or malformed one none is, and Problem says why.
type Suggestion struct {
	ID   string
	Kind string

	Edit             *acp.UnstableNesSuggestionEdit
	Jump             *acp.UnstableNesSuggestionJump
	Rename           *acp.UnstableNesSuggestionRename
	SearchAndReplace *acp.UnstableNesSuggestionSearchAndReplace

	Problem string
	// Unknown is set for a kind the bridge does not know (with Problem): it is ignored, not an
	// error.
	Unknown bool
}

// DecodeSuggestions reads a nes/suggest result one suggestion at a time, so that one bad
// suggestion does not lose the others. A suggestion that repeats the id of an earlier one in the
// same answer is returned without its id (and a Problem): the id is the earlier one's, and must
// end once.
func DecodeSuggestions(raw json.RawMessage) ([]Suggestion, error) {
	var resp struct {
		Suggestions []jsontext.Value `json:"suggestions"`
	}
	if err := jsonv2.Unmarshal(raw, &resp, LenientJSON); err != nil {
		return nil, fmt.Errorf("nes/suggest result: %w", err)
	}
	return decodeEach(resp.Suggestions), nil
}

// decodeEach decodes each suggestion of an answer.
func decodeEach(raws []jsontext.Value) []Suggestion {
	out := make([]Suggestion, 0, len(raws))
	for _, r := range raws {
		out = append(out, decodeSuggestion(r))
	}
	dropRepeatedIDs(out)
	return out
}

// dropRepeatedIDs replaces each suggestion whose id an earlier one of the same answer has with one
// that says so: an id names one suggestion.
func dropRepeatedIDs(sugs []Suggestion) {
	seen := make(map[string]bool, len(sugs))
	for i, s := range sugs {
		if s.ID != "" && seen[s.ID] {
			sugs[i] = Suggestion{Kind: s.Kind, Problem: fmt.Sprintf("the id %q appears earlier in the same answer; this suggestion is dropped", s.ID)}
		}
		seen[s.ID] = true
	}
}

func decodeSuggestion(r jsontext.Value) Suggestion {
	var head struct {
		ID jsontext.Value `json:"id"`
		// SuggestionID is ACP's protocol version 2 draft's name for the id.
		SuggestionID jsontext.Value `json:"suggestionId"`
		Kind         any            `json:"kind"`
	}
	if kind := jsonKind(r); kind != "an object" {
		return Suggestion{Problem: kind + ", not a JSON object"}
	}
	if err := jsonv2.Unmarshal(r, &head, LenientJSON); err != nil {
		return Suggestion{Problem: "not a JSON object: " + err.Error()}
	}
	var s Suggestion
	if len(head.ID) == 0 {
		head.ID = head.SuggestionID
	}
	// The id first, so that a suggestion that is wrong in any other way can still end.
	var id string
	if !utf8.Valid(head.ID) || jsonv2.Unmarshal(head.ID, &id) != nil || id == "" {
		s.Problem = "missing or non-string id"
		if kind, ok := head.Kind.(string); ok {
			s.Kind = kind
		}
		return s
	}
	s.ID = id
	kind, ok := head.Kind.(string)
	if !ok {
		s.Problem = "the kind is not a string"
		return s
	}
	s.Kind = kind
	// JSON text is UTF-8: raw bytes that are not would read as U+FFFD, text the agent never meant.
	if !utf8.Valid(r) {
		s.Problem = fmt.Sprintf("the %s suggestion is not valid UTF-8", kind)
		return s
	}
	var err error
	switch kind {
	case "edit":
		s.Edit = new(acp.UnstableNesSuggestionEdit)
		err = jsonv2.Unmarshal(r, s.Edit, LenientJSON)
	case "jump":
		s.Jump = new(acp.UnstableNesSuggestionJump)
		err = jsonv2.Unmarshal(r, s.Jump, LenientJSON)
	case "rename":
		s.Rename = new(acp.UnstableNesSuggestionRename)
		err = jsonv2.Unmarshal(r, s.Rename, LenientJSON)
	case "searchAndReplace":
		s.SearchAndReplace = new(acp.UnstableNesSuggestionSearchAndReplace)
		err = jsonv2.Unmarshal(r, s.SearchAndReplace, LenientJSON)
	default:
		// Suggestion kinds are an open enum (ACP's protocol version 2 draft): a kind of a later
		// version is not an error.
		s.Unknown = true
		s.Problem = fmt.Sprintf("unknown suggestion kind %q", kind)
		return s
	}
	if err != nil {
		s.Edit, s.Jump, s.Rename, s.SearchAndReplace = nil, nil, nil, nil
		s.Problem = fmt.Sprintf("malformed %s suggestion: %v", kind, err)
	}
	return s
}

// LenientJSON are the options the messages on the way of every suggestion are read with, the
// agent's answers and the editor's params: the faster JSON v2 decoder, as leniently as
// encoding/json reads (names matched without regard to case, a repeated name's last value wins,
// invalid UTF-8 let through: here to be refused one suggestion at a time, in the editor's params
// a URI that is not open is refused with its own error).
var LenientJSON = jsonv2.JoinOptions(jsonv2.MatchCaseInsensitiveNames(true), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// jsonKind names the kind of a JSON value from its first byte.
func jsonKind(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "nothing"
	}
	switch c := b[0]; {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	default:
		return "a number"
	}
}

// decodeAnswer reads the whole answer line to a nes/suggest: the agent's error, or its
// suggestions (as DecodeSuggestions). An answer whose every suggestion is well formed, of a kind
// the bridge knows, is read in one typed pass (answerWire); any other takes the path that says
// what is wrong with each suggestion.
func decodeAnswer(line []byte) ([]Suggestion, error) {
	if sugs, ok := decodeAnswerAtOnce(line); ok {
		return sugs, nil
	}
	return decodeAnswerCarefully(line)
}

// decodeAnswerAtOnce is decodeAnswer's one pass; ok is false when the answer needs the careful
// path.
func decodeAnswerAtOnce(line []byte) ([]Suggestion, bool) {
	var fast answerWire
	if jsonv2.Unmarshal(line, &fast, strictUTF8JSON) != nil {
		return nil, false
	}
	return fast.suggestions()
}

// decodeAnswerCarefully reads each suggestion apart, so that it can say what is wrong with each.
func decodeAnswerCarefully(line []byte) ([]Suggestion, error) {
	var m struct {
		Result *struct {
			Suggestions []jsontext.Value `json:"suggestions"`
		} `json:"result"`
		Error *acp.RequestError `json:"error"`
	}
	if err := jsonv2.Unmarshal(line, &m, LenientJSON); err != nil {
		return nil, fmt.Errorf("nes/suggest result: %w", err)
	}
	if m.Error != nil {
		return nil, fmt.Errorf("nes/suggest: %w", m.Error)
	}
	if m.Result == nil {
		return nil, errors.New("nes/suggest: the answer has neither a result nor an error")
	}
	return decodeEach(m.Result.Suggestions), nil
}

// strictUTF8JSON are LenientJSON but for text that is not UTF-8, which fails the one-pass read
// (decodeAnswer) so that the suggestion is reported as the careful path does.
var strictUTF8JSON = jsonv2.JoinOptions(LenientJSON, jsontext.AllowInvalidUTF8(false))

// answerWire is an answer to nes/suggest with each suggestion read as the union of the members of
// every kind (the kinds share no member name with different types).
type answerWire struct {
	Result *struct {
		Suggestions []suggestionWire `json:"suggestions"`
	} `json:"result"`
	Error *acp.RequestError `json:"error"`
}

type suggestionWire struct {
	ID           jsontext.Value `json:"id"`
	SuggestionID jsontext.Value `json:"suggestionId"` // protocol version 2's name of the id
	Kind         string         `json:"kind"`
	URI          string         `json:"uri"`
	// edit
	Edits          []acp.UnstableNesTextEdit `json:"edits"`
	CursorPosition *acp.UnstablePosition     `json:"cursorPosition"`
	// jump, rename
	Position acp.UnstablePosition `json:"position"`
	NewName  string               `json:"newName"`
	// searchAndReplace
	Search  string `json:"search"`
	Replace string `json:"replace"`
	IsRegex *bool  `json:"isRegex"`
}

// suggestions turns the answer into suggestions; ok is false when it is not an answer the
// one-pass read can take whole: an error, no result, a suggestion without a string id or of
// another kind.
func (a *answerWire) suggestions() ([]Suggestion, bool) {
	if a.Error != nil || a.Result == nil {
		return nil, false
	}
	out := make([]Suggestion, 0, len(a.Result.Suggestions))
	for i := range a.Result.Suggestions {
		w := &a.Result.Suggestions[i]
		raw := w.ID
		if len(raw) == 0 {
			raw = w.SuggestionID
		}
		id, ok := wireString(raw)
		if !ok || id == "" {
			return nil, false
		}
		idField, _ := wireString(w.ID) // what the kind's own type reads: "" for a version 2 id
		s := Suggestion{ID: id, Kind: w.Kind}
		switch w.Kind {
		case "edit":
			s.Edit = &acp.UnstableNesSuggestionEdit{Id: idField, Kind: w.Kind, Uri: w.URI, Edits: w.Edits, CursorPosition: w.CursorPosition}
		case "jump":
			s.Jump = &acp.UnstableNesSuggestionJump{Id: idField, Kind: w.Kind, Uri: w.URI, Position: w.Position}
		case "rename":
			s.Rename = &acp.UnstableNesSuggestionRename{Id: idField, Kind: w.Kind, Uri: w.URI, Position: w.Position, NewName: w.NewName}
		case "searchAndReplace":
			s.SearchAndReplace = &acp.UnstableNesSuggestionSearchAndReplace{Id: idField, Kind: w.Kind, Uri: w.URI, Search: w.Search, Replace: w.Replace, IsRegex: w.IsRegex}
		default:
			return nil, false
		}
		out = append(out, s)
	}
	dropRepeatedIDs(out)
	return out, true
}

// wireString is the string a raw JSON value holds; ok is false for any other value.
func wireString(v jsontext.Value) (string, bool) {
	if v.Kind() != '"' {
		return "", false
	}
	b, err := jsontext.AppendUnquote(nil, v)
	return string(b), err == nil
}
