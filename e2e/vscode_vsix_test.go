package e2e

import (
	"archive/zip"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// vscodeTargets are the platforms `make vsix` packages the extension for, as VS Code names them,
// with the Go platform of the bridge each carries.
var vscodeTargets = []struct{ target, goos, goarch string }{
	{"linux-x64", "linux", "amd64"},
	{"linux-arm64", "linux", "arm64"},
	{"darwin-x64", "darwin", "amd64"},
	{"darwin-arm64", "darwin", "arm64"},
	{"win32-x64", "windows", "amd64"},
	{"win32-arm64", "windows", "arm64"},
}

// vscodeTarget is VS Code's name for a Go platform (Node's process.platform-process.arch), or ""
// when no package is made for it.
func vscodeTarget(goos, goarch string) string {
	for _, p := range vscodeTargets {
		if p.goos == goos && p.goarch == goarch {
			return p.target
		}
	}
	return ""
}

// vscodeVSIXPeers skips the test (fails it, where peers are required) without what tools/vsix.sh
// needs: npm and node, and vsce from the test peers (VSCODE_TOOLS).
func vscodeVSIXPeers(t *testing.T) {
	t.Helper()
	if os.Getenv("VSCODE_TOOLS") == "" {
		skipWithoutPeer(t, `VSCODE_TOOLS is not set: vsce is one of the test peers (eval "$(PEERS_VSCODE=1 ../shared/tools/install-test-peers.sh)")`)
	}
	for _, p := range []string{"npm", "node", "sh"} {
		if _, err := exec.LookPath(p); err != nil {
			skipWithoutPeer(t, p+" is not on PATH")
		}
	}
}

// vscodeVSIX runs tools/vsix.sh, as `make vsix` does but into out, with the bare binaries in bin,
// and returns what it printed.
func vscodeVSIX(t *testing.T, version, bin, out string, targets ...string) string {
	t.Helper()
	args := []string{filepath.Join("tools", "vsix.sh"), "-version", version, "-bin", bin, "-out", out}
	if len(targets) > 0 {
		args = append(args, "-targets", strings.Join(targets, " "))
	}
	start := time.Now()
	log := runIn(t, moduleRoot(t), 20*time.Minute, "sh", args...)
	t.Logf("%s: %s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return string(log)
}

// TestVSCodeVSIX packages the extension as `make vsix` does, for every platform, and opens each
// package: its manifests name the extension, the version and the platform; the compiled extension
// and its dependencies are in it, its sources are not; and it carries exactly one bridge, built
// for that platform (the machine in its headers, the Go platform, CGO off and -trimpath in its
// build info), executable, and the one for this machine runs and says the version. Where the
// script finds a binary of another version it builds them all again.
func TestVSCodeVSIX(t *testing.T) {
	skipIfShort(t, "builds the bridge for six platforms and packages the extension six times (a minute or two)")
	vscodeVSIXPeers(t)
	root := moduleRoot(t)

	// make vsix is this script, with the Makefile's VERSION and dist/.
	if _, err := exec.LookPath("make"); err == nil {
		dry := string(runIn(t, root, time.Minute, "make", "--no-print-directory", "-n", "vsix", "VERSION=v1.2.3"))
		if !strings.Contains(dry, "sh tools/vsix.sh -version v1.2.3 -bin dist/bin -out dist/vscode") {
			t.Errorf("make -n vsix: %q, want tools/vsix.sh with -version v1.2.3 -bin dist/bin -out dist/vscode", dry)
		}
	}

	work := t.TempDir()
	bin, out := filepath.Join(work, "bin"), filepath.Join(work, "vscode")
	// A bridge of another version (the tests' own, unstamped) where `make dist` leaves this
	// machine's: the script must not package it.
	if vscodeTarget(runtime.GOOS, runtime.GOARCH) != "" {
		bridge, _ := binaries(t)
		vscodeCopyFile(t, bridge, filepath.Join(bin, runtime.GOOS+"_"+runtime.GOARCH, "acp-lsp-bridge"+exeSuffix), 0o755)
	}
	const version, extVersion = "v0.9.1-test.2", "0.9.1-test.2"
	log := vscodeVSIX(t, version, bin, out)
	if vscodeTarget(runtime.GOOS, runtime.GOARCH) != "" && !strings.Contains(log, "building every binary again") {
		t.Errorf("tools/vsix.sh did not say it rebuilt the binaries of another version:\n%s", log)
	}

	var names []string
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	var want []string
	for _, p := range vscodeTargets {
		want = append(want, "acp-lsp-bridge-"+p.target+"-"+extVersion+".vsix")
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("packages: %q, want %q", names, want)
	}
	for _, p := range vscodeTargets {
		t.Run(p.target, func(t *testing.T) {
			vscodeCheckVSIX(t, filepath.Join(out, "acp-lsp-bridge-"+p.target+"-"+extVersion+".vsix"), p.target, p.goos, p.goarch, version, extVersion)
		})
	}
}

// vscodeCheckVSIX opens one package made by tools/vsix.sh and checks it for target.
func vscodeCheckVSIX(t *testing.T, file, target, goos, goarch, version, extVersion string) {
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		files[f.Name] = f
	}
	read := func(name string) []byte {
		t.Helper()
		f := files[name]
		if f == nil {
			t.Fatalf("%s is not in the package", name)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	// The manifests: VS Code installs a package only on the platform its vsixmanifest names.
	var man struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		Main    string `json:"main"`
	}
	if err := json.Unmarshal(read("extension/package.json"), &man); err != nil {
		t.Fatalf("extension/package.json: %v", err)
	}
	if man.Name != "acp-lsp-bridge" || man.Version != extVersion || man.Main != "./out/extension.js" {
		t.Errorf("extension/package.json: name %q version %q main %q, want acp-lsp-bridge %s ./out/extension.js", man.Name, man.Version, man.Main, extVersion)
	}
	var vsixman struct {
		Metadata struct {
			Identity struct {
				ID             string `xml:"Id,attr"`
				Version        string `xml:"Version,attr"`
				TargetPlatform string `xml:"TargetPlatform,attr"`
			} `xml:"Identity"`
		} `xml:"Metadata"`
	}
	if err := xml.Unmarshal(read("extension.vsixmanifest"), &vsixman); err != nil {
		t.Fatalf("extension.vsixmanifest: %v", err)
	}
	if id := vsixman.Metadata.Identity; id.ID != "acp-lsp-bridge" || id.Version != extVersion || id.TargetPlatform != target {
		t.Errorf("extension.vsixmanifest Identity: %+v, want Id acp-lsp-bridge, Version %s, TargetPlatform %s", id, extVersion, target)
	}

	// The compiled extension and its dependencies, and nothing else: not its sources or tests
	// (.vscodeignore), nor anything the packaging left beside them.
	read("extension/out/extension.js")
	read("extension/node_modules/vscode-languageclient/package.json")
	var others []string
	for name := range files {
		if !strings.HasPrefix(name, "extension/node_modules/") && !strings.HasPrefix(name, "extension/bin/") && !slices.Contains([]string{
			"[Content_Types].xml", "extension.vsixmanifest", "extension/package.json", "extension/readme.md", "extension/out/extension.js",
		}, name) {
			others = append(others, name)
		}
	}
	if len(others) > 0 {
		slices.Sort(others)
		t.Errorf("the package holds files it should not: %q", others)
	}

	// Exactly one bridge, this platform's, executable.
	exe := "extension/bin/acp-lsp-bridge"
	if goos == "windows" {
		exe += ".exe"
	}
	var bins []string
	for name := range files {
		if strings.HasPrefix(name, "extension/bin/") {
			bins = append(bins, name)
		}
	}
	if !slices.Equal(bins, []string{exe}) {
		t.Fatalf("extension/bin/ holds %q, want %s alone", bins, exe)
	}
	mode := files[exe].Mode()
	if goos != "windows" && mode&0o111 != 0o111 {
		t.Errorf("%s: mode %v in the package, want it executable", exe, mode)
	}
	data := read(exe)
	vscodeCheckExecutable(t, data, goos, goarch)
	info, err := buildinfo.Read(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: no Go build info: %v", exe, err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if info.Path != "github.com/acp-lsp-bridge/acp-lsp-bridge/cmd/acp-lsp-bridge" || settings["GOOS"] != goos || settings["GOARCH"] != goarch ||
		settings["CGO_ENABLED"] != "0" || settings["-trimpath"] != "true" {
		t.Errorf("%s: built from %s with %v, want cmd/acp-lsp-bridge for %s/%s, CGO_ENABLED=0, -trimpath", exe, info.Path, settings, goos, goarch)
	}

	// The one for this machine runs and says the version it was stamped with.
	if goos != runtime.GOOS || goarch != runtime.GOARCH {
		return
	}
	local := filepath.Join(t.TempDir(), filepath.Base(exe))
	if err := os.WriteFile(local, data, mode.Perm()|0o400); err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(local, "--version").CombinedOutput()
	if err != nil || string(got) != "acp-lsp-bridge "+version+"\n" {
		t.Errorf("%s --version: %q %v, want %q", exe, got, err, "acp-lsp-bridge "+version+"\n")
	}
}

// vscodeCheckExecutable checks that data is an executable for goos/goarch, as its headers say,
// stripped (-s -w) and, on Linux, static (CGO off: it runs on any distribution).
func vscodeCheckExecutable(t *testing.T, data []byte, goos, goarch string) {
	t.Helper()
	r := bytes.NewReader(data)
	switch goos {
	case "linux":
		f, err := elf.NewFile(r)
		if err != nil {
			t.Fatalf("not an ELF file: %v", err)
		}
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
		if f.Class != elf.ELFCLASS64 || f.Machine != want || f.Type != elf.ET_EXEC {
			t.Errorf("ELF %v %v %v, want ELFCLASS64 %v ET_EXEC", f.Class, f.Machine, f.Type, want)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("the ELF file asks for a dynamic loader: it was not built with CGO_ENABLED=0")
			}
		}
		if f.Section(".symtab") != nil {
			t.Error("the ELF file has a symbol table: it was not built with -s")
		}
	case "darwin":
		f, err := macho.NewFile(r)
		if err != nil {
			t.Fatalf("not a Mach-O file: %v", err)
		}
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[goarch]
		if f.Cpu != want || f.Type != macho.TypeExec {
			t.Errorf("Mach-O %v %v, want %v %v", f.Cpu, f.Type, want, macho.TypeExec)
		}
	case "windows":
		f, err := pe.NewFile(r)
		if err != nil {
			t.Fatalf("not a PE file: %v", err)
		}
		want := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[goarch]
		if f.Machine != want || f.Characteristics&pe.IMAGE_FILE_EXECUTABLE_IMAGE == 0 {
			t.Errorf("PE machine %#x characteristics %#x, want machine %#x, an executable image", f.Machine, f.Characteristics, want)
		}
		// A console program: the bridge talks LSP on its stdin and stdout.
		if oh, ok := f.OptionalHeader.(*pe.OptionalHeader64); !ok || oh.Subsystem != pe.IMAGE_SUBSYSTEM_WINDOWS_CUI {
			t.Errorf("PE optional header %T, want a 64-bit console program", f.OptionalHeader)
		}
	default:
		t.Fatalf("no check for %s", goos)
	}
}

// vscodeCopyFile copies src to dst, making dst's folder, with mode perm.
func vscodeCopyFile(t *testing.T, src, dst string, perm os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dst, perm); err != nil {
		t.Fatal(err)
	}
}
