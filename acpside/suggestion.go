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
	seen := map[string]bool{}
	for _, r := range raws {
		s := decodeSuggestion(r)
		if s.ID != "" && seen[s.ID] {
			s = Suggestion{Kind: s.Kind, Problem: fmt.Sprintf("the id %q appears earlier in the same answer; this suggestion is dropped", s.ID)}
		}
		seen[s.ID] = true
		out = append(out, s)
	}
	return out
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

// decodeAnswer reads the whole answer line to a nes/suggest in one pass: the agent's error, or
// its suggestions (as DecodeSuggestions).
func decodeAnswer(line []byte) ([]Suggestion, error) {
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
