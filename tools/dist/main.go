// Command dist builds acp-lsp-bridge's release archives (make dist): one per platform, each with
// the binary, README.md and LICENSE, and SHA256SUMS beside them.
//
// The same commit gives the same bytes: the binaries are built with -trimpath, CGO off and no
// build id, and the archives hold fixed owners, modes and times (the commit's time, or
// SOURCE_DATE_EPOCH) in a fixed order. -check builds everything twice and compares.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Targets are the platforms a release has an archive for.
var Targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

const usage = `dist: build acp-lsp-bridge's release archives.

Usage (from the module's root):
  go run ./tools/dist -version v1.2.3 [-out dist] [-targets linux/amd64,...] [-check]
  go run ./tools/dist -version v1.2.3 -bin DIR [-targets linux/amd64,...]

Writes OUT/acp-lsp-bridge_<version>_<os>_<arch>.tar.gz (.zip for windows), each holding the
folder acp-lsp-bridge_<version>_<os>_<arch>/ with the binary, README.md and LICENSE;
OUT/SHA256SUMS; and the bare binaries in OUT/bin/<os>_<arch>/. <version> drops a leading "v".
-check builds everything a second time in a temporary folder and fails unless every byte matches.
-bin builds only the bare binaries, into DIR/<os>_<arch>/, as the archives hold them (tools/vsix.sh
puts them in the VS Code packages).
`

func main() {
	fs := flag.NewFlagSet("dist", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage); fs.PrintDefaults() }
	version := fs.String("version", "", "the version to stamp, such as v1.2.3 (required)")
	out := fs.String("out", "dist", "the folder to write the archives to")
	targets := fs.String("targets", strings.Join(Targets, ","), "the platforms, comma-separated GOOS/GOARCH pairs")
	check := fs.Bool("check", false, "build twice and fail unless the archives are byte for byte the same")
	binOnly := fs.String("bin", "", "build only the bare binaries, into this `folder`/<os>_<arch>/ (no archives)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if *version == "" {
		fmt.Fprintln(os.Stderr, "dist: -version is required, for example -version v1.2.3")
		os.Exit(2)
	}
	r := Release{Version: *version, Targets: strings.Split(*targets, ","), Root: ".", Log: os.Stderr}
	if *check {
		// Both builds from one copy of the tree: a file changed meanwhile (an editor saving, a
		// checkout) would otherwise read as a build that is not reproducible.
		snap, err := os.MkdirTemp("", "acp-lsp-bridge-src-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "dist:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(snap)
		if r, err = r.Snapshot(snap); err != nil {
			fmt.Fprintln(os.Stderr, "dist:", err)
			os.Exit(1)
		}
	}
	if *binOnly != "" {
		if _, err := r.BuildBinaries(*binOnly); err != nil {
			fmt.Fprintln(os.Stderr, "dist:", err)
			os.Exit(1)
		}
		return
	}
	if err := r.Build(*out); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "dist: %d archives and SHA256SUMS in %s\n", len(r.Targets), *out)
	if *check {
		again, err := os.MkdirTemp("", "acp-lsp-bridge-dist-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "dist:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(again)
		if err := r.Build(again); err != nil {
			fmt.Fprintln(os.Stderr, "dist: the second build:", err)
			os.Exit(1)
		}
		if err := SameArchives(*out, again); err != nil {
			fmt.Fprintln(os.Stderr, "dist: not reproducible:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "dist: built twice, the same bytes")
	}
}

// Release is what to build, from where.
type Release struct {
	Version string
	Targets []string
	Root    string    // the module's root
	Log     io.Writer // progress, one line a target
	// Epoch is the time every archived file carries; zero: SOURCE_DATE_EPOCH, else the commit's
	// time, else 2000-01-01.
	Epoch time.Time
}

// Snapshot copies the tree at r.Root (all but .git and what builds and packages write: dist, bin,
// node_modules, out) into dir, and returns r building from that copy, with the time its archived
// files carry taken from r.Root. Builds from one snapshot read the same sources, whatever changes
// in the tree meanwhile.
func (r Release) Snapshot(dir string) (Release, error) {
	if r.Epoch.IsZero() {
		r.Epoch = epoch(r.Root)
	}
	skip := map[string]bool{".git": true, "dist": true, "bin": true, "node_modules": true, "out": true}
	err := filepath.WalkDir(r.Root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(r.Root, path)
		if err != nil {
			return err
		}
		if d.IsDir() && skip[d.Name()] && rel != "." {
			return filepath.SkipDir
		}
		to := filepath.Join(dir, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case !d.Type().IsRegular():
			return nil // links and the like: no build reads them
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		return r, fmt.Errorf("a copy of the tree to build from: %w", err)
	}
	r.Root = dir
	return r, nil
}

// Build writes the archives, SHA256SUMS and bin/ into out.
func (r Release) Build(out string) error {
	if r.Epoch.IsZero() {
		r.Epoch = epoch(r.Root)
	}
	docs := map[string][]byte{}
	for _, name := range []string{"README.md", "LICENSE"} {
		b, err := os.ReadFile(filepath.Join(r.Root, name))
		if err != nil {
			return err
		}
		docs[name] = b
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	bins, err := r.BuildBinaries(filepath.Join(out, "bin"))
	if err != nil {
		return err
	}
	sums := map[string]string{}
	for i, target := range r.Targets {
		goos, goarch, _ := strings.Cut(target, "/")
		bin := bins[i]
		exe := filepath.Base(bin)
		binary, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		folder := ArchiveName(r.Version, goos, goarch)
		files := []File{{Name: exe, Data: binary, Mode: 0o755}, {Name: "LICENSE", Data: docs["LICENSE"], Mode: 0o644}, {Name: "README.md", Data: docs["README.md"], Mode: 0o644}}
		var archive []byte
		name := folder + ".tar.gz"
		if goos == "windows" {
			name = folder + ".zip"
			archive, err = Zip(folder, files, r.Epoch)
		} else {
			archive, err = TarGz(folder, files, r.Epoch)
		}
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, name), archive, 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256(archive)
		sums[name] = hex.EncodeToString(sum[:])
	}
	return os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(SumsFile(sums)), 0o644)
}

// BuildBinaries builds the bridge for each target into dir/<os>_<arch>/ and returns their paths,
// in the order of Targets.
func (r Release) BuildBinaries(dir string) ([]string, error) {
	var bins []string
	for _, target := range r.Targets {
		goos, goarch, ok := strings.Cut(target, "/")
		if !ok {
			return nil, fmt.Errorf("target %q: want GOOS/GOARCH", target)
		}
		exe := "acp-lsp-bridge"
		if goos == "windows" {
			exe += ".exe"
		}
		bin := filepath.Join(dir, goos+"_"+goarch, exe)
		if r.Log != nil {
			fmt.Fprintf(r.Log, "dist: %s %s\n", target, r.Version)
		}
		if err := r.buildBinary(goos, goarch, bin); err != nil {
			return nil, err
		}
		bins = append(bins, bin)
	}
	return bins, nil
}

// buildBinary builds the bridge for one platform, stamped with the version.
func (r Release) buildBinary(goos, goarch, bin string) error {
	ldflags := "-s -w -buildid= -X github.com/acp-lsp-bridge/acp-lsp-bridge/internal/buildinfo.stamped=" + r.Version
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "./cmd/acp-lsp-bridge")
	cmd.Dir = r.Root
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build for %s/%s: %v\n%s", goos, goarch, err, out)
	}
	return nil
}

// ArchiveName is an archive's name without its extension, and the folder inside it.
func ArchiveName(version, goos, goarch string) string {
	return fmt.Sprintf("acp-lsp-bridge_%s_%s_%s", strings.TrimPrefix(version, "v"), goos, goarch)
}

// File is one file of an archive.
type File struct {
	Name string
	Data []byte
	Mode int64
}

// TarGz is a gzipped tar of files inside folder, with owners, times and order fixed.
func TarGz(folder string, files []File, at time.Time) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	header := func(name string, mode int64, size int64, kind byte) *tar.Header {
		return &tar.Header{Typeflag: kind, Name: name, Mode: mode, Size: size, ModTime: at, Format: tar.FormatPAX, Uname: "", Gname: ""}
	}
	if err := tw.WriteHeader(header(folder+"/", 0o755, 0, tar.TypeDir)); err != nil {
		return nil, err
	}
	for _, f := range sorted(files) {
		if err := tw.WriteHeader(header(folder+"/"+f.Name, f.Mode, int64(len(f.Data)), tar.TypeReg)); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Zip is a zip of files inside folder, with times and order fixed.
func Zip(folder string, files []File, at time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	dir := &zip.FileHeader{Name: folder + "/", Modified: at.UTC()}
	dir.SetMode(os.ModeDir | 0o755)
	if _, err := zw.CreateHeader(dir); err != nil {
		return nil, err
	}
	for _, f := range sorted(files) {
		h := &zip.FileHeader{Name: folder + "/" + f.Name, Method: zip.Deflate, Modified: at.UTC()}
		h.SetMode(os.FileMode(f.Mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func sorted(files []File) []File {
	files = append([]File(nil), files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files
}

// SumsFile is SHA256SUMS as sha256sum -c reads it: "<hex>  <name>", by name.
func SumsFile(sums map[string]string) string {
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s  %s\n", sums[n], n)
	}
	return b.String()
}

// SameArchives fails unless the archives and SHA256SUMS in a and b are the same bytes.
func SameArchives(a, b string) error {
	names, err := filepath.Glob(filepath.Join(a, "acp-lsp-bridge_*"))
	if err != nil {
		return err
	}
	if len(names) == 0 {
		return fmt.Errorf("no archives in %s", a)
	}
	names = append(names, filepath.Join(a, "SHA256SUMS"))
	for _, n := range names {
		x, err := os.ReadFile(n)
		if err != nil {
			return err
		}
		y, err := os.ReadFile(filepath.Join(b, filepath.Base(n)))
		if err != nil {
			return err
		}
		if !bytes.Equal(x, y) {
			return fmt.Errorf("%s differs between two builds", filepath.Base(n))
		}
	}
	return nil
}

// epoch is the time archived files carry: SOURCE_DATE_EPOCH, the commit's, or a fixed one.
func epoch(root string) time.Time {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	cmd := exec.Command("git", "log", "-1", "--format=%ct")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	return time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
}
