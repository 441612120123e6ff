package lspside

// WatchServer returns cfg set to hand the server to f when Serve starts it.
func WatchServer(cfg Config, f func(*Server)) Config {
	cfg.started = f
	return cfg
}

// Held counts what a server keeps per document and per request, for the tests of its bounds.
type Held struct {
	Open        int // documents in the mirror
	Cursors     int // documents with a last request position
	Inflight    int // editor requests that $/cancelRequest can cancel
	Suggesting  int // documents with a nes/suggest in flight (and their sequence numbers)
	Live        int // suggestions that have not ended
	Recent      int // documents in the editor state's recency list
	ActiveIsSet bool
}

// Held returns what s keeps now.
func (s *Server) Held() Held {
	h := Held{Open: len(s.docs.All()), Recent: len(s.ed.Recent(0))}
	h.Cursors, h.Suggesting, h.ActiveIsSet = s.reqs.held()
	h.Inflight = s.calls.count()
	s.sugs.mu.Lock()
	h.Live = len(s.sugs.by)
	s.sugs.mu.Unlock()
	return h
}

// JSONStringBytes is jsonStringBytes, for its test against encoding/json.
var JSONStringBytes = jsonStringBytes
