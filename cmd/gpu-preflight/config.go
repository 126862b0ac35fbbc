package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kelseyhightower/envconfig"
	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/internal/safefile"
	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/imageconfig"
	"github.com/gpu-preflight/gpu-preflight/preflight/orchestrator"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
	"github.com/gpu-preflight/gpu-preflight/preflight/require"
	"github.com/gpu-preflight/gpu-preflight/report"
)

// Config is gpu-preflight's configuration, read by envconfig from the
// PREFLIGHT_* variables; a flag of the same name (--policy for
// PREFLIGHT_POLICY) overrides each.
//
// Each field's envconfig tag names its variable in full, prefix and all,
// and envconfig.Process is called without a prefix: envconfig falls back
// to a tagged field's bare tag when the variable is unset, and a bare
// PREFLIGHT_POLICY is the same name, so a container's own POLICY or ROOT
// never configures gpu-preflight. Deriving the names instead (a prefix
// and split_words) would make envconfig run two regular expressions over
// every field name at every start. The same struct makes the flags and
// the -h text; each field's part says which commands read it (see parts).
type Config struct {
	Policy            string        `envconfig:"PREFLIGHT_POLICY" default:"fail" desc:"warn, fail or strict" part:"decision"`
	Ignore            string        `envconfig:"PREFLIGHT_IGNORE" desc:"comma list of check ids downgraded to info" part:"decision"`
	RequireGPU        boolValue     `envconfig:"PREFLIGHT_REQUIRE_GPU" default:"false" desc:"no visible GPU is an error" part:"checks"`
	MinGPUs           int           `envconfig:"PREFLIGHT_MIN_GPUS" default:"0" desc:"fewer visible GPUs is an error" part:"checks"`
	Require           string        `envconfig:"PREFLIGHT_REQUIRE" desc:"extra requirement, NVIDIA_REQUIRE_* language" part:"checks"`
	ProvenanceDir     string        `envconfig:"PREFLIGHT_PROVENANCE_DIR" default:"/var/log/gpu-preflight" desc:"where records go; off disables the file" part:"record"`
	Ledger            string        `envconfig:"PREFLIGHT_LEDGER" desc:"append one JSON line per run to this file" part:"record"`
	LogFormat         string        `envconfig:"PREFLIGHT_LOG_FORMAT" default:"auto" desc:"json, console or auto" part:"record"`
	LogLevel          string        `envconfig:"PREFLIGHT_LOG_LEVEL" default:"info" desc:"trace, debug, info, warn, error or disabled" part:"record"`
	LogProvenance     boolValue     `envconfig:"PREFLIGHT_LOG_PROVENANCE" default:"true" desc:"log the record as one line; false when you collect the file" part:"record"`
	RecordArgv        string        `envconfig:"PREFLIGHT_RECORD_ARGV" default:"redacted" desc:"what records keep of the command: redacted, digest, none or full" part:"record"`
	NVMLTimeout       time.Duration `envconfig:"PREFLIGHT_NVML_TIMEOUT" default:"10s" desc:"deadline for the NVML probe" part:"host"`
	Timeout           time.Duration `envconfig:"PREFLIGHT_TIMEOUT" default:"30s" desc:"deadline for the whole preflight" part:"host"`
	NVMLLibrary       string        `envconfig:"PREFLIGHT_NVML_LIBRARY" default:"libnvidia-ml.so.1" desc:"NVML library the probe loads" part:"host"`
	Root              string        `envconfig:"PREFLIGHT_ROOT" default:"/" desc:"root of the image's files (an unpacked image, or an OCI bundle with rootfs/ and config.json)" part:"image"`
	HostRoot          string        `envconfig:"PREFLIGHT_HOST_ROOT" default:"/" desc:"root of the host's files read for the driver, GPUs, /dev, /dev/shm, cgroup and kernel" part:"host"`
	ImageConfig       string        `envconfig:"PREFLIGHT_IMAGE_CONFIG" desc:"the image's config, whose Env is its environment: OCI layout dir, OCI image or runtime config, docker/podman inspect" part:"image"`
	Manifest          string        `envconfig:"PREFLIGHT_MANIFEST" default:"/etc/gpu-preflight/image.json" desc:"baked image manifest, inside the root" part:"image"`
	TerminationLog    string        `envconfig:"PREFLIGHT_TERMINATION_LOG" default:"/dev/termination-log" desc:"written on abort: the default only when the file exists (the kubelet made it), a path set here when its directory does" part:"record"`
	ExitCode          int           `envconfig:"PREFLIGHT_EXIT_CODE" default:"78" desc:"exit code on a mismatch abort: this driver cannot run this image" part:"decision"`
	NodeFaultExitCode int           `envconfig:"PREFLIGHT_NODE_FAULT_EXIT_CODE" default:"75" desc:"exit code on a node-fault abort: retry on another node" part:"decision"`
	Supervise         string        `envconfig:"PREFLIGHT_SUPERVISE" default:"auto" desc:"true, false, or auto: supervise when PID 1" flag:"bool" part:"command"`
	SignalGroup       boolValue     `envconfig:"PREFLIGHT_SIGNAL_GROUP" default:"false" desc:"when supervising, forward signals to the command's process group, not only to the command (tini -g)" part:"command"`
	CUDACheck         string        `envconfig:"PREFLIGHT_CUDA_CHECK" default:"off" desc:"CUDA smoke test: off, init or kernel" part:"host"`
	CUDATimeout       time.Duration `envconfig:"PREFLIGHT_CUDA_TIMEOUT" default:"15s" desc:"deadline for the CUDA smoke test" part:"host"`

	// Derived.
	policy         policy.Policy
	ignore         map[string]bool
	nvmlLibrarySet bool
	// terminationLogSet: PREFLIGHT_TERMINATION_LOG was given, so its file
	// may be created (store.WriteTermination).
	terminationLogSet bool
	// imageEnv is ImageConfig's Env, read once when the configuration is
	// checked; nil without ImageConfig.
	imageEnv *envvars.Env
	// warnings are what the run should say about its configuration: an
	// unknown PREFLIGHT_ variable, say.
	warnings  []string
	supervise superviseMode
}

const envPrefix = "PREFLIGHT"

// The parts of the configuration. Each setting belongs to one (its part
// tag); each command lists the parts it reads (subcommands), and its flags
// and -h are the settings of those parts: bake, which only scans the image,
// offers no --supervise.
const (
	partImage    = "image"    // the image's files, environment and manifest
	partHost     = "host"     // the host's files, the probes and their deadlines
	partChecks   = "checks"   // what is required beyond the image's requirements
	partDecision = "decision" // how the findings become a decision and an exit code
	partRecord   = "record"   // where the log, the record and the termination message go
	partCommand  = "command"  // how the command starts (the ENTRYPOINT form only)
)

// allParts is what the ENTRYPOINT form reads: everything.
var allParts = []string{partImage, partHost, partChecks, partDecision, partRecord, partCommand}

// boolValue is a boolean setting: the words strconv.ParseBool takes, in
// any case, as every enumerated setting is read ("TRUE", "False", "1").
type boolValue bool

// Decode is envconfig's hook for the type.
func (b *boolValue) Decode(s string) error {
	v, err := strconv.ParseBool(strings.ToLower(s))
	*b = boolValue(v)
	return err
}

// usageError is a configuration or command-line error: exit 64.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// setting is one Config field as the command line and the environment see
// it.
type setting struct {
	Key   string // PREFLIGHT_POLICY
	Field string // Policy
	Flag  string // policy
	Def   string
	Desc  string
	Bool  bool
	Part  string // one of allParts
}

// settingsOnce walks Config once per process.
var settingsOnce = newSettings()

func newSettings() func() []setting { return sync.OnceValue(readSettings) }

// readSettings lists Config's fields with the variable each is read from
// (its envconfig tag) and the flag of the same name.
// TestSettingsAreEnvconfigs holds the list to envconfig's own answer.
func readSettings() []setting {
	t := reflect.TypeFor[Config]()
	out := make([]setting, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		key := f.Tag.Get("envconfig")
		if !f.IsExported() || key == "" {
			continue
		}
		out = append(out, setting{Key: key, Field: f.Name, Def: f.Tag.Get("default"), Desc: f.Tag.Get("desc"), Part: f.Tag.Get("part"),
			Bool: f.Type == reflect.TypeFor[boolValue]() || f.Tag.Get("flag") == "bool",
			Flag: strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(key, envPrefix+"_"), "_", "-"))})
	}
	return out
}

// settings are Config's fields in order: the one list the variables, the
// flags and -h are made from, so they cannot drift apart.
func settings() []setting { return settingsOnce() }

// settingsOf are the settings of the given parts, in Config's order.
func settingsOf(parts []string) []setting {
	all := settings()
	out := make([]setting, 0, len(all))
	for _, s := range all {
		if slices.Contains(parts, s.Part) {
			out = append(out, s)
		}
	}
	return out
}

// addConfigFlags registers one flag per setting on fs, or per setting
// only names when it is not nil (a boolean flag for a boolean variable, or
// one tagged flag:"bool", so --supervise needs no value and
// --supervise=auto still works); the values given are written into
// overrides under the variable's full name.
func addConfigFlags(fs *flag.FlagSet, settings []setting, overrides map[string]string, only []string) {
	for _, s := range settings {
		if only != nil && !slices.Contains(only, s.Flag) {
			continue
		}
		key := s.Key
		set := func(v string) error {
			overrides[key] = v
			return nil
		}
		// -h is configHelp's, which names the variable: the flag's own
		// usage is never printed, and joining the two for every flag
		// at every start would be 25 allocations for nothing.
		if s.Bool {
			fs.BoolFunc(s.Flag, s.Desc, set)
		} else {
			fs.Func(s.Flag, s.Desc, set)
		}
	}
}

// isConfigFlag reports whether name is one of addConfigFlags' flags.
func isConfigFlag(name string) bool {
	return slices.ContainsFunc(settings(), func(s setting) bool { return s.Flag == name })
}

// loadConfig reads the environment with envconfig, lets overrides (from
// flags) win, and validates every value. An invalid value is a usageError
// naming the flag or the variable it came from and what it accepts;
// nothing silently falls back. Only the PREFLIGHT_ names count: a
// container's own TIMEOUT or ROOT is not ours.
func loadConfig(overrides map[string]string) (Config, error) {
	// envconfig reads the process environment, so a flag's value goes
	// there; the command still gets the environment gpu-preflight started
	// with (main keeps a copy).
	for k, v := range overrides {
		os.Setenv(k, v)
	}
	var c Config
	if err := envconfig.Process("", &c); err != nil {
		var pe *envconfig.ParseError
		if errors.As(err, &pe) {
			return c, usagef("%s is not valid: %s", source(overrides, pe.KeyName, pe.Value), accepts(pe.TypeName))
		}
		return c, usagef("configuration: %v", err)
	}
	c.warnings = unknownVariables(os.Environ())
	_, c.nvmlLibrarySet = os.LookupEnv(envPrefix + "_NVML_LIBRARY")
	_, c.terminationLogSet = os.LookupEnv(envPrefix + "_TERMINATION_LOG")
	src := func(key, value string) string { return source(overrides, key, value) }

	var err error
	if c.policy, err = policy.Parse(c.Policy); err != nil {
		return c, usagef("%s is not valid: %s", src("PREFLIGHT_POLICY", c.Policy), oneOf(c.Policy, "warn", "fail", "strict"))
	}
	c.ignore = map[string]bool{}
	known := check.IDs()
	for id := range policy.ParseList(c.Ignore) {
		if canon, ok := matchFold(id, known); ok {
			c.ignore[canon] = true
			continue
		}
		msg := fmt.Sprintf("%s names unknown check %s: known checks are %s", src("PREFLIGHT_IGNORE", c.Ignore), truncate.Quote(id, truncate.MessageBytes), strings.Join(known, ", "))
		if m, ok := closest(strings.ToLower(id), known); ok {
			msg += fmt.Sprintf(" (did you mean %s?)", m)
		}
		return c, usagef("%s", msg)
	}
	if c.MinGPUs < 0 {
		return c, usagef("%s is not valid: want a whole number >= 0", src("PREFLIGHT_MIN_GPUS", strconv.Itoa(c.MinGPUs)))
	}
	if c.Require != "" {
		if err := require.Validate(c.Require); err != nil {
			return c, usagef("%s is not valid: %v", src("PREFLIGHT_REQUIRE", c.Require), err)
		}
	}
	var ok bool
	if c.LogFormat, ok = matchFold(c.LogFormat, logFormats); !ok {
		return c, usagef("%s is not valid: %s", src("PREFLIGHT_LOG_FORMAT", c.LogFormat), oneOf(c.LogFormat, logFormats...))
	}
	if c.LogLevel, ok = matchFold(c.LogLevel, logLevels); !ok {
		return c, usagef("%s is not valid: %s", src("PREFLIGHT_LOG_LEVEL", c.LogLevel), oneOf(c.LogLevel, logLevels...))
	}
	if strings.EqualFold(c.ProvenanceDir, provenanceOff) {
		c.ProvenanceDir = provenanceOff
	}
	if c.NVMLTimeout <= 0 {
		return c, usagef("%s is not valid: want a positive duration such as 10s", src("PREFLIGHT_NVML_TIMEOUT", c.NVMLTimeout.String()))
	}
	if c.Timeout <= 0 {
		return c, usagef("%s is not valid: want a positive duration such as 30s", src("PREFLIGHT_TIMEOUT", c.Timeout.String()))
	}
	if c.supervise, err = parseSupervise(c.Supervise); err != nil {
		return c, usagef("%s is not valid: %s", src("PREFLIGHT_SUPERVISE", c.Supervise), oneOf(c.Supervise, "auto", "true", "false"))
	}
	for key, code := range map[string]int{"PREFLIGHT_EXIT_CODE": c.ExitCode, "PREFLIGHT_NODE_FAULT_EXIT_CODE": c.NodeFaultExitCode} {
		if code < 1 || code > 255 {
			return c, usagef("%s is not valid: want 1..255", src(key, strconv.Itoa(code)))
		}
	}
	if c.RecordArgv, ok = matchFold(c.RecordArgv, report.ArgvModes); !ok {
		return c, usagef("%s is not valid: %s", src("PREFLIGHT_RECORD_ARGV", c.RecordArgv), oneOf(c.RecordArgv, report.ArgvModes...))
	}
	var mode string
	if mode, ok = matchFold(c.CUDACheck, cudaModes); !ok {
		return c, usagef("%s is not valid: %s", src("PREFLIGHT_CUDA_CHECK", c.CUDACheck), oneOf(c.CUDACheck, cudaModes...))
	}
	c.CUDACheck = mode
	if c.CUDATimeout <= 0 {
		return c, usagef("%s is not valid: want a positive duration such as 15s", src("PREFLIGHT_CUDA_TIMEOUT", c.CUDATimeout.String()))
	}
	for _, r := range []struct{ key, dir string }{{"PREFLIGHT_ROOT", c.Root}, {"PREFLIGHT_HOST_ROOT", c.HostRoot}} {
		if r.dir == "" {
			return c, usagef("%s is empty: want a directory such as /", src(r.key, ""))
		}
		if st, err := os.Stat(r.dir); err != nil || !st.IsDir() {
			return c, usagef("%s is not a directory", src(r.key, r.dir))
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
		env, _, err := imageconfig.Env(c.ImageConfig)
		switch {
		case errors.Is(err, safefile.ErrNotRegular):
			// A FIFO or a device where a file was named is a property of
			// the file system the job runs on, not of the setting: the
			// job still runs, and the checks read the process's own
			// environment, as they do without the setting.
			c.warnings = append(c.warnings, fmt.Sprintf("PREFLIGHT_IMAGE_CONFIG: %v; it is not read, and the image's environment is this process's", err))
		case err != nil:
			return c, usagef("PREFLIGHT_IMAGE_CONFIG: %v", err)
		default:
			parsed := envvars.Parse(env)
			c.imageEnv = &parsed
		}
	}
	return c, nil
}

// printWarnings writes the configuration's warnings for a subcommand that
// has no log.
func (c Config) printWarnings(w io.Writer) {
	for _, s := range c.warnings {
		fmt.Fprintf(w, "gpu-preflight: warning: %s\n", s)
	}
}

// Enumerated values, read in any case.
var (
	logFormats = []string{"json", "console", "auto"}
	logLevels  = []string{"trace", "debug", "info", "warn", "error", "fatal", "panic", "disabled"}
	cudaModes  = []string{facts.CUDAModeOff, facts.CUDAModeInit, facts.CUDAModeKernel}
)

// provenanceOff is the PREFLIGHT_PROVENANCE_DIR that writes no file.
const provenanceOff = "off"

// storesRecord reports whether the run leaves a record that outlives it: a
// provenance file or a ledger line (the log's provenance line is output, not
// a record a later line corrects).
func (c Config) storesRecord() bool {
	return c.ProvenanceDir != provenanceOff || c.Ledger != ""
}

// catchesSignals reports whether the preflight of a gpu-preflight whose
// process id is pid catches the terminating signals (signalGate) or leaves
// them the kernel's default action. It catches them when something depends
// on it: as PID 1, which the kernel never ends by a default action (a
// SIGTERM from `docker stop` would be dropped), when it will supervise the
// command (argv not nil), and when a stored record must not say that a
// command ran which a signal stopped first. Otherwise a signal ends the
// preflight as it would end the command once exec'd, in the kernel, and
// os/signal's threads and its round trip per signal (about 1 ms of a 5 ms
// start on a 2-core VM, docs/PERFORMANCE.md) are not paid for nothing.
func (c Config) catchesSignals(argv []string, pid int) bool {
	return pid == 1 || argv != nil && c.supervise.supervises(pid) || c.storesRecord()
}

// provenanceDir is where this run's records go. A PREFLIGHT_PROVENANCE_DIR
// that was set, root, and a default directory this user can write (an
// image's VOLUME) keep the setting. Any other user, whose default
// /var/log/gpu-preflight is not theirs to write (a developer on a
// workstation), gets a directory of their own: $XDG_STATE_HOME/gpu-preflight,
// or ~/.local/state/gpu-preflight (the XDG Base Directory default), when
// HOME is a directory they own. Without one (a container run as --user
// 1000, where HOME is /) the default stays, and writing it fails with the
// usual warning.
func (c Config) provenanceDir() string {
	if _, set := os.LookupEnv(envPrefix + "_PROVENANCE_DIR"); set || os.Getuid() == 0 {
		return c.ProvenanceDir
	}
	if unix.Access(c.ProvenanceDir, unix.W_OK|unix.X_OK) == nil {
		return c.ProvenanceDir
	}
	home := os.Getenv("HOME")
	if !filepath.IsAbs(home) || filepath.Clean(home) == "/" {
		return c.ProvenanceDir
	}
	var st unix.Stat_t
	if unix.Stat(home, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() {
		return c.ProvenanceDir
	}
	if state := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(state) {
		return filepath.Join(state, "gpu-preflight")
	}
	return filepath.Join(home, ".local", "state", "gpu-preflight")
}

// source names where a value came from, for an error:
// `--policy="wran" (PREFLIGHT_POLICY)` when a flag gave it, else
// `PREFLIGHT_POLICY="wran"`.
func source(overrides map[string]string, key, value string) string {
	if v, ok := overrides[key]; ok {
		for _, s := range settings() {
			if s.Key == key {
				return fmt.Sprintf("--%s=%s (%s)", s.Flag, truncate.Quote(v, truncate.MessageBytes), key)
			}
		}
	}
	return key + "=" + truncate.Quote(value, truncate.MessageBytes)
}

// matchFold returns the accepted value equal to v in any case.
func matchFold(v string, accepted []string) (string, bool) {
	for _, a := range accepted {
		if strings.EqualFold(v, a) {
			return a, true
		}
	}
	return v, false
}

// oneOf says what is accepted, and which it looks like v meant.
func oneOf(v string, accepted ...string) string {
	s := "accepted values are " + strings.Join(accepted, ", ")
	if m, ok := closest(strings.ToLower(v), accepted); ok {
		s += fmt.Sprintf(" (did you mean %s?)", m)
	}
	return s
}

// otherPrefixed are the PREFLIGHT_ variables that are not configuration
// but facts: those read from the container's environment (the image's
// identity, rows of envvars.Read) and the job id the record reads. Made
// on first use: only an environment with PREFLIGHT_ variables asks.
var otherPrefixed = sync.OnceValue(func() []string {
	names := []string{orchestrator.EnvJobID}
	for _, v := range envvars.Read {
		if strings.HasPrefix(v.Name, "PREFLIGHT_") {
			names = append(names, v.Name)
		}
	}
	return names
})

// unknownVariables warns about each PREFLIGHT_ variable in environ that
// gpu-preflight does not read, naming the one it looks like: a typo must
// not fall back to the default silently.
func unknownVariables(environ []string) []string {
	var known []string // made at the first PREFLIGHT_ variable
	var out []string
	unknown := 0
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix+"_") {
			continue
		}
		if known == nil {
			for _, s := range settings() {
				known = append(known, s.Key)
			}
			known = append(known, otherPrefixed()...)
		}
		if slices.Contains(known, name) {
			continue
		}
		if unknown++; unknown > maxUnknownWarnings {
			continue
		}
		// A name can be as long as the environment.
		w := fmt.Sprintf("%s is not a gpu-preflight setting and is ignored", truncate.String(name, truncate.MessageBytes))
		if m, ok := closest(name, known); ok {
			w += fmt.Sprintf(" (did you mean %s?)", m)
		} else {
			w += " (gpu-preflight -h lists them)"
		}
		out = append(out, w)
	}
	if n := unknown - maxUnknownWarnings; n > 0 {
		out = append(out, fmt.Sprintf("and %d more PREFLIGHT_ variables that are not gpu-preflight settings", n))
	}
	return out
}

// maxUnknownWarnings bounds the warnings about unknown variables: an
// environment can hold thousands.
const maxUnknownWarnings = 5

// accepts describes what a field of the type envconfig names
// (reflect.Type.String) accepts.
func accepts(typeName string) string {
	switch typeName {
	case "time.Duration":
		return "want a duration such as 10s, 500ms or 2m"
	case "main.boolValue":
		return "want true or false (also 1, 0, t, f, in any case)"
	case "int":
		return "want a whole number"
	}
	return "want a " + typeName
}

// configHelp lists the variables of parts, their flags, defaults and
// meanings for -h.
func configHelp(parts []string) string {
	var b strings.Builder
	b.WriteString("Configuration (environment; the flag of the same name wins; values in any case):\n")
	for _, s := range settingsOf(parts) {
		def := s.Def
		if def == "" {
			def = "(empty)"
		}
		fmt.Fprintf(&b, "  %s, --%s (default %s)\n        %s\n", s.Key, s.Flag, def, s.Desc)
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
// strconv.ParseBool reads (true, false, 1, 0, t, f), as when it was one,
// in any case.
func parseSupervise(s string) (superviseMode, error) {
	if strings.EqualFold(s, "auto") {
		return superviseAuto, nil
	}
	b, err := strconv.ParseBool(strings.ToLower(s))
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
