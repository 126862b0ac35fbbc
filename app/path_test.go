package app

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
)

// TestLookPathUsesTheFirstPATHAsGetenvDoes: with PATH set twice, the
// command is searched for where the command's own getenv("PATH") (glibc,
// Go's os.Getenv) would look: in the first definition, not the last.
func TestLookPathUsesTheFirstPATHAsGetenvDoes(t *testing.T) {
	first, second := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(first, "train"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(second, "only-in-second"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := envvars.Parse([]string{"PATH=" + first, "HOME=/root", "PATH=" + second})

	got, err := LookPath("train", env)
	if err != nil || got != filepath.Join(first, "train") {
		t.Errorf(`LookPath("train") = %q, %v; want %q from the first PATH`, got, err, filepath.Join(first, "train"))
	}
	if got, err := LookPath("only-in-second", env); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(`LookPath("only-in-second") = %q, %v; want not found: the second PATH is not the command's`, got, err)
	}
}
