package main

import (
	"testing"

	"github.com/kelseyhightower/envconfig"
)

// BenchmarkLoadConfig is what reading the configuration costs at every
// start: envconfig's Process over Config, the usage-template walk that
// names the settings (once per process, so it is reset here), and the
// checks of every value. bench/envconfig.sh quotes it with envconfig's
// package initialisation (GODEBUG=inittrace=1).
func BenchmarkLoadConfig(b *testing.B) {
	for b.Loop() {
		settingsOnce = newSettings()
		if _, err := loadConfig(map[string]string{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnvconfigProcess is envconfig's own share: Process over Config
// with the environment as it is.
func BenchmarkEnvconfigProcess(b *testing.B) {
	for b.Loop() {
		var c Config
		if err := envconfig.Process("", &c); err != nil {
			b.Fatal(err)
		}
	}
}
