package model

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// streamKind is how a server writes a streamed answer.
type streamKind int

const (
	// sseCompletion: OpenAI's /v1/completions, server-sent events of {choices:[{text}]}, ended
	// by "data: [DONE]".
	sseCompletion streamKind = iota
	// sseChat: /v1/chat/completions, events of {choices:[{delta:{content}}]}.
	sseChat
	// sseLlama: llama-server's /infill, events of {content, stop, timings}. The bridge asks
	// /infill for no stream ("stream": false, infillRequest); this reads one only from a server
	// that streams all the same (postAs reads any answer whose Content-Type is a stream's).
	sseLlama
	// ndjsonOllama: Ollama's /api/generate and /api/chat, one JSON object a line: {response,
	// done, done_reason}, or for a chat {message:{content}, done, done_reason}.
	ndjsonOllama
)

// streamKindOf is how the server at endpoint streams: by the endpoint's path.
func streamKindOf(endpoint string) streamKind {
	p := redacted(endpoint)
	switch {
	case strings.HasSuffix(p, "/api/generate"), strings.HasSuffix(p, "/api/chat"):
		return ndjsonOllama
	case strings.HasSuffix(p, "/infill"):
		return sseLlama
	case strings.HasSuffix(p, "/chat/completions"), strings.HasSuffix(p, "/edit/completions"):
		return sseChat
	}
	return sseCompletion
}

// streamed says whether a response is a stream (by its Content-Type): a server that ignores
// "stream": true answers one JSON object, which its reader reads as before.
func streamed(contentType string) bool {
	ct := strings.ToLower(contentType)
	return strings.HasPrefix(ct, "text/event-stream") || strings.HasPrefix(ct, "application/x-ndjson")
}

// errStreamTooLarge is a stream that went on past maxAnswerBytes.
var errStreamTooLarge = fmt.Errorf("more than %d bytes", maxAnswerBytes)

// readStream reads a streamed answer to its end, handing each piece of text to onText as it
// comes (nil: none), and returns the whole: its text, why it ended and llama-server's timings. A
// malformed event, an error event, or more than maxAnswerBytes in all ends it with an error; a
// stream cut before its end (no [DONE], no final event) is an error too, so that an answer cut
// by the network is not taken for a whole one.
func readStream(body io.Reader, kind streamKind, onText func(string)) (parsed, error) {
	var out parsed
	var text strings.Builder
	total := 0
	ended := false
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), maxAnswerBytes)
	add := func(s string) error {
		if s == "" {
			return nil
		}
		if text.Len()+len(s) > maxAnswerBytes {
			return errStreamTooLarge
		}
		text.WriteString(s)
		if onText != nil {
			onText(s)
		}
		return nil
	}
	for sc.Scan() {
		line := sc.Bytes()
		total += len(line) + 1
		if total > 2*maxAnswerBytes {
			return out, errStreamTooLarge
		}
		var data []byte
		if kind == ndjsonOllama {
			data = bytes.TrimSpace(line)
		} else {
			// Server-sent events: only "data:" lines carry anything; comments (":"), "event:",
			// "id:" and blank lines between events are skipped.
			rest, ok := bytes.CutPrefix(line, []byte("data:"))
			if !ok {
				continue
			}
			data = bytes.TrimSpace(rest)
			if string(data) == "[DONE]" {
				ended = true
				break
			}
		}
		if len(data) == 0 {
			continue
		}
		ev, err := readEvent(kind, data)
		if err != nil {
			return out, err
		}
		if err := add(ev.text); err != nil {
			return out, err
		}
		if ev.finish != "" {
			out.finish = ev.finish
		}
		if ev.timings != nil {
			out.timings = ev.timings
		}
		if ev.fingerprint != "" {
			out.fingerprint = ev.fingerprint
		}
		if ev.done {
			ended = true
			if kind != sseCompletion && kind != sseChat {
				break // llama-server's and Ollama's last event: nothing follows
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return out, errStreamTooLarge
		}
		return out, err
	}
	out.text = text.String()
	if !ended {
		return out, errors.New("a stream that ended before its last event")
	}
	return out, nil
}

// streamEvent is what one event of a stream says: its text, its finish reason ("length" for an answer
// cut by its bound on tokens), llama-server's timings, whether it is the last, and the server's
// system_fingerprint (which tells Ollama's OpenAI layer apart).
type streamEvent struct {
	text, finish string
	timings      *Timings
	done         bool
	fingerprint  string
}

// readEvent reads one event of a stream.
func readEvent(kind streamKind, data []byte) (streamEvent, error) {
	var ev struct {
		Choices []struct {
			Text  *string `json:"text"`
			Delta struct {
				Content json.RawMessage `json:"content"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		SystemFingerprint string   `json:"system_fingerprint"`
		Content           *string  `json:"content"`
		Stop              bool     `json:"stop"`
		StopType          string   `json:"stop_type"`
		StoppedLimit      bool     `json:"stopped_limit"`
		Timings           *Timings `json:"timings"`
		Response          *string  `json:"response"`
		Message           *struct {
			Content string `json:"content"`
		} `json:"message"`
		Done       bool            `json:"done"`
		DoneReason string          `json:"done_reason"`
		Error      json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return streamEvent{}, fmt.Errorf("a malformed event (%v): %s", err, preview(data))
	}
	if len(ev.Error) > 0 && string(ev.Error) != "null" {
		return streamEvent{}, fmt.Errorf("an error: %s", errorText(data))
	}
	switch kind {
	case sseCompletion, sseChat:
		out := streamEvent{timings: ev.Timings, fingerprint: ev.SystemFingerprint}
		if len(ev.Choices) == 0 {
			return out, nil // a usage event, say, or llama-server's timings
		}
		c := ev.Choices[0]
		if c.Text != nil {
			out.text = *c.Text
		} else if len(c.Delta.Content) > 0 {
			// A chat delta; Mistral's FIM streams its completion so too.
			s, err := contentText(c.Delta.Content)
			if err != nil {
				return streamEvent{}, fmt.Errorf("a malformed delta (%v): %s", err, preview(data))
			}
			out.text = s
		}
		if c.FinishReason != nil {
			out.finish, out.done = *c.FinishReason, *c.FinishReason != ""
		}
		return out, nil
	case sseLlama:
		out := streamEvent{timings: ev.Timings, done: ev.Stop}
		if ev.Content != nil {
			out.text = *ev.Content
		}
		if ev.Stop {
			out.finish = "stop"
			if ev.StopType == "limit" || ev.StoppedLimit {
				out.finish = "length"
			}
		}
		return out, nil
	default:
		out := streamEvent{done: ev.Done}
		switch {
		case ev.Response != nil:
			out.text = *ev.Response
		case ev.Message != nil:
			out.text = ev.Message.Content
		case !ev.Done:
			return streamEvent{}, fmt.Errorf("an event without response or message: %s", preview(data))
		}
		if ev.Done {
			out.finish = ev.DoneReason
		}
		return out, nil
	}
}
