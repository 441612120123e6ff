package testutil

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
)

// WriteMirror writes a test peer's copy of the document uri into dir, as the file named by the
// URI's base name, replacing the previous copy at once (a rename), so that a test reading it never
// sees half of it. The editor tests compare these copies with the editor's buffer.
func WriteMirror(dir, uri, text string) error {
	u, err := url.Parse(uri)
	if err != nil {
		return err
	}
	name := path.Base(u.Path)
	if name == "/" || name == "." || name == ".." {
		return fmt.Errorf("no file name in %s", uri)
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}
