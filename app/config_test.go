package app

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/gpu-preflight/gpu-preflight/preflight/cudaprobe"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
)

// The variables are envconfig's names for Config's fields, exactly these:
// a renamed field (MinGPUs splits into MIN_GP_US) must not rename a
// documented variable.
func TestVariableNamesAreEnvconfigs(t *testing.T) {
	var got []string
	for _, s := range Settings() {
		got = append(got, s.Key)
	}
	want := []string{"PREFLIGHT_POLICY", "PREFLIGHT_IGNORE", "PREFLIGHT_REQUIRE_GPU", "PREFLIGHT_MIN_GPUS", "PREFLIGHT_REQUIRE",
		"PREFLIGHT_PROVENANCE_DIR", "PREFLIGHT_LEDGER", "PREFLIGHT_LOG_FORMAT", "PREFLIGHT_LOG_LEVEL", "PREFLIGHT_LOG_PROVENANCE",
		"PREFLIGHT_NVML_TIMEOUT", "PREFLIGHT_TIMEOUT", "PREFLIGHT_NVML_LIBRARY", "PREFLIGHT_ROOT", "PREFLIGHT_MANIFEST",
		"PREFLIGHT_TERMINATION_LOG", "PREFLIGHT_EXIT_CODE", "PREFLIGHT_NODE_FAULT_EXIT_CODE", "PREFLIGHT_SUPERVISE"}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("no variable %s among %v", w, got)
		}
	}
}

// readSettings names each field's variable as envconfig reads it:
// envconfig's own usage template is the authority. Every name carries the
// prefix, so envconfig's fallback to a tag's bare name reads no variable
// of the container's own.
func TestSettingsAreEnvconfigs(t *testing.T) {
	var b strings.Builder
	if err := envconfig.Usagef("", &Config{}, &b, "{{range .}}{{usage_key .}}\n{{end}}"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range Settings() {
		got = append(got, s.Key)
		if !strings.HasPrefix(s.Key, envPrefix) {
			t.Errorf("%s is outside %s*", s.Key, envPrefix)
		}
	}
	if want := strings.Fields(b.String()); !slices.Equal(got, want) {
		t.Errorf("settings %v\nenvconfig %v", got, want)
	}
	if n := reflect.VisibleFields(reflect.TypeFor[Config]()); len(got) != len(slices.DeleteFunc(n, func(f reflect.StructField) bool { return !f.IsExported() })) {
		t.Errorf("%d settings, but Config has more exported fields: each needs its envconfig tag", len(got))
	}
}

// The CUDA check is off unless asked for, and its deadline's default is
// the one package cuda states.
func TestCUDACheckDefaults(t *testing.T) {
	ty := reflect.TypeFor[Config]()
	mode, _ := ty.FieldByName("CUDACheck")
	timeout, _ := ty.FieldByName("CUDATimeout")
	if mode.Tag.Get("default") != facts.CUDAModeOff {
		t.Errorf("PREFLIGHT_CUDA_CHECK defaults to %q, want off", mode.Tag.Get("default"))
	}
	if d, err := time.ParseDuration(timeout.Tag.Get("default")); err != nil || d != cudaprobe.DefaultTimeout {
		t.Errorf("PREFLIGHT_CUDA_TIMEOUT defaults to %q, want %s", timeout.Tag.Get("default"), cudaprobe.DefaultTimeout)
	}
}

// The exit codes' defaults are policy's: 78 for a mismatch, 75 for a node
// fault.
func TestExitCodeDefaultsArePolicys(t *testing.T) {
	for field, want := range map[string]int{
		"ExitCode":          policy.DefaultMismatchExitCode,
		"NodeFaultExitCode": policy.DefaultNodeFaultExitCode,
	} {
		f, ok := reflect.TypeFor[Config]().FieldByName(field)
		if !ok {
			t.Fatalf("Config has no field %s", field)
		}
		if got := f.Tag.Get("default"); got != strconv.Itoa(want) {
			t.Errorf("Config.%s defaults to %q, want %d", field, got, want)
		}
	}
}

// An unpacked image's config gives the command to judge and its working
// directory; with gpu-preflight as the image's ENTRYPOINT (podman image
// inspect of imageconfig's preflight.Containerfile) the command is the one
// after its "--". The image's command stays out of a check of the host's root.
func TestImageConfigGivesAnUnpackedRootsCommand(t *testing.T) {
	const inspect = "../preflight/imageconfig/testdata/podman-inspect-preflight.json"
	cfg, err := Load(envvars.Parse(nil), map[string]string{"PREFLIGHT_ROOT": t.TempDir(), "PREFLIGHT_IMAGE_CONFIG": inspect})
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.gatherOptions(envvars.Parse(nil))
	if !slices.Equal(o.Command, []string{"python", "train.py"}) || o.CommandFrom != "the image config's Entrypoint and Cmd, after gpu-preflight's --" || o.WorkDir != "/workspace" {
		t.Errorf("gatherOptions = command %q from %q in %q", o.Command, o.CommandFrom, o.WorkDir)
	}
	cfg, err = Load(envvars.Parse(nil), map[string]string{"PREFLIGHT_IMAGE_CONFIG": inspect})
	if err != nil {
		t.Fatal(err)
	}
	if o := cfg.gatherOptions(envvars.Parse(nil)); o.Command != nil || o.WorkDir != "" {
		t.Errorf("the host's root: command %q in %q, want neither", o.Command, o.WorkDir)
	}
}
