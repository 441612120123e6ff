# acp-lsp-bridge. `make test` is what CI runs (through .ci/run, after installing the test peers).
GO ?= go
BIN := bin/acp-lsp-bridge

.PHONY: build test lint bench fuzz peers

build:
	$(GO) build -o $(BIN) ./cmd/acp-lsp-bridge

# The interop tests talk to Neovim 0.12 and the official ACP SDK when NVIM and PEERS_NODE_MODULES
# are set (eval "$$(../shared/tools/install-test-peers.sh)"); without them they skip.
test: lint
	$(GO) test -race -count=1 ./...

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# A short run of every fuzz target (CI runs the seeds as ordinary tests).
fuzz:
	@for pkg in ./encoding ./document ./editorstate; do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=20s $$pkg || exit 1; \
	  done; \
	done
