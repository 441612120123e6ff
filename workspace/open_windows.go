package workspace

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// forceGeneric has no use here: the final path is the only way.
var forceGeneric bool

// openChecked opens the checked file and then asks Windows for the opened file's final path
// (GetFinalPathNameByHandle): it must be the path that was checked, which has every link and
// junction resolved. A link or junction swapped in for the open leads elsewhere and is refused.
func openChecked(c Checked) (*os.File, error) {
	f, err := os.Open(c.Real)
	if err != nil {
		return nil, err
	}
	final, err := handlePath(windows.Handle(f.Fd()))
	if err != nil || Host.Key(final) != Host.Key(c.Real) {
		f.Close()
		return nil, fmt.Errorf("%s: %w", c.Rel, ErrMoved)
	}
	return f, nil
}
