package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"
	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/internal/safefile"
	"github.com/gpu-preflight/gpu-preflight/internal/suggest"
	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/fsroot"
	"github.com/gpu-preflight/gpu-preflight/preflight/gather"
	"github.com/gpu-preflight/gpu-preflight/preflight/imageconfig"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
	"github.com/gpu-preflight/gpu-preflight/preflight/require"
	"github.com/gpu-preflight/gpu-preflight/report/termsafe"
)

// Config is gpu-preflight's configuration: each field's envconfig tag names
// its variable in full (a container's own POLICY is never read); the flag
// of the same name (--policy) overrides it.
type Config struct {
	Policy            policyName    `envconfig:"PREFLIGHT_POLICY" default:"fail" part:"decision"`
	Ignore            string        `envconfig:"PREFLIGHT_IGNORE" desc:"comma list of check ids downgraded to info" part:"decision"`
	RequireGPU        boolValue     `envconfig:"PREFLIGHT_REQUIRE_GPU" default:"false" desc:"no visible GPU is an error" part:"checks"`
	MinGPUs           number        `envconfig:"PREFLIGHT_MIN_GPUS" default:"0" desc:"fewer visible GPUs is an error" part:"checks"`
	Require           string        `envconfig:"PREFLIGHT_REQUIRE" desc:"extra requirement, NVIDIA_REQUIRE_* language" part:"checks"`
	ProvenanceDir     string        `envconfig:"PREFLIGHT_PROVENANCE_DIR" default:"/var/log/gpu-preflight" desc:"where records go; off disables the file" part:"record"`
	Ledger            string        `envconfig:"PREFLIGHT_LEDGER" desc:"append one JSON line per run to this file" part:"record"`
	LogFormat         logFormat     `envconfig:"PREFLIGHT_LOG_FORMAT" default:"auto" part:"record"`
	LogLevel          logLevel      `envconfig:"PREFLIGHT_LOG_LEVEL" default:"info" part:"record"`
	LogProvenance     boolValue     `envconfig:"PREFLIGHT_LOG_PROVENANCE" default:"true" desc:"log the record as one line; false when you collect the file" part:"record"`
	RecordArgv        argvMode      `envconfig:"PREFLIGHT_RECORD_ARGV" default:"redacted" desc:"what records keep of the command" part:"record"`
	NVMLTimeout       duration      `envconfig:"PREFLIGHT_NVML_TIMEOUT" default:"10s" desc:"deadline for the NVML probe" part:"host"`
	Timeout           duration      `envconfig:"PREFLIGHT_TIMEOUT" default:"30s" desc:"deadline for the whole preflight" part:"host"`
	NVMLLibrary       string        `envconfig:"PREFLIGHT_NVML_LIBRARY" default:"libnvidia-ml.so.1" desc:"NVML library the probe loads" part:"host"`
	Root              string        `envconfig:"PREFLIGHT_ROOT" default:"/" desc:"root of the image's files (an unpacked image, or an OCI bundle with rootfs/ and config.json)" part:"image"`
	HostRoot          string        `envconfig:"PREFLIGHT_HOST_ROOT" default:"/" desc:"root of the host's files read for the driver, GPUs, /dev, /dev/shm, cgroup and kernel" part:"host"`
	ImageConfig       string        `envconfig:"PREFLIGHT_IMAGE_CONFIG" desc:"the image's config: its Env, and for --root the command and working directory it starts; OCI layout dir, OCI image or runtime config, docker/podman inspect" part:"image"`
	Manifest          string        `envconfig:"PREFLIGHT_MANIFEST" default:"/etc/gpu-preflight/image.json" desc:"baked image manifest, inside the root" part:"image"`
	TerminationLog    string        `envconfig:"PREFLIGHT_TERMINATION_LOG" default:"/dev/termination-log" desc:"written on abort: the default only when the file exists (the kubelet made it), a path set here when its directory does" part:"record"`
	ExitCode          number        `envconfig:"PREFLIGHT_EXIT_CODE" default:"78" desc:"exit code on a mismatch abort: this driver cannot run this image" part:"decision"`
	NodeFaultExitCode number        `envconfig:"PREFLIGHT_NODE_FAULT_EXIT_CODE" default:"75" desc:"exit code on a node-fault abort: retry on another node" part:"decision"`
	Supervise         superviseMode `envconfig:"PREFLIGHT_SUPERVISE" default:"auto" desc:"run the command as a child (auto: when PID 1)" part:"command"`
	SignalGroup       boolValue     `envconfig:"PREFLIGHT_SIGNAL_GROUP" default:"false" desc:"when supervising, forward signals to the command's process group, not only to the command (tini -g)" part:"command"`
	CUDACheck         cudaMode      `envconfig:"PREFLIGHT_CUDA_CHECK" default:"off" desc:"CUDA smoke test" part:"host"`
	CUDATimeout       duration      `envconfig:"PREFLIGHT_CUDA_TIMEOUT" default:"15s" desc:"deadline for the CUDA smoke test" part:"host"`
	RDMACheck         rdmaMode      `envconfig:"PREFLIGHT_RDMA_CHECK" default:"off" desc:"RDMA active tier" part:"host"`
	RDMATimeout       duration      `envconfig:"PREFLIGHT_RDMA_TIMEOUT" default:"10s" desc:"deadline for the RDMA active tier" part:"host"`

	given    map[string]string // the flags' values, by variable
	ignore   map[string]bool
	imageEnv *envvars.Env      // ImageConfig's Env
	image    imageconfig.Image // ImageConfig's command and working directory
	warnings []string
	// Set, not defaulted: a default means less (store.WriteTermination, gather.Options.ForceProbe).
	nvmlLibrarySet, terminationLogSet, provenanceDirSet bool
}

// Load reads each setting from its flag's value in given, else env (not
// envconfig.Process's os.Environ), else its default; an error is a usage error.
func Load(env envvars.Env, given map[string]string) (Config, error) {
	c := Config{given: given}
	if err := c.decode(env); err != nil {
		return c, err
	}
	set := func(key string) bool {
		_, flagged := given[key]
		_, ok := env.Lookup(key)
		return flagged || ok
	}
	c.nvmlLibrarySet, c.terminationLogSet, c.provenanceDirSet = set("PREFLIGHT_NVML_LIBRARY"), set("PREFLIGHT_TERMINATION_LOG"), set("PREFLIGHT_PROVENANCE_DIR")
	c.warnings = unknownVariables(env)
	if err := c.validate(); err != nil {
		return c, err
	}
	return c, c.readImage()
}

func (c *Config) decode(env envvars.Env) error {
	v := reflect.ValueOf(c).Elem()
	for _, s := range Settings() {
		value, ok := c.given[s.Key]
		if !ok {
			value, ok = env.Lookup(s.Key)
		}
		if !ok && s.Default == "" {
			continue
		}
		if !ok {
			value = s.Default
		}
		f := v.Field(s.field)
		d, ok := f.Addr().Interface().(envconfig.Decoder)
		if !ok {
			f.SetString(value)
			continue
		}
		if err := d.Decode(value); err != nil {
			return c.invalid(s.Key, value, err.Error())
		}
	}
	return nil
}

// validate checks what no decoder can: ranges, ids, requirement, roots.
func (c *Config) validate() error {
	if err := c.readIgnore(); err != nil {
		return err
	}
	if c.MinGPUs < 0 {
		return c.invalid("PREFLIGHT_MIN_GPUS", strconv.Itoa(int(c.MinGPUs)), "want a whole number >= 0")
	}
	if c.Require != "" {
		if err := require.Validate(c.Require); err != nil {
			return c.invalid("PREFLIGHT_REQUIRE", c.Require, err.Error())
		}
	}
	if strings.EqualFold(c.ProvenanceDir, provenanceOff) {
		c.ProvenanceDir = provenanceOff
	}
	for _, d := range []struct {
		key string
		d   duration
	}{{"PREFLIGHT_NVML_TIMEOUT", c.NVMLTimeout}, {"PREFLIGHT_TIMEOUT", c.Timeout}, {"PREFLIGHT_CUDA_TIMEOUT", c.CUDATimeout}} {
		if d.d <= 0 {
			return c.invalid(d.key, time.Duration(d.d).String(), "want a positive duration such as "+settingOf(d.key).Default)
		}
	}
	for _, e := range []struct {
		key  string
		code number
	}{{"PREFLIGHT_EXIT_CODE", c.ExitCode}, {"PREFLIGHT_NODE_FAULT_EXIT_CODE", c.NodeFaultExitCode}} {
		if e.code < 1 || e.code > 255 {
			return c.invalid(e.key, strconv.Itoa(int(e.code)), "want 1..255")
		}
	}
	return c.checkRoots()
}

func (c *Config) readIgnore() error {
	c.ignore = map[string]bool{}
	known := check.IDs()
	for id := range policy.ParseList(c.Ignore) {
		if i := slices.IndexFunc(known, func(k string) bool { return strings.EqualFold(k, id) }); i >= 0 {
			c.ignore[known[i]] = true
			continue
		}
		msg := fmt.Sprintf("%s names unknown check %s: known checks are %s", c.source("PREFLIGHT_IGNORE", c.Ignore),
			truncate.Quote(id, truncate.MessageBytes), strings.Join(known, ", "))
		if m, ok := suggest.Closest(strings.ToLower(id), known); ok {
			msg += fmt.Sprintf(" (did you mean %s?)", m)
		}
		return usagef("%s", msg)
	}
	return nil
}

// checkRoots checks both roots are directories. An OCI runtime bundle
// (umoci unpack, runc) has the image in rootfs/ and its Env in config.json.
func (c *Config) checkRoots() error {
	for _, r := range []struct{ key, dir string }{{"PREFLIGHT_ROOT", c.Root}, {"PREFLIGHT_HOST_ROOT", c.HostRoot}} {
		if r.dir == "" {
			return usagef("%s is empty: want a directory such as /", c.source(r.key, ""))
		}
		if st, err := os.Stat(r.dir); err != nil || !st.IsDir() {
			return usagef("%s is not a directory", c.source(r.key, r.dir))
		}
	}
	if c.Root == "/" || c.ImageConfig != "" {
		return nil
	}
	rootfs, cfg := filepath.Join(c.Root, "rootfs"), filepath.Join(c.Root, "config.json")
	if st, err := os.Stat(rootfs); err == nil && st.IsDir() {
		if st, err := os.Stat(cfg); err == nil && st.Mode().IsRegular() {
			c.Root, c.ImageConfig = rootfs, cfg
		}
	}
	return nil
}

// readImage reads ImageConfig. A FIFO or a device there is the job's file
// system, not the setting: a warning, and the process's own Env is read.
func (c *Config) readImage() error {
	if c.ImageConfig == "" {
		return nil
	}
	im, err := imageconfig.Read(c.ImageConfig)
	switch {
	case errors.Is(err, safefile.ErrNotRegular):
		c.warnings = append(c.warnings, fmt.Sprintf("PREFLIGHT_IMAGE_CONFIG: %v; it is not read, and the image's environment is this process's", err))
	case err != nil:
		return usagef("PREFLIGHT_IMAGE_CONFIG: %v", err)
	default:
		parsed := envvars.Parse(im.Env)
		c.imageEnv, c.image = &parsed, im
	}
	return nil
}

// imageCommand is the command the image starts, after gpu-preflight's "--".
func (c Config) imageCommand() ([]string, string) {
	argv, from := c.image.Command, c.image.CommandFrom
	if len(argv) > 0 && path.Base(argv[0]) == "gpu-preflight" {
		if i := slices.Index(argv, "--"); i > 0 && i+1 < len(argv) {
			return argv[i+1:], from + ", after gpu-preflight's --"
		}
	}
	return argv, from
}

func (c Config) invalid(key, value, want string) error {
	return usagef("%s is not valid: %s", c.source(key, value), want)
}

// source names where a value came from: `--policy="wran" (PREFLIGHT_POLICY)`
// for a flag, else `PREFLIGHT_POLICY="wran"`.
func (c Config) source(key, value string) string {
	if v, ok := c.given[key]; ok {
		return fmt.Sprintf("--%s=%s (%s)", settingOf(key).Flag, truncate.Quote(v, truncate.MessageBytes), key)
	}
	return key + "=" + truncate.Quote(value, truncate.MessageBytes)
}

// usagef is a configuration error: the caller prints it and exits 64.
func usagef(format string, args ...any) error { return fmt.Errorf(format, args...) }

// PrintWarnings writes the warnings, for a command without a log.
func (c Config) PrintWarnings(w io.Writer) {
	for _, s := range c.warnings {
		fmt.Fprintf(w, "gpu-preflight: warning: %s\n", termsafe.String(s))
	}
}

// provenanceOff is the PREFLIGHT_PROVENANCE_DIR that writes no file.
const provenanceOff = "off"

// storesRecord reports whether a record outlives the run.
func (c Config) storesRecord() bool {
	return c.ProvenanceDir != provenanceOff || c.Ledger != ""
}

// Supervises reports whether gpu-preflight, as process pid, runs the command as its child.
func (c Config) Supervises(pid int) bool { return c.Supervise.supervises(pid) }

// catchesSignals reports whether the run catches the terminating signals:
// as PID 1 (which no default action ends), to supervise, and when a stored
// record must not say a command ran that a signal stopped first.
func (c Config) catchesSignals(argv []string, pid int) bool {
	return pid == 1 || argv != nil && c.Supervises(pid) || c.storesRecord()
}

// provenanceDir is where records go: as set, for root, or a default this
// user can write; else $XDG_STATE_HOME/gpu-preflight or under a HOME of
// theirs, else the default, whose write then warns.
func (c Config) provenanceDir(env envvars.Env) string {
	if c.provenanceDirSet || os.Getuid() == 0 || unix.Access(c.ProvenanceDir, unix.W_OK|unix.X_OK) == nil {
		return c.ProvenanceDir
	}
	home, _ := env.Lookup("HOME")
	if !filepath.IsAbs(home) || filepath.Clean(home) == "/" {
		return c.ProvenanceDir
	}
	var st unix.Stat_t
	if unix.Stat(home, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() {
		return c.ProvenanceDir
	}
	if state, _ := env.Lookup("XDG_STATE_HOME"); filepath.IsAbs(state) {
		return filepath.Join(state, "gpu-preflight")
	}
	return filepath.Join(home, ".local", "state", "gpu-preflight")
}

// gatherOptions take an unpacked image's command and working directory from its config.
func (c Config) gatherOptions(env envvars.Env) gather.Options {
	o := gather.Options{
		Root:         fsroot.Root(c.Root),
		HostRoot:     fsroot.Root(c.HostRoot),
		ImageEnviron: c.imageEnv,
		Environ:      env,
		NVMLLibrary:  c.NVMLLibrary,
		ForceProbe:   c.nvmlLibrarySet,
		NVMLTimeout:  time.Duration(c.NVMLTimeout),
		CUDAMode:     string(c.CUDACheck),
		CUDATimeout:  time.Duration(c.CUDATimeout),
		RDMAMode:     string(c.RDMACheck),
		RDMATimeout:  time.Duration(c.RDMATimeout),
		Manifest:     c.Manifest,
	}
	if c.imageEnv != nil && !o.Root.IsHost() {
		o.WorkDir = c.image.WorkDir
		o.Command, o.CommandFrom = c.imageCommand()
	}
	return o
}

func (c Config) checkInput(g gather.Result) check.Input {
	return check.Input{Facts: g.Facts, Visible: g.Visible, Now: time.Now(), Options: check.Options{
		RequireGPU: bool(c.RequireGPU), MinGPUs: int(c.MinGPUs), ExtraRequire: c.Require}}
}

func (c Config) exitCodes() policy.ExitCodes {
	return policy.ExitCodes{Mismatch: int(c.ExitCode), NodeFault: int(c.NodeFaultExitCode)}
}

const maxUnknownWarnings = 5 // an environment can hold thousands

// unknownVariables warns about each PREFLIGHT_ variable gpu-preflight does
// not read, naming the one it looks like: a typo must not pass silently.
func unknownVariables(env envvars.Env) []string {
	var known, out []string
	unknown := 0
	for _, kv := range env.List() {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) {
			continue
		}
		if known == nil {
			known = knownVariables()
		}
		if slices.Contains(known, name) {
			continue
		}
		if unknown++; unknown > maxUnknownWarnings {
			continue
		}
		w := fmt.Sprintf("%s is not a gpu-preflight setting and is ignored", truncate.String(name, truncate.MessageBytes))
		if m, ok := suggest.Closest(name, known); ok {
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

// knownVariables are the settings' and the facts' (envvars.Read).
func knownVariables() []string {
	var known []string
	for _, s := range Settings() {
		known = append(known, s.Key)
	}
	for _, v := range envvars.Read {
		if strings.HasPrefix(v.Name, envPrefix) {
			known = append(known, v.Name)
		}
	}
	return known
}
