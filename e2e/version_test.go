package e2e

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acp-lsp-bridge/acp-lsp-bridge/internal/test/fakeeditor"
)

// TestVersionReachesEditorAndAgent: the version --version prints is the one the editor reads in
// serverInfo and the agent in clientInfo.
func TestVersionReachesEditorAndAgent(t *testing.T) {
	bridge, agent := binaries(t)
	out, err := exec.Command(bridge, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	printed, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "acp-lsp-bridge ")
	if !ok || printed == "" || strings.Contains(printed, " ") {
		t.Fatalf("--version printed %q, want \"acp-lsp-bridge VERSION\"", out)
	}
	dir := t.TempDir()
	agentLog := filepath.Join(dir, "agent.jsonl")
	b := startBridge(t)
	init := b.InitializeWith(fakeeditor.InitParams{Root: fileURI(dir), Options: agentOption(agent, "--log", agentLog)})
	if init.ServerInfo.Version != printed {
		t.Errorf("serverInfo.version %q, --version %q", init.ServerInfo.Version, printed)
	}
	waitAgentLog(t, agentLog, "initialize")
	for _, m := range readAgentLog(t, agentLog) {
		if m["method"] != "initialize" {
			continue
		}
		info, _ := m["params"].(map[string]any)["clientInfo"].(map[string]any)
		if info["name"] != "acp-lsp-bridge" || info["version"] != printed {
			t.Errorf("the agent's clientInfo %v, want acp-lsp-bridge %s", info, printed)
		}
	}
}

// TestVersionOfEachBuild builds the bridge the ways users get it and reads --version: a release
// build stamps it; `go build` in a checkout gives the commit (and +dirty with changes); `go install
// …@v0.9.0` gives v0.9.0, through a module proxy made here from the committed tree.
func TestVersionOfEachBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the bridge four times")
	}
	skipOnWindows(t, "needs go and git")
	root := moduleRoot(t)
	tmp := t.TempDir()
	// This machine's GOFLAGS may turn VCS stamping off; users' do not.
	env := append(os.Environ(), "GOFLAGS=-buildvcs=auto", "CGO_ENABLED=0")
	run := func(t *testing.T, dir string, env []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	versionOf := func(t *testing.T, bin string) string {
		t.Helper()
		v, ok := strings.CutPrefix(run(t, tmp, env, bin, "--version"), "acp-lsp-bridge ")
		if !ok {
			t.Fatalf("%s --version: no \"acp-lsp-bridge \" prefix", bin)
		}
		return v
	}

	t.Run("release build stamped", func(t *testing.T) {
		bin := filepath.Join(tmp, "stamped")
		run(t, root, env, "go", "build", "-trimpath", "-ldflags", "-X github.com/acp-lsp-bridge/acp-lsp-bridge/internal/buildinfo.stamped=v9.8.7", "-o", bin, "./cmd/acp-lsp-bridge")
		if v := versionOf(t, bin); v != "v9.8.7" {
			t.Errorf("stamped build says %q, want v9.8.7", v)
		}
	})

	// A checkout of the working tree as it is (tracked and new files, as git would commit them),
	// with one commit.
	clone := filepath.Join(tmp, "checkout")
	files := strings.Split(strings.TrimRight(run(t, root, env, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"), "\x00"), "\x00")
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(root, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(clone, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(clone, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitEnv := append(env, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	run(t, clone, gitEnv, "git", "init", "--quiet")
	run(t, clone, gitEnv, "git", "add", "-A")
	run(t, clone, gitEnv, "git", "commit", "--quiet", "-m", "the working tree")
	commit := run(t, clone, env, "git", "rev-parse", "HEAD")[:12]

	t.Run("go build in a checkout", func(t *testing.T) {
		bin := filepath.Join(tmp, "built-in-checkout")
		run(t, clone, env, "go", "build", "-o", bin, "./cmd/acp-lsp-bridge")
		v := versionOf(t, bin)
		if !strings.Contains(v, commit) || strings.Contains(v, "dirty") {
			t.Errorf("a clean checkout's build says %q, want the commit %s and no dirty mark", v, commit)
		}
		if err := os.WriteFile(filepath.Join(clone, "README.md"), []byte("changed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, clone, env, "go", "build", "-o", bin, "./cmd/acp-lsp-bridge")
		if v := versionOf(t, bin); !strings.Contains(v, commit) || !strings.HasSuffix(v, "+dirty") {
			t.Errorf("a changed checkout's build says %q, want the commit %s and +dirty", v, commit)
		}
		run(t, clone, env, "git", "checkout", "--quiet", "README.md")
	})

	t.Run("go install at a version", func(t *testing.T) {
		const module, version = "github.com/acp-lsp-bridge/acp-lsp-bridge", "v0.9.0"
		proxy := filepath.Join(tmp, "proxy")
		at := filepath.Join(proxy, module, "@v")
		if err := os.MkdirAll(at, 0o755); err != nil {
			t.Fatal(err)
		}
		gomod, err := os.ReadFile(filepath.Join(clone, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		info, _ := json.Marshal(map[string]string{"Version": version, "Time": "2026-11-26T00:00:00Z"})
		for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": info, version + ".mod": gomod} {
			if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		writeModuleZip(t, filepath.Join(at, version+".zip"), clone, module+"@"+version, strings.Split(strings.TrimRight(run(t, clone, env, "git", "ls-files", "-z"), "\x00"), "\x00"))
		gobin := filepath.Join(tmp, "gobin")
		// A module cache of its own, so that the user's keeps no made-up v0.9.0; the dependencies
		// come from the user's module cache (its download folder is laid out as a proxy): no network.
		userCache := run(t, tmp, env, "go", "env", "GOMODCACHE")
		installEnv := append(env, "GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(userCache, "cache", "download")),
			"GOSUMDB=off", "GOMODCACHE="+filepath.Join(tmp, "modcache"), "GOFLAGS=-modcacherw", "GOBIN="+gobin)
		run(t, tmp, installEnv, "go", "install", module+"/cmd/acp-lsp-bridge@"+version)
		if v := versionOf(t, filepath.Join(gobin, "acp-lsp-bridge")); v != version {
			t.Errorf("go install …@%s gives a bridge that says %q", version, v)
		}
	})
}

// writeModuleZip writes a module zip as a proxy serves it: each file under "module@version/".
func writeModuleZip(t *testing.T, path, dir, prefix string, files []string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := zip.NewWriter(f)
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := z.Create(prefix + "/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
}
