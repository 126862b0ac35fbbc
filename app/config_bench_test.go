package app

import (
	"os"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
)

// BenchmarkLoadConfig is what reading the configuration costs at every
// start: the settings list (made once per process, so made again here),
// each setting decoded, and the checks of every value.
func BenchmarkLoadConfig(b *testing.B) {
	env := envvars.Parse(os.Environ())
	for b.Loop() {
		settingsOnce = newSettings()
		if _, err := Load(env, map[string]string{}); err != nil {
			b.Fatal(err)
		}
	}
}
