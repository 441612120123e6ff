package model

import (
	"strings"
	"sync"
)

// fimRing is the other files' chunks a FIM prompt carries, kept from one request to the next as
// llama.vim keeps its ring of chunks: pieces of the files the user worked in (around the places
// visited last and the recent edits of the other open documents, the documents saved, and the
// requested document's own edits far from the cursor). A chunk is added once; one much like a
// chunk kept (nine lines in ten the same) replaces it; the oldest go first past the bound. The
// chunks stay in the order they came, so that the start of the prompt stays the same from one
// request to the next and the server can reuse what it computed for it (llama-server's
// cache_prompt). Only what the bridge sent the agent is ever in it: the files it keeps from the
// agent (docs/security.md) never are. A document's chunks stay when it is closed: they are
// history, and bounded (engine.DocumentClosed).
type fimRing struct {
	mu     sync.Mutex
	chunks []ringChunk // oldest first
}

type ringChunk struct {
	uri   string
	chunk FIMChunk
	lines map[string]int
}

// maxNewChunks bounds the chunks one request adds, so that the ring changes little from one
// request to the next.
const maxNewChunks = 3

// update adds the request's chunks to the ring and returns the ring's chunks that fit in budget
// bytes, oldest first; winStart and winEnd bound the part of the document the prompt shows whole.
func (r *fimRing) update(in *input, cfg ringConfig, winStart, winEnd, budget int) []FIMChunk {
	if cfg.n <= 0 {
		return nil
	}
	var cands []ringChunk
	add := func(uri, name, text string, at int) {
		if len(cands) >= maxNewChunks {
			return
		}
		c := chunkAround(text, at, cfg.lines)
		if strings.TrimSpace(c) == "" {
			return
		}
		// A copy: a slice of text would keep the whole document, closed or not, while the chunk
		// stays in the ring.
		c = strings.Clone(c)
		cands = append(cands, ringChunk{uri: uri, chunk: FIMChunk{Filename: name, Text: c}, lines: lineSet(c)})
	}
	// The requested document's own recent edits outside the window, newest first.
	for i := len(in.req.Recent) - 1; i >= 0; i-- {
		at := in.fromOrig(min(max(in.req.Recent[i].LineStart, 0), len(in.req.Text)))
		if at < winStart || at >= winEnd {
			add(in.req.URI, in.path, in.text, at)
		}
	}
	// The other open documents, most recently edited first: where the user's cursor last was,
	// or their last edit, or, saved, their start.
	for i, o := range in.req.Open {
		if i >= len(in.others) {
			break
		}
		text := in.others[i].text
		orig := o.Text
		at := -1
		switch {
		case o.Visit >= 0 && o.Visit <= len(orig):
			at = o.Visit
		case len(o.Recent) > 0:
			at = min(max(o.Recent[len(o.Recent)-1].LineStart, 0), len(orig))
		case o.Saved:
			at = 0
		}
		if at < 0 {
			continue
		}
		at -= strings.Count(orig[:at], "\r\n") // in the text with "\n" line breaks
		add(o.URI, in.others[i].path, text, at)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	// Oldest candidate first, so that the newest ends last in the ring.
	for i := len(cands) - 1; i >= 0; i-- {
		c := cands[i]
		same := false
		kept := r.chunks[:0]
		for _, k := range r.chunks {
			switch {
			case k.chunk == c.chunk:
				same = true
				kept = append(kept, k)
			case k.chunk.Filename == c.chunk.Filename && dice(k.lines, c.lines) > 0.9:
				// The same piece, changed a little since: the new one replaces it.
			default:
				kept = append(kept, k)
			}
		}
		r.chunks = kept
		if !same {
			r.chunks = append(r.chunks, c)
		}
	}
	if over := len(r.chunks) - cfg.n; over > 0 {
		r.chunks = append(r.chunks[:0], r.chunks[over:]...)
	}
	// The newest chunks that fit, kept in their order.
	first, size := len(r.chunks), 0
	for first > 0 {
		c := r.chunks[first-1].chunk
		if size+len(c.Filename)+len(c.Text) > budget {
			break
		}
		size += len(c.Filename) + len(c.Text)
		first--
	}
	var out []FIMChunk
	for _, k := range r.chunks[first:] {
		// A chunk of the requested document that the window now shows whole is left out.
		if k.uri == in.req.URI && strings.Contains(in.text[winStart:winEnd], k.chunk.Text) {
			continue
		}
		out = append(out, k.chunk)
	}
	return out
}

// ringConfig is the ring's bounds: how many chunks (--fim-chunks) of how many lines each
// (--fim-chunk-lines).
type ringConfig struct{ n, lines int }

// chunkAround is the lines of text around offset at: half of n above its line and the rest
// below, whole lines.
func chunkAround(text string, at, n int) string {
	at = min(max(at, 0), len(text))
	start := strings.LastIndexByte(text[:at], '\n') + 1
	for i := 0; i < n/2 && start > 0; i++ {
		start = strings.LastIndexByte(text[:start-1], '\n') + 1
	}
	end := start
	for i := 0; i < n && end < len(text); i++ {
		if j := strings.IndexByte(text[end:], '\n'); j >= 0 {
			end += j + 1
		} else {
			end = len(text)
		}
	}
	return text[start:end]
}

// lineSet counts the lines of s: two chunks' share of lines in common is the Dice coefficient of
// their counts (dice), as llama.vim's chunk similarity.
func lineSet(s string) map[string]int {
	m := map[string]int{}
	for _, l := range strings.Split(s, "\n") {
		m[l]++
	}
	return m
}
