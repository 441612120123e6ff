package main

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestArchivesAreTheSameEachTime: two archives of the same files are the same bytes, hold the
// files in one folder with their modes, and differ when a file does.
func TestArchivesAreTheSameEachTime(t *testing.T) {
	at := time.Date(2026, 11, 26, 3, 14, 11, 0, time.UTC)
	files := []File{{Name: "README.md", Data: []byte("read me\n"), Mode: 0o644}, {Name: "acp-lsp-bridge", Data: []byte("\x7fELF binary"), Mode: 0o755}}
	for _, kind := range []struct {
		name string
		make func(string, []File, time.Time) ([]byte, error)
		list func(*testing.T, []byte) map[string]entry
	}{{"tar.gz", TarGz, tarEntries}, {"zip", Zip, zipEntries}} {
		a, err := kind.make("acp-lsp-bridge_1.2.3_linux_amd64", files, at)
		if err != nil {
			t.Fatal(err)
		}
		// The same files in another order, later: the same bytes.
		b, err := kind.make("acp-lsp-bridge_1.2.3_linux_amd64", []File{files[1], files[0]}, at)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two archives of the same files differ", kind.name)
		}
		changed := append([]File(nil), files...)
		changed[0].Data = []byte("read me!\n")
		c, _ := kind.make("acp-lsp-bridge_1.2.3_linux_amd64", changed, at)
		if bytes.Equal(a, c) {
			t.Errorf("%s: a changed file left the archive as it was", kind.name)
		}
		got := map[string]os.FileMode{}
		for n, e := range kind.list(t, a) {
			got[n] = e.mode
		}
		want := map[string]os.FileMode{
			"acp-lsp-bridge_1.2.3_linux_amd64/":               os.ModeDir | 0o755,
			"acp-lsp-bridge_1.2.3_linux_amd64/README.md":      0o644,
			"acp-lsp-bridge_1.2.3_linux_amd64/acp-lsp-bridge": 0o755,
		}
		if len(got) != len(want) {
			t.Errorf("%s holds %v, want %v", kind.name, got, want)
		}
		for n, m := range want {
			if got[n] != m {
				t.Errorf("%s: %s has mode %v, want %v", kind.name, n, got[n], m)
			}
		}
	}
}

// entry is a file in an archive: its mode and its bytes.
type entry struct {
	mode os.FileMode
	data []byte
}

// tarEntries reads a .tar.gz archive, and fails t if an entry names an owner.
func tarEntries(t *testing.T, b []byte) map[string]entry {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	out := map[string]entry{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s is owned by %d/%d %q/%q, want nobody in particular", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = entry{h.FileInfo().Mode(), data}
	}
}

// zipEntries reads a .zip archive.
func zipEntries(t *testing.T, b []byte) map[string]entry {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]entry{}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = entry{f.Mode(), data}
	}
	return out
}

// TestReleaseBuild builds every release archive twice, as `make dist` does, and checks what a user
// downloads: the same bytes each time, SHA256SUMS right, each archive with README.md, LICENSE and
// a binary for its platform; the linux/amd64 binary, taken from its archive, says the stamped
// version and runs the demo.
func TestReleaseBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the bridge for six platforms, twice")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs go to build the bridge: ", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	const version = "v1.2.3-test"
	// Both builds from one copy of the tree, as `make dist -check` builds: someone editing the
	// tree meanwhile does not make them differ (TestReleaseBuildFromASnapshot).
	r, err := Release{Version: version, Targets: Targets, Root: root}.Snapshot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	first, second := t.TempDir(), t.TempDir()
	if err := r.Build(first); err != nil {
		t.Fatal(err)
	}
	if err := r.Build(second); err != nil {
		t.Fatal(err)
	}
	if err := SameArchives(first, second); err != nil {
		t.Error(err)
	}

	sums, err := os.ReadFile(filepath.Join(first, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	listed := 0
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", sc.Text())
		}
		b, err := os.ReadFile(filepath.Join(first, name))
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sum {
			t.Errorf("SHA256SUMS says %s for %s, the file's is %x", sum, name, h)
		}
		listed++
	}
	if listed != len(Targets) {
		t.Errorf("SHA256SUMS lists %d archives, want %d:\n%s", listed, len(Targets), sums)
	}

	license, _ := os.ReadFile(filepath.Join(root, "LICENSE"))
	for _, target := range Targets {
		goos, goarch, _ := strings.Cut(target, "/")
		folder := ArchiveName(version, goos, goarch)
		exe := "acp-lsp-bridge"
		archive, read := filepath.Join(first, folder+".tar.gz"), tarEntries
		if goos == "windows" {
			exe += ".exe"
			archive, read = filepath.Join(first, folder+".zip"), zipEntries
		}
		b, err := os.ReadFile(archive)
		if err != nil {
			t.Fatal(err)
		}
		files := read(t, b)
		if !bytes.Equal(files[folder+"/LICENSE"].data, license) || len(files[folder+"/README.md"].data) == 0 {
			t.Errorf("%s: the archive lacks LICENSE or README.md (holds %d files)", target, len(files))
		}
		file, ok := files[folder+"/"+exe]
		bin := file.data
		if !ok {
			t.Errorf("%s: no %s in the archive", target, exe)
			continue
		}
		if got := platformOf(t, bin); got != target {
			t.Errorf("the %s archive's binary is for %s", target, got)
		}
		if target == runtime.GOOS+"/"+runtime.GOARCH && goos != "windows" {
			path := filepath.Join(t.TempDir(), exe)
			if err := os.WriteFile(path, bin, 0o755); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(path, "--version").CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "acp-lsp-bridge "+version {
				t.Errorf("%s --version: %q, %v; want acp-lsp-bridge %s", exe, out, err, version)
			}
			out, err = exec.Command(path, "demo").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "You accept it") {
				t.Errorf("%s demo: %v\n%s", exe, err, out)
			}
		}
	}
}

// platformOf reads a binary's headers: GOOS/GOARCH as Go names them.
func platformOf(t *testing.T, b []byte) string {
	t.Helper()
	if f, err := elf.NewFile(bytes.NewReader(b)); err == nil {
		return "linux/" + map[elf.Machine]string{elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64"}[f.Machine]
	}
	if f, err := macho.NewFile(bytes.NewReader(b)); err == nil {
		return "darwin/" + map[macho.Cpu]string{macho.CpuAmd64: "amd64", macho.CpuArm64: "arm64"}[f.Cpu]
	}
	if f, err := pe.NewFile(bytes.NewReader(b)); err == nil {
		return "windows/" + map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_ARM64: "arm64"}[f.Machine]
	}
	return "unknown"
}

// TestReleaseBuildFromASnapshot: the tree changes between two builds (here the binary's usage
// text, in a copy of the tree taken as the user's): the two builds from the snapshot taken
// before are still the same bytes, where a build from the tree itself now differs.
func TestReleaseBuildFromASnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the bridge three times")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("needs go to build the bridge: ", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := Release{Version: "v0.0.1-test", Targets: []string{runtime.GOOS + "/" + runtime.GOARCH}, Root: root}.Snapshot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tree.Snapshot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	first, second, direct := t.TempDir(), t.TempDir(), t.TempDir()
	if err := snap.Build(first); err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(tree.Root, "cmd", "acp-lsp-bridge", "main.go")
	src, err := os.ReadFile(main)
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.Replace(src, []byte("acp-lsp-bridge: Next Edit Suggestions from any ACP agent"), []byte("acp-lsp-bridge: Next Edit Suggestions, changed, from any ACP agent"), 1)
	if bytes.Equal(changed, src) {
		t.Fatal("main.go has no text to change")
	}
	if err := os.WriteFile(main, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := snap.Build(second); err != nil {
		t.Fatal(err)
	}
	if err := SameArchives(first, second); err != nil {
		t.Errorf("two builds of one snapshot: %v", err)
	}
	if err := tree.Build(direct); err != nil {
		t.Fatal(err)
	}
	if SameArchives(first, direct) == nil {
		t.Error("a build of the changed tree is the same as the first: the change did not reach the binary, and this test shows nothing")
	}
}
