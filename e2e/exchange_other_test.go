//go:build !linux

package e2e

import "errors"

func renameExchange(a, b string) error { return errors.New("no RENAME_EXCHANGE here") }
