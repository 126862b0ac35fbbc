package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"
	"github.com/rs/zerolog"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
	"github.com/gpu-preflight/gpu-preflight/preflight/require"
)

// Config is gpu-preflight's configuration: PREFLIGHT_* variables, each of
// which a flag of the same name (--policy for PREFLIGHT_POLICY) overrides.
type Config struct {
	Policy         string        `envconfig:"POLICY" default:"fail" desc:"warn, fail or strict"`
	Ignore         string        `envconfig:"IGNORE" desc:"comma list of check ids downgraded to info"`
	RequireGPU     bool          `envconfig:"REQUIRE_GPU" default:"false" desc:"no visible GPU is an error"`
	MinGPUs        int           `envconfig:"MIN_GPUS" default:"0" desc:"fewer visible GPUs is an error"`
	Require        string        `envconfig:"REQUIRE" desc:"extra requirement, NVIDIA_REQUIRE_* language"`
	ProvenanceDir  string        `envconfig:"PROVENANCE_DIR" default:"/var/log/gpu-preflight" desc:"where records go; off disables the file"`
	Ledger         string        `envconfig:"LEDGER" desc:"append one JSON line per run to this file"`
	LogFormat      string        `envconfig:"LOG_FORMAT" default:"auto" desc:"json, console or auto"`
	LogLevel       string        `envconfig:"LOG_LEVEL" default:"info" desc:"zerolog level"`
	NVMLTimeout    time.Duration `envconfig:"NVML_TIMEOUT" default:"10s" desc:"deadline for the NVML probe"`
	Timeout        time.Duration `envconfig:"TIMEOUT" default:"30s" desc:"deadline for the whole preflight"`
	NVMLLibrary    string        `envconfig:"NVML_LIBRARY" default:"libnvidia-ml.so.1" desc:"NVML library the probe loads"`
	Root           string        `envconfig:"ROOT" default:"/" desc:"root for every path the gatherers read"`
	Manifest       string        `envconfig:"MANIFEST" default:"/etc/gpu-preflight/image.json" desc:"baked image manifest, inside the root"`
	TerminationLog string        `envconfig:"TERMINATION_LOG" default:"/dev/termination-log" desc:"written on abort when its directory exists"`
	ExitCode       int           `envconfig:"EXIT_CODE" default:"78" desc:"exit code on abort"`
	Supervise      bool          `envconfig:"SUPERVISE" default:"false" desc:"stay as parent, record the command's exit"`

	// Derived.
	policy         policy.Policy
	ignore         map[string]bool
	nvmlLibrarySet bool
}

const envPrefix = "PREFLIGHT"

// usageError is a configuration or command-line error: exit 64.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// flagName is the flag for a PREFLIGHT_ variable suffix: REQUIRE_GPU -> require-gpu.
func flagName(key string) string { return strings.ToLower(strings.ReplaceAll(key, "_", "-")) }

// configFields are Config's fields that envconfig reads, in order: the one
// list flags, variables and -h are made from, so they cannot drift apart.
func configFields() []reflect.StructField {
	var fields []reflect.StructField
	t := reflect.TypeFor[Config]()
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Tag.Get("envconfig") != "" {
			fields = append(fields, t.Field(i))
		}
	}
	return fields
}

// addConfigFlags registers one flag per variable on fs (a boolean flag for
// a boolean variable, so --supervise needs no value); the values given are
// written into overrides under the variable's full name.
func addConfigFlags(fs *flag.FlagSet, overrides map[string]string) {
	for _, f := range configFields() {
		key := f.Tag.Get("envconfig")
		name := envPrefix + "_" + key
		set := func(v string) error {
			overrides[name] = v
			return nil
		}
		if f.Type.Kind() == reflect.Bool {
			fs.BoolFunc(flagName(key), "overrides "+name, set)
		} else {
			fs.Func(flagName(key), "overrides "+name, set)
		}
	}
}

// loadConfig reads the environment, lets overrides (from flags) win, and
// validates every value. An invalid value is a usageError naming the
// variable and what it accepts; nothing silently falls back.
func loadConfig(overrides map[string]string) (Config, error) {
	var c Config
	for name, v := range overrides {
		// The process environment was captured for the command already;
		// setting the variable here only routes the flag through envconfig.
		os.Setenv(name, v)
	}
	if err := envconfig.Process(envPrefix, &c); err != nil {
		var pe *envconfig.ParseError
		if errors.As(err, &pe) {
			return c, usagef("%s=%q is not valid: %s", pe.KeyName, pe.Value, accepts(pe.TypeName))
		}
		return c, usagef("configuration: %v", err)
	}
	_, c.nvmlLibrarySet = os.LookupEnv(envPrefix + "_NVML_LIBRARY")
	var err error
	if c.policy, err = policy.Parse(c.Policy); err != nil {
		return c, usagef("PREFLIGHT_POLICY=%q is not valid: accepted values are warn, fail, strict", c.Policy)
	}
	c.ignore = policy.ParseList(c.Ignore)
	known := check.IDs()
	for id := range c.ignore {
		if !slices.Contains(known, id) {
			return c, usagef("PREFLIGHT_IGNORE names unknown check %q: known checks are %s", id, strings.Join(known, ", "))
		}
	}
	if c.MinGPUs < 0 {
		return c, usagef("PREFLIGHT_MIN_GPUS=%d is not valid: want a whole number >= 0", c.MinGPUs)
	}
	if c.Require != "" {
		if err := require.Validate(c.Require); err != nil {
			return c, usagef("PREFLIGHT_REQUIRE=%q is not valid: %v", c.Require, err)
		}
	}
	switch c.LogFormat {
	case "json", "console", "auto":
	default:
		return c, usagef("PREFLIGHT_LOG_FORMAT=%q is not valid: accepted values are json, console, auto", c.LogFormat)
	}
	if _, err := zerolog.ParseLevel(c.LogLevel); err != nil || c.LogLevel == "" {
		return c, usagef("PREFLIGHT_LOG_LEVEL=%q is not valid: accepted values are trace, debug, info, warn, error, fatal, panic, disabled", c.LogLevel)
	}
	if c.NVMLTimeout <= 0 {
		return c, usagef("PREFLIGHT_NVML_TIMEOUT=%s is not valid: want a positive duration such as 10s", c.NVMLTimeout)
	}
	if c.Timeout <= 0 {
		return c, usagef("PREFLIGHT_TIMEOUT=%s is not valid: want a positive duration such as 30s", c.Timeout)
	}
	if c.ExitCode < 1 || c.ExitCode > 255 {
		return c, usagef("PREFLIGHT_EXIT_CODE=%d is not valid: want 1..255", c.ExitCode)
	}
	if c.Root == "" {
		return c, usagef("PREFLIGHT_ROOT is empty: want a directory such as /")
	}
	if st, err := os.Stat(c.Root); err != nil || !st.IsDir() {
		return c, usagef("PREFLIGHT_ROOT=%q is not a directory", c.Root)
	}
	return c, nil
}

// accepts describes what a variable of Go type typeName accepts.
func accepts(typeName string) string {
	switch typeName {
	case "bool":
		return "want true or false (also 1, 0, t, f)"
	case "int":
		return "want a whole number"
	case "Duration", "time.Duration":
		return "want a duration such as 10s, 500ms or 2m"
	}
	return "want a " + typeName
}

// configHelp lists the variables, their flags, defaults and meanings for -h.
func configHelp() string {
	var b strings.Builder
	b.WriteString("Configuration (environment; the flag of the same name wins):\n")
	for _, f := range configFields() {
		key := f.Tag.Get("envconfig")
		def := f.Tag.Get("default")
		if def == "" {
			def = "(empty)"
		}
		fmt.Fprintf(&b, "  %-26s --%-17s %-31s %s\n", envPrefix+"_"+key, flagName(key), def, f.Tag.Get("desc"))
	}
	return b.String()
}
