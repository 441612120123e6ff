module github.com/acp-lsp-bridge/acp-lsp-bridge

go 1.26

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/andybalholm/brotli v1.3.0
	github.com/coder/acp-go-sdk v0.13.5
	github.com/go-json-experiment/json v0.0.0-20260623181947-01eb4420fa68
	github.com/rs/zerolog v1.35.1
	go.lsp.dev/jsonrpc2 v1.0.1
	go.lsp.dev/protocol v1.0.1
	go.lsp.dev/uri v1.0.1
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/sys v0.45.0
)

require (
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
)
