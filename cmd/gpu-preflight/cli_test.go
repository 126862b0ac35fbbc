package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/app"
)

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		r := runShim(t, nil, args...)
		if r.code != 0 || len(r.records) != 0 {
			t.Errorf("%v: exit %d, %d records", args, r.code, len(r.records))
		}
		for _, want := range []string{"gpu-preflight check", "gpu-preflight explain", "gpu-preflight diff", "--version",
			"PREFLIGHT_NODE_FAULT_EXIT_CODE, --node-fault-exit-code (default 75)", "--entrypoint gpu-preflight IMAGE check"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%v does not show %q:\n%s", args, want, r.stdout)
			}
		}
	}
}

// Each subcommand's -h and --help print its own usage and flags, from the
// same table and Config as everything else; `help CMD` prints the same.
// The configuration it lists is only what the command reads: bake, which
// scans the image, shows no PREFLIGHT_SUPERVISE and takes no --supervise.
func TestSubcommandHelpListsOnlyTheSettingsItReads(t *testing.T) {
	for _, tt := range []struct {
		cmd        string
		flags      []string // its own flags
		reads, not []string // settings its help lists, and some it must not
	}{
		{"check", []string{"--json"}, []string{"PREFLIGHT_POLICY", "PREFLIGHT_ROOT", "PREFLIGHT_PROVENANCE_DIR", "PREFLIGHT_EXIT_CODE"},
			[]string{"PREFLIGHT_SUPERVISE"}},
		{"explain", nil, []string{"PREFLIGHT_ROOT", "PREFLIGHT_HOST_ROOT", "PREFLIGHT_REQUIRE", "PREFLIGHT_TIMEOUT"},
			[]string{"PREFLIGHT_SUPERVISE", "PREFLIGHT_PROVENANCE_DIR", "PREFLIGHT_POLICY"}},
		{"bake", []string{"--out"}, []string{"PREFLIGHT_ROOT", "PREFLIGHT_MANIFEST", "PREFLIGHT_IMAGE_CONFIG"},
			[]string{"PREFLIGHT_SUPERVISE", "PREFLIGHT_POLICY", "PREFLIGHT_HOST_ROOT", "PREFLIGHT_LOG_LEVEL", "PREFLIGHT_TERMINATION_LOG"}},
		{"diff", []string{"--json"}, nil, []string{"PREFLIGHT_POLICY"}},
		{"advise", []string{"--driver", "--gpu", "--brand", "--json"}, []string{"PREFLIGHT_ROOT", "PREFLIGHT_POLICY", "PREFLIGHT_IGNORE"},
			[]string{"PREFLIGHT_SUPERVISE", "PREFLIGHT_PROVENANCE_DIR"}},
		{"affinity", []string{"--deprecated-labels", "--slurm"}, []string{"PREFLIGHT_ROOT", "PREFLIGHT_POLICY"},
			[]string{"PREFLIGHT_SUPERVISE", "PREFLIGHT_LEDGER"}},
		{"version", nil, nil, []string{"PREFLIGHT_POLICY"}},
	} {
		t.Run(tt.cmd, func(t *testing.T) {
			short := runShim(t, nil, tt.cmd, "-h")
			long := runShim(t, nil, tt.cmd, "--help")
			viaHelp := runShim(t, nil, "help", tt.cmd)
			for _, r := range []shimRun{short, long, viaHelp} {
				if r.code != 0 || len(r.records) != 0 {
					t.Fatalf("exit %d, %d records; stderr %s", r.code, len(r.records), r.stderr)
				}
			}
			if short.stdout != long.stdout || short.stdout != viaHelp.stdout {
				t.Errorf("-h, --help and help %s differ:\n%s\n---\n%s\n---\n%s", tt.cmd, short.stdout, long.stdout, viaHelp.stdout)
			}
			out := short.stdout
			if !strings.HasPrefix(out, "Usage: gpu-preflight "+tt.cmd) {
				t.Errorf("help does not start with the command's usage:\n%s", out)
			}
			for _, f := range tt.flags {
				if !strings.Contains(out, "  "+f+"\n") {
					t.Errorf("help does not list %s:\n%s", f, out)
				}
			}
			for _, key := range tt.reads {
				if !strings.Contains(out, "  "+key+", --") {
					t.Errorf("help does not list %s:\n%s", key, out)
				}
			}
			for _, key := range tt.not {
				if strings.Contains(out, key) {
					t.Errorf("help lists %s, which %s does not read:\n%s", key, tt.cmd, out)
				}
			}
			if strings.Contains(out, "gpu-preflight diff ") && tt.cmd != "diff" {
				t.Errorf("%s -h prints the whole program's help:\n%s", tt.cmd, out)
			}
		})
	}
	if r := runShim(t, nil, "bake", "--supervise"); r.code != exitUsage || !strings.Contains(r.stderr, "unknown flag --supervise") {
		t.Errorf("bake --supervise: exit %d, want %d and an unknown flag\n%s", r.code, exitUsage, r.stderr)
	}
}

// Every setting belongs to a part of the configuration some command reads.
func TestEverySettingHasAPart(t *testing.T) {
	for _, s := range app.Settings() {
		if !slices.Contains(app.AllParts, s.Part) {
			t.Errorf("%s: part %q is none of %v", s.Key, s.Part, app.AllParts)
		}
	}
	for _, sub := range subcommands {
		for _, p := range sub.reads {
			if !slices.Contains(app.AllParts, p) {
				t.Errorf("%s reads part %q, none of %v", sub.name, p, app.AllParts)
			}
		}
	}
}

func TestVersionFlag(t *testing.T) {
	a, b := runShim(t, nil, "--version"), runShim(t, nil, "version")
	if a.code != 0 || a.stdout != b.stdout || !strings.HasPrefix(a.stdout, "gpu-preflight ") || len(a.records) != 0 {
		t.Errorf("--version: exit %d, %q; version: %q", a.code, a.stdout, b.stdout)
	}
}

// A first argument that is no command on PATH but close to a subcommand is
// a usage error with "did you mean", before any preflight and without a
// record; a real program of that name runs, and after -- any name runs.
func TestSubcommandTypos(t *testing.T) {
	for typo, want := range map[string]string{"chek": "check", "exlpain": "explain", "expalin": "explain", "verison": "version"} {
		r := runShim(t, nil, typo)
		if r.code != exitUsage || !strings.Contains(r.stderr, `did you mean "`+want+`"`) {
			t.Errorf("%s: exit %d, stderr %s", typo, r.code, r.stderr)
		}
		if len(r.records) != 0 || strings.Contains(r.stderr, `"event":"summary"`) {
			t.Errorf("%s: a preflight ran (%d records):\n%s", typo, len(r.records), r.stderr)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "chek"), []byte("#!/bin/sh\necho real chek\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runShim(t, map[string]string{"PATH": dir + ":/usr/bin:/bin"}, "chek")
	if r.code != 0 || r.stdout != "real chek\n" {
		t.Errorf("a chek on PATH: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	if r := runShim(t, nil, "--", "chek"); r.code != exitNotFound {
		t.Errorf("-- chek: exit %d, want %d (the command is not found)", r.code, exitNotFound)
	}
}

// An unknown PREFLIGHT_ variable is a warning naming the one it looks like,
// in the log of a run and on stderr of a subcommand; the run goes on.
func TestUnknownVariableWarns(t *testing.T) {
	r := runShim(t, map[string]string{"PREFLIGHT_POLCY": "warn"}, "--", "true")
	line := logLine(t, r.stderr, map[string]string{"level": "warn"})
	if r.code != 0 || !strings.Contains(line["message"].(string), "PREFLIGHT_POLCY is not a gpu-preflight setting") ||
		!strings.Contains(line["message"].(string), "did you mean PREFLIGHT_POLICY?") {
		t.Errorf("exit %d, warning %v", r.code, line)
	}
	e := runShim(t, map[string]string{"PREFLIGHT_MIN_GPU": "2"}, "explain")
	if !strings.Contains(e.stderr, "warning: PREFLIGHT_MIN_GPU is not a gpu-preflight setting and is ignored (did you mean PREFLIGHT_MIN_GPUS?)") {
		t.Errorf("explain: stderr %s", e.stderr)
	}
	// The variables the record reads are not warned about.
	ok := runShim(t, map[string]string{"PREFLIGHT_IMAGE": "r/x:1", "PREFLIGHT_JOB_ID": "j"}, "--", "true")
	if strings.Contains(ok.stderr, "not a gpu-preflight setting") {
		t.Errorf("a variable the record reads is warned about:\n%s", ok.stderr)
	}
}

// A bad value names the flag it came from (and its variable), or the
// variable; an unknown flag names the one it looks like.
func TestBadValuesNameTheirSource(t *testing.T) {
	for _, tt := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--policy=wran", "--", "true"}, `--policy="wran" (PREFLIGHT_POLICY) is not valid: accepted values are warn, fail, strict (did you mean warn?)`},
		{map[string]string{"PREFLIGHT_POLICY": "wran"}, []string{"--", "true"}, `PREFLIGHT_POLICY="wran" is not valid`},
		{nil, []string{"check", "--nvml-timeout=ten"}, `--nvml-timeout="ten" (PREFLIGHT_NVML_TIMEOUT) is not valid: want a duration`},
		{nil, []string{"--log-format=jsno", "--", "true"}, `(did you mean json?)`},
		{nil, []string{"--polcy=warn", "--", "true"}, `unknown flag --polcy (did you mean --policy?)`},
		{nil, []string{"check", "--jsno"}, `unknown flag --jsno (did you mean --json?)`},
		{nil, []string{"--ignore=cuda-requirment", "--", "true"}, `(did you mean cuda-requirement?)`},
	} {
		r := runShim(t, tt.env, tt.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v %v: exit %d, stderr %s; want %q", tt.env, tt.args, r.code, r.stderr, tt.want)
		}
	}
}

// Enumerated values are read in any case, whichever setting they belong
// to: PREFLIGHT_POLICY=Warn as PREFLIGHT_LOG_LEVEL=WARN.
func TestEnumeratedValuesInAnyCase(t *testing.T) {
	r := runShim(t, map[string]string{"PREFLIGHT_POLICY": "Warn", "PREFLIGHT_LOG_LEVEL": "WARN", "PREFLIGHT_LOG_FORMAT": "JSON",
		"PREFLIGHT_IGNORE": "Gpu-Count", "PREFLIGHT_LOG_PROVENANCE": "False", "PREFLIGHT_MIN_GPUS": "1"}, "--", "echo", "ran")
	if r.code != 0 || r.stdout != "ran\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	rec := oneRecord(t, r)
	if get(rec, "decision", "policy") != "warn" {
		t.Errorf("decision.policy %v, want warn", get(rec, "decision", "policy"))
	}
	if strings.Contains(r.stderr, `"level":"info"`) || strings.Contains(r.stderr, `"message":"provenance"`) {
		t.Errorf("LOG_LEVEL=WARN or LOG_PROVENANCE=False not applied:\n%s", r.stderr)
	}
	for _, c := range get(rec, "checks").([]any) {
		if m := c.(map[string]any); m["id"] == "gpu-count" && m["status"] != "info" {
			t.Errorf("PREFLIGHT_IGNORE=Gpu-Count did not ignore gpu-count: %v", m)
		}
	}
}
