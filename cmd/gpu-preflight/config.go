package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/imageconfig"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
	"github.com/gpu-preflight/gpu-preflight/preflight/require"
)

// Config is gpu-preflight's configuration: PREFLIGHT_* variables, each of
// which a flag of the same name (--policy for PREFLIGHT_POLICY) overrides.
type Config struct {
	Policy            string        `env:"POLICY" default:"fail" desc:"warn, fail or strict"`
	Ignore            string        `env:"IGNORE" desc:"comma list of check ids downgraded to info"`
	RequireGPU        bool          `env:"REQUIRE_GPU" default:"false" desc:"no visible GPU is an error"`
	MinGPUs           int           `env:"MIN_GPUS" default:"0" desc:"fewer visible GPUs is an error"`
	Require           string        `env:"REQUIRE" desc:"extra requirement, NVIDIA_REQUIRE_* language"`
	ProvenanceDir     string        `env:"PROVENANCE_DIR" default:"/var/log/gpu-preflight" desc:"where records go; off disables the file"`
	Ledger            string        `env:"LEDGER" desc:"append one JSON line per run to this file"`
	LogFormat         string        `env:"LOG_FORMAT" default:"auto" desc:"json, console or auto"`
	LogLevel          string        `env:"LOG_LEVEL" default:"info" desc:"zerolog level"`
	NVMLTimeout       time.Duration `env:"NVML_TIMEOUT" default:"10s" desc:"deadline for the NVML probe"`
	Timeout           time.Duration `env:"TIMEOUT" default:"30s" desc:"deadline for the whole preflight"`
	NVMLLibrary       string        `env:"NVML_LIBRARY" default:"libnvidia-ml.so.1" desc:"NVML library the probe loads"`
	Root              string        `env:"ROOT" default:"/" desc:"root of the image's files (an unpacked image, or an OCI bundle with rootfs/ and config.json)"`
	HostRoot          string        `env:"HOST_ROOT" default:"/" desc:"root of the host's files read for the driver, GPUs, /dev, /dev/shm, cgroup and kernel"`
	ImageConfig       string        `env:"IMAGE_CONFIG" desc:"the image's config, whose Env is its environment: OCI layout dir, OCI image or runtime config, docker/podman inspect"`
	Manifest          string        `env:"MANIFEST" default:"/etc/gpu-preflight/image.json" desc:"baked image manifest, inside the root"`
	TerminationLog    string        `env:"TERMINATION_LOG" default:"/dev/termination-log" desc:"written on abort when its directory exists"`
	ExitCode          int           `env:"EXIT_CODE" default:"78" desc:"exit code on abort: the image does not fit this host"`
	NodeFaultExitCode int           `env:"NODE_FAULT_EXIT_CODE" default:"75" desc:"exit code on abort for a node fault: retry elsewhere"`
	Supervise         string        `env:"SUPERVISE" default:"auto" desc:"true, false, or auto: supervise when PID 1" flag:"bool"`
	CUDACheck         string        `env:"CUDA_CHECK" default:"off" desc:"CUDA smoke test: off, init or kernel"`
	CUDATimeout       time.Duration `env:"CUDA_TIMEOUT" default:"15s" desc:"deadline for the CUDA smoke test"`

	// Derived.
	policy         policy.Policy
	ignore         map[string]bool
	nvmlLibrarySet bool
	supervise      superviseMode
}

const envPrefix = "PREFLIGHT"

// usageError is a configuration or command-line error: exit 64.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// flagName is the flag for a PREFLIGHT_ variable suffix: REQUIRE_GPU -> require-gpu.
func flagName(key string) string { return strings.ToLower(strings.ReplaceAll(key, "_", "-")) }

// configFields are Config's fields that loadConfig reads, in order: the one
// list flags, variables and -h are made from, so they cannot drift apart.
func configFields() []reflect.StructField {
	var fields []reflect.StructField
	t := reflect.TypeFor[Config]()
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Tag.Get("env") != "" {
			fields = append(fields, t.Field(i))
		}
	}
	return fields
}

// addConfigFlags registers one flag per variable on fs (a boolean flag for
// a boolean variable, or one tagged flag:"bool", so --supervise needs no
// value and --supervise=auto still works); the values given are
// written into overrides under the variable's full name.
func addConfigFlags(fs *flag.FlagSet, overrides map[string]string) {
	for _, f := range configFields() {
		key := f.Tag.Get("env")
		name := envPrefix + "_" + key
		set := func(v string) error {
			overrides[name] = v
			return nil
		}
		if f.Type.Kind() == reflect.Bool || f.Tag.Get("flag") == "bool" {
			fs.BoolFunc(flagName(key), "overrides "+name, set)
		} else {
			fs.Func(flagName(key), "overrides "+name, set)
		}
	}
}

// loadConfig reads the environment, lets overrides (from flags) win, and
// validates every value. An invalid value is a usageError naming the
// variable and what it accepts; nothing silently falls back. Only the
// PREFLIGHT_ names count: a container's own TIMEOUT or ROOT is not ours.
func loadConfig(overrides map[string]string) (Config, error) {
	var c Config
	cv := reflect.ValueOf(&c).Elem()
	for _, f := range configFields() {
		name := envPrefix + "_" + f.Tag.Get("env")
		value, ok := lookupSetting(overrides, name)
		if !ok {
			value = f.Tag.Get("default")
		}
		if err := setField(cv.FieldByIndex(f.Index), value); err != nil {
			return c, usagef("%s=%s is not valid: %s", name, quoteValue(value), accepts(f.Type))
		}
	}
	_, c.nvmlLibrarySet = lookupSetting(overrides, envPrefix+"_NVML_LIBRARY")
	var err error
	if c.policy, err = policy.Parse(c.Policy); err != nil {
		return c, usagef("PREFLIGHT_POLICY=%s is not valid: accepted values are warn, fail, strict", quoteValue(c.Policy))
	}
	c.ignore = policy.ParseList(c.Ignore)
	known := check.IDs()
	for id := range c.ignore {
		if !slices.Contains(known, id) {
			return c, usagef("PREFLIGHT_IGNORE names unknown check %s: known checks are %s", quoteValue(id), strings.Join(known, ", "))
		}
	}
	if c.MinGPUs < 0 {
		return c, usagef("PREFLIGHT_MIN_GPUS=%d is not valid: want a whole number >= 0", c.MinGPUs)
	}
	if c.Require != "" {
		if err := require.Validate(c.Require); err != nil {
			return c, usagef("PREFLIGHT_REQUIRE=%s is not valid: %v", quoteValue(c.Require), err)
		}
	}
	switch c.LogFormat {
	case "json", "console", "auto":
	default:
		return c, usagef("PREFLIGHT_LOG_FORMAT=%s is not valid: accepted values are json, console, auto", quoteValue(c.LogFormat))
	}
	if _, err := zerolog.ParseLevel(c.LogLevel); err != nil || c.LogLevel == "" {
		return c, usagef("PREFLIGHT_LOG_LEVEL=%s is not valid: accepted values are trace, debug, info, warn, error, fatal, panic, disabled", quoteValue(c.LogLevel))
	}
	if c.NVMLTimeout <= 0 {
		return c, usagef("PREFLIGHT_NVML_TIMEOUT=%s is not valid: want a positive duration such as 10s", c.NVMLTimeout)
	}
	if c.Timeout <= 0 {
		return c, usagef("PREFLIGHT_TIMEOUT=%s is not valid: want a positive duration such as 30s", c.Timeout)
	}
	if c.supervise, err = parseSupervise(c.Supervise); err != nil {
		return c, usagef("PREFLIGHT_SUPERVISE=%s is not valid: accepted values are auto, true, false", quoteValue(c.Supervise))
	}
	if c.ExitCode < 1 || c.ExitCode > 255 {
		return c, usagef("PREFLIGHT_EXIT_CODE=%d is not valid: want 1..255", c.ExitCode)
	}
	if c.NodeFaultExitCode < 1 || c.NodeFaultExitCode > 255 {
		return c, usagef("PREFLIGHT_NODE_FAULT_EXIT_CODE=%d is not valid: want 1..255", c.NodeFaultExitCode)
	}
	switch c.CUDACheck {
	case facts.CUDAModeOff, facts.CUDAModeInit, facts.CUDAModeKernel:
	default:
		return c, usagef("PREFLIGHT_CUDA_CHECK=%s is not valid: accepted values are off, init, kernel", quoteValue(c.CUDACheck))
	}
	if c.CUDATimeout <= 0 {
		return c, usagef("PREFLIGHT_CUDA_TIMEOUT=%s is not valid: want a positive duration such as 15s", c.CUDATimeout)
	}
	for _, r := range []struct{ name, dir string }{{"ROOT", c.Root}, {"HOST_ROOT", c.HostRoot}} {
		if r.dir == "" {
			return c, usagef("PREFLIGHT_%s is empty: want a directory such as /", r.name)
		}
		if st, err := os.Stat(r.dir); err != nil || !st.IsDir() {
			return c, usagef("PREFLIGHT_%s=%s is not a directory", r.name, quoteValue(r.dir))
		}
	}
	// An OCI runtime bundle (umoci unpack, runc): the image's files are in
	// rootfs/ and its environment in config.json next to it.
	if c.Root != "/" && c.ImageConfig == "" {
		rootfs, cfg := filepath.Join(c.Root, "rootfs"), filepath.Join(c.Root, "config.json")
		if st, err := os.Stat(rootfs); err == nil && st.IsDir() {
			if st, err := os.Stat(cfg); err == nil && st.Mode().IsRegular() {
				c.Root, c.ImageConfig = rootfs, cfg
			}
		}
	}
	if c.ImageConfig != "" {
		if _, _, err := imageconfig.Env(c.ImageConfig); err != nil {
			return c, usagef("PREFLIGHT_IMAGE_CONFIG: %v", err)
		}
	}
	return c, nil
}

// lookupSetting returns a variable's value: the flag's if one was given,
// else the environment's.
func lookupSetting(overrides map[string]string, name string) (string, bool) {
	if v, ok := overrides[name]; ok {
		return v, true
	}
	return os.LookupEnv(name)
}

var durationType = reflect.TypeFor[time.Duration]()

// setField parses value into a Config field of one of the types Config
// uses. A variable set to the empty string is parsed as such, not replaced
// by the default: PREFLIGHT_MIN_GPUS= is an error, not 0.
func setField(v reflect.Value, value string) error {
	switch {
	case v.Type() == durationType:
		d, err := time.ParseDuration(value)
		v.SetInt(int64(d))
		return err
	case v.Kind() == reflect.String:
		v.SetString(value)
		return nil
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(value)
		v.SetBool(b)
		return err
	case v.Kind() == reflect.Int:
		n, err := strconv.ParseInt(value, 0, 64)
		v.SetInt(n)
		return err
	}
	return fmt.Errorf("Config field of type %s has no parser", v.Type())
}

// quoteValue quotes an invalid value for a usage error, cut to its first
// 64 bytes: a value can be as long as an environment string (128 KiB), and
// the error is one line a person reads.
func quoteValue(v string) string {
	if len(v) <= 64 {
		return strconv.Quote(v)
	}
	return fmt.Sprintf("%q... (%d bytes)", v[:64], len(v))
}

// accepts describes what a variable of type t accepts.
func accepts(t reflect.Type) string {
	switch {
	case t == durationType:
		return "want a duration such as 10s, 500ms or 2m"
	case t.Kind() == reflect.Bool:
		return "want true or false (also 1, 0, t, f)"
	case t.Kind() == reflect.Int:
		return "want a whole number"
	}
	return "want a " + t.String()
}

// configHelp lists the variables, their flags, defaults and meanings for -h.
func configHelp() string {
	var b strings.Builder
	b.WriteString("Configuration (environment; the flag of the same name wins):\n")
	for _, f := range configFields() {
		key := f.Tag.Get("env")
		def := f.Tag.Get("default")
		if def == "" {
			def = "(empty)"
		}
		fmt.Fprintf(&b, "  %-26s --%-17s %-31s %s\n", envPrefix+"_"+key, flagName(key), def, f.Tag.Get("desc"))
	}
	return b.String()
}

// superviseMode is PREFLIGHT_SUPERVISE: whether the command runs as a child
// of gpu-preflight (supervise.go) or replaces it (exec).
type superviseMode int

const (
	superviseAuto superviseMode = iota // supervise when gpu-preflight is PID 1
	superviseOn
	superviseOff
)

// parseSupervise reads PREFLIGHT_SUPERVISE: auto, or any boolean
// strconv.ParseBool reads (true, false, 1, 0, t, f), as when it was one.
func parseSupervise(s string) (superviseMode, error) {
	if s == "auto" {
		return superviseAuto, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return superviseAuto, err
	}
	if b {
		return superviseOn, nil
	}
	return superviseOff, nil
}

// supervises reports whether the command should run as a child for a
// gpu-preflight whose process id is pid. Under auto that is when it is
// PID 1: a container's init must forward signals and reap zombies, and a
// command exec'd in its place (python, sleep) ignores the SIGTERM that
// `docker stop` and a Kubernetes eviction send it, since the kernel drops
// signals PID 1 has no handler for.
func (m superviseMode) supervises(pid int) bool {
	return m == superviseOn || m == superviseAuto && pid == 1
}
