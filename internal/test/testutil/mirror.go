package testutil

import (
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"time"
)

// WriteMirror writes a test peer's copy of the document uri into dir, as the file named by the
// URI's base name, replacing the previous copy at once (a rename), so that a test reading it never
// sees half of it. The editor tests compare these copies with the editor's buffer.
//
// On Windows a file cannot be replaced while someone has it open, and the tests poll these copies;
// the rename is tried again for a while, so that a test's read does not cost the peer an update.
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
	dst := filepath.Join(dir, name)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		err := os.Rename(tmp, dst)
		if err == nil || time.Now().After(deadline) {
			return err
		}
	}
}
