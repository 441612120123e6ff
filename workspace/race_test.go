package workspace

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestReadsNeverFollowALinkSwappedIn: a folder inside the workspace is swapped back and forth with
// a link to a folder outside while the same file in it is checked and read 3,000 times. Some reads
// find the link and are refused, some read the file inside; none returns the outside file's
// text. Both ways of opening are tried: openat2 (Linux) and the generic identity check.
func TestReadsNeverFollowALinkSwappedIn(t *testing.T) {
	if testing.Short() {
		t.Skip("3,000 reads against a swapping folder, twice")
	}
	for _, generic := range []bool{false, true} {
		name := "openat2"
		if runtime.GOOS != "linux" {
			name = "platform"
		}
		if generic {
			name = "generic"
		}
		t.Run(name, func(t *testing.T) {
			forceGeneric = generic
			defer func() { forceGeneric = false }()
			tr := newTree(t)
			if !tr.links {
				t.Skip("this platform makes no links here")
			}
			swapped := tr.path("d-link")
			if err := os.Symlink(filepath.Join(tr.outside, "d"), swapped); err != nil {
				t.Fatal(err)
			}
			target := tr.path("d/f.txt")
			stop := make(chan struct{})
			var swaps atomic.Int64
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := exchange(tr.path("d"), swapped); err != nil {
						t.Errorf("swap: %v", err)
						return
					}
					swaps.Add(1)
				}
			}()
			var inside, refused, outside int
			var firstRefusal string
			for range 3000 {
				c, err := tr.w.Check(target)
				if err == nil {
					var b []byte
					b, err = tr.w.ReadFile(c, 1<<20)
					if err == nil {
						if strings.Contains(string(b), "OUTSIDE") {
							outside++
						} else {
							inside++
						}
						continue
					}
				}
				if firstRefusal == "" {
					firstRefusal = err.Error()
				}
				refused++
			}
			close(stop)
			wg.Wait()
			// Leave the folder in its place, whatever the last swap did.
			if fi, err := os.Lstat(tr.path("d")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				_ = exchange(tr.path("d"), swapped)
			}
			t.Logf("%d swaps; of 3000 reads %d read the file inside, %d were refused (first: %s), %d read outside",
				swaps.Load(), inside, refused, firstRefusal, outside)
			if outside > 0 {
				t.Fatalf("%d of 3000 reads returned the text of the file outside the workspace", outside)
			}
			if inside == 0 || swaps.Load() < 100 {
				t.Fatalf("the race did not run: %d reads inside, %d swaps", inside, swaps.Load())
			}
		})
	}
}

// exchange swaps two names: atomically where the platform can (Linux's RENAME_EXCHANGE), else
// through a third name.
func exchange(a, b string) error {
	if err := renameExchange(a, b); err != syscall.ENOSYS {
		return err
	}
	tmp := a + ".swap"
	if err := os.Rename(a, tmp); err != nil {
		return err
	}
	if err := os.Rename(b, a); err != nil {
		return err
	}
	time.Sleep(0)
	return os.Rename(tmp, b)
}
