package check

import (
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/identity"
)

var dec2026 = time.Date(2026, time.December, 1, 10, 0, 0, 0, time.UTC)

func lifecycleInput(driver, imageCUDA string, on time.Time) Input {
	in := input(host(driver, ""), facts.Container{CUDA: facts.CUDAToolkit{Version: imageCUDA}})
	in.Now = on
	return in
}

func TestDriverLifecycle(t *testing.T) {
	for _, tt := range []struct {
		name, driver, cuda string
		on                 time.Time
		status             Status
		contains           []string
	}{
		{"no driver", "", "12.4", dec2026, Skip, nil},
		{"LTSB in its window", "580.95.05", "12.8", dec2026, Pass, []string{"R580", "Long Term Support Branch", "June 2028"}},
		{"PB in its window", "595.45.04", "13.2", dec2026, Pass, []string{"R595", "Production Branch", "March 2027"}},
		{"R535 on its last supported day", "535.261.03", "12.2", time.Date(2026, time.June, 30, 23, 0, 0, 0, time.UTC), Pass, []string{"R535"}},
		{"R535 past end of life", "535.261.03", "12.2", dec2026, Info,
			[]string{"R535", "June 2026", "not a CUDA forward-compatibility target", "CUDA 12.2", "R580 (LTSB, until June 2028)", "R595 (PB, until March 2027)", "R620 (LTSB, until September 2029)"}},
		{"R570 past end of life, CUDA 13.1 image", "570.195.03", "13.1", dec2026, Info,
			[]string{"R570", "February 2026", "R595 (PB", "R620 (LTSB"}},
		{"branch only listed as ended", "550.163.01", "12.4", dec2026, Info, []string{"R550", "by August 2025"}},
		{"NFB inside its window", "610.43.02", "13.3", time.Date(2026, time.July, 1, 0, 0, 0, 0, time.UTC), Info,
			[]string{"R610", "New Feature Branch", "not a CUDA forward-compatibility target", "August 2026", "R620"}},
		{"NFB without a date", "590.48.01", "13.1", dec2026, Info, []string{"R590", "New Feature Branch", "R595", "R620"}},
		{"unknown branch", "600.10", "13.3", dec2026, Info, []string{"R600", "unknown", "R620"}},
		{"no supported branch runs the image", "535.261.03", "14.0", dec2026, Info, []string{"no supported branch", "CUDA 14.0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := driverLifecycle(lifecycleInput(tt.driver, tt.cuda, tt.on))
			wantFinding(t, f, tt.status, tt.contains...)
			if f.Status == Info && f.Remedy == "" {
				t.Errorf("info without a remedy: %s", f.Message)
			}
		})
	}
}

// Without the day of the run, a known branch is described, not judged.
func TestDriverLifecycleWithoutTheDay(t *testing.T) {
	wantFinding(t, driverLifecycle(lifecycleInput("535.261.03", "12.2", time.Time{})), Skip, "R535", "June 2026")
}

// The framework's CUDA counts when it is newer than the toolkit's.
func TestDriverLifecycleImageCUDAFromFramework(t *testing.T) {
	in := lifecycleInput("535.261.03", "12.2", dec2026)
	in.Facts.Container.Frameworks = []facts.Framework{{Name: "torch", Version: "2.7.0+cu128", CUDAVersion: "12.8"}}
	wantFinding(t, driverLifecycle(in), Info, "CUDA 12.8", "R580")
}

const digest = "sha256:4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c"

func TestImagePinned(t *testing.T) {
	for _, tt := range []struct {
		name     string
		environ  []string
		status   Status
		contains []string
	}{
		{"no reference", nil, Skip, []string{"PREFLIGHT_IMAGE"}},
		{"latest", []string{"PREFLIGHT_IMAGE=registry.example/train:latest"}, Info,
			[]string{"the tag latest", "cannot be reproduced or rolled back", "registry.example/train:latest@sha256:<digest>"}},
		{"no tag", []string{"PREFLIGHT_IMAGE=registry.example:5000/train"}, Info,
			[]string{"no tag (so :latest)", "@sha256:"}},
		{"digest in the reference", []string{"PREFLIGHT_IMAGE=train:latest@" + digest}, Pass, []string{"pinned by digest"}},
		{"digest-only reference", []string{"PREFLIGHT_IMAGE=train@" + digest}, Pass, nil},
		{"digest beside the reference", []string{"PREFLIGHT_IMAGE=train", "PREFLIGHT_IMAGE_DIGEST=" + digest}, Pass, []string{"PREFLIGHT_IMAGE_DIGEST"}},
		{"a malformed digest beside it pins nothing", []string{"PREFLIGHT_IMAGE=train", "PREFLIGHT_IMAGE_DIGEST=sha256:abc"}, Info, nil},
		{"a version tag", []string{"PREFLIGHT_IMAGE=nvcr.io/nvidia/pytorch:24.05-py3"}, Pass, []string{"tags can be moved"}},
		{"not a reference", []string{"PREFLIGHT_IMAGE=Train:Latest!"}, Info, []string{"not an image reference"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := facts.Container{Identity: identity.FromEnv(envvars.Parse(tt.environ))}
			f := imagePinned(input(facts.Host{}, c))
			wantFinding(t, f, tt.status, tt.contains...)
			if f.Status == Info && f.Remedy == "" {
				t.Errorf("info without a remedy: %s", f.Message)
			}
		})
	}
}
