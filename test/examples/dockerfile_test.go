package examples

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/report/identity"
)

// shimPath is where every Dockerfile installs gpu-preflight.
const shimPath = "/usr/local/bin/gpu-preflight"

// dockerfiles are the example Dockerfiles and their build contexts (as the
// usage comment at the top of each says).
var dockerfiles = []struct {
	path, context string
	// base is a substring the default BASE_IMAGE must contain.
	base string
}{
	{"Dockerfile.example", ".", "paddlepaddle/paddle:2.6.0-gpu-cuda11.8"},
	{"examples/paddle/Dockerfile", "examples/paddle", "paddlepaddle/paddle:2.6.0-gpu-cuda11.8"},
	{"examples/pytorch/Dockerfile", "examples/pytorch", "-cuda12."},
}

func loadDockerfile(t *testing.T, rel string) Dockerfile {
	t.Helper()
	df, err := ParseDockerfile(readRepoFile(t, rel))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return df
}

// argDefaults are the defaults of the global ARGs.
func argDefaults(t *testing.T, df Dockerfile) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for _, in := range df.GlobalArgs {
		kv, err := KeyValues(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range kv {
			vars[p[0]] = p[1]
		}
	}
	return vars
}

// workdirPath resolves p against the stage's WORKDIR in effect before
// instruction index i, as Docker does for relative COPY destinations.
func workdirPath(s Stage, i int, p string) string {
	wd := "/"
	for _, in := range s.Body[:i] {
		if in.Cmd == "WORKDIR" {
			wd = path.Join(wd, in.Args)
		}
	}
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(wd, p)
}

// produced lists the absolute paths a stage leaves that other stages may
// copy: `go build -o` outputs and COPY destinations. A stage that is only an
// alias of the Go image holds the Go tree at /usr/local/go (GOROOT in the
// official golang images).
func produced(t *testing.T, df Dockerfile, s Stage) []string {
	t.Helper()
	var out []string
	if strings.Contains(s.From, "GO_IMAGE") || strings.HasPrefix(s.From, "golang:") {
		out = append(out, "/usr/local/go")
	}
	if base, ok := df.Stage(s.From); ok && base.Index < s.Index {
		out = append(out, produced(t, df, base)...)
	}
	for i, in := range s.Body {
		switch in.Cmd {
		case "RUN":
			if b, ok := goBuildIn(in.Args); ok {
				out = append(out, workdirPath(s, i, b.out))
			}
		case "COPY":
			w, err := Words(in.Args)
			if err != nil || len(w) < 2 {
				t.Fatalf("line %d: COPY %q", in.Line, in.Args)
			}
			out = append(out, workdirPath(s, i, w[len(w)-1]))
		}
	}
	return out
}

// goBuildIn finds a `go build` in a RUN's shell command (commands joined
// with && or ;) and parses it.
func goBuildIn(run string) (goBuild, bool) {
	for _, part := range regexp.MustCompile(`&&|;`).Split(run, -1) {
		if strings.Contains(part, "go build") {
			b, err := parseGoBuild(strings.TrimSpace(part))
			return b, err == nil
		}
	}
	return goBuild{}, false
}

func stageGoBuild(t *testing.T, df Dockerfile, name string) goBuild {
	t.Helper()
	s, ok := df.Stage(name)
	if !ok {
		t.Fatalf("no stage %q", name)
	}
	for _, in := range s.All("RUN") {
		if strings.Contains(in.Args, "go build") {
			b, ok := goBuildIn(in.Args)
			if !ok {
				_, err := parseGoBuild(in.Args)
				t.Fatalf("stage %s line %d: %v", name, in.Line, err)
			}
			return b
		}
	}
	t.Fatalf("stage %s has no go build", name)
	return goBuild{}
}

func TestDockerfileExampleBuildsTheShimAsTheMakefileDoes(t *testing.T) {
	df := loadDockerfile(t, "Dockerfile.example")
	want := makefileShimBuild(t)
	got := stageGoBuild(t, df, "build")
	if got.env["CGO_ENABLED"] != want.env["CGO_ENABLED"] {
		t.Errorf("CGO_ENABLED=%q, the Makefile builds with %q", got.env["CGO_ENABLED"], want.env["CGO_ENABLED"])
	}
	if got.trimpath != want.trimpath {
		t.Errorf("-trimpath %v, the Makefile %v", got.trimpath, want.trimpath)
	}
	if !slices.Equal(got.tags, want.tags) {
		t.Errorf("-tags %v, the Makefile's GO_TAGS are %v", got.tags, want.tags)
	}
	gotPlain, gotX := ldflagParts(got.ldflags)
	wantPlain, wantX := ldflagParts(want.ldflags)
	if !slices.Equal(gotPlain, wantPlain) || !slices.Equal(gotX, wantX) {
		t.Errorf("-ldflags sets %v and -X %v; the Makefile %v and -X %v", gotPlain, gotX, wantPlain, wantX)
	}
	if got.pkg != want.pkg {
		t.Errorf("builds %s, the Makefile %s", got.pkg, want.pkg)
	}
}

func TestDockerfileExampleBuildsTheProbeAsMakeProbeDoes(t *testing.T) {
	df := loadDockerfile(t, "Dockerfile.example")
	probe, ok := df.Stage("probe")
	if !ok {
		t.Fatal("no probe stage")
	}
	// scripts/sysroot.sh unpacks a bullseye sysroot; the stage must be the
	// same release, or the probe's glibc floor changes.
	if !strings.Contains(readRepoFile(t, "scripts/sysroot.sh"), "suite=bullseye") || probe.From != "debian:bullseye" {
		t.Errorf("the probe stage is FROM %s; scripts/sysroot.sh links against bullseye", probe.From)
	}
	installs := false
	for _, in := range probe.All("RUN") {
		if strings.Contains(in.Args, "apt-get install") && strings.Contains(in.Args, " gcc ") && strings.Contains(in.Args, " libc6-dev ") {
			installs = true
		}
	}
	if !installs {
		t.Error("the probe stage does not apt-get install gcc and libc6-dev (docs/sources.md, What gpu-preflight is held to)")
	}
	want := probeScriptBuild(t)
	got := stageGoBuild(t, df, "probe")
	for _, k := range []string{"CGO_ENABLED", "CGO_CFLAGS"} {
		if got.env[k] != want.env[k] {
			t.Errorf("%s=%q, scripts/probe-build.sh sets %q", k, got.env[k], want.env[k])
		}
	}
	if got.trimpath != want.trimpath || got.ldflags != want.ldflags || got.pkg != want.pkg || len(got.tags) != 0 {
		t.Errorf("probe build %+v, scripts/probe-build.sh %+v", got, want)
	}

	// The probe goes where `make build` embeds it from (mk/probe.mk).
	// Its name is per architecture: HOST_ARCH in make, TARGETARCH in a build.
	embed := strings.ReplaceAll(expandMake(makeVars(t)["PROBE_EMBED"], makeVars(t)), "<HOST_ARCH>", "${TARGETARCH}")
	build, _ := df.Stage("build")
	found := false
	for i, in := range build.Body {
		if in.Cmd == "COPY" && in.Flags["from"] == "probe" {
			w, _ := Words(in.Args)
			if w[0] == got.out && workdirPath(build, i, w[1]) == workdirPath(build, i, embed) {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("the build stage does not COPY --from=probe %s to %s (PROBE_EMBED)", got.out, embed)
	}
}

func TestDockerfileExampleCopiesEverySourceTheShimNeeds(t *testing.T) {
	df := loadDockerfile(t, "Dockerfile.example")
	rule := readRepoFile(t, "Makefile")
	m := regexp.MustCompile(`bin/gpu-preflight:.*find ((?:[a-z]+ )+)-name`).FindStringSubmatch(rule)
	if m == nil {
		t.Fatal("the Makefile's bin/gpu-preflight rule has no `find DIRS -name` prerequisite")
	}
	need := append(strings.Fields(m[1]), "go.mod", "go.sum")
	for _, name := range []string{"probe", "build"} {
		s, _ := df.Stage(name)
		var copied []string
		for _, in := range s.All("COPY") {
			if in.Flags["from"] != "" {
				continue
			}
			w, _ := Words(in.Args)
			copied = append(copied, w[:len(w)-1]...)
		}
		for _, n := range need {
			if !slices.Contains(copied, n) {
				t.Errorf("stage %s does not COPY %s (the Makefile builds from it)", name, n)
			}
		}
	}
}

func TestDockerfileGoImageIsNewEnough(t *testing.T) {
	df := loadDockerfile(t, "Dockerfile.example")
	img := argDefaults(t, df)["GO_IMAGE"]
	m := regexp.MustCompile(`^golang:(\d+)\.(\d+)`).FindStringSubmatch(img)
	goLine := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)`).FindStringSubmatch(readRepoFile(t, "go.mod"))
	if m == nil || goLine == nil {
		t.Fatalf("GO_IMAGE=%q, go.mod go line %v", img, goLine)
	}
	if m[1] != goLine[1] || len(m[2]) < len(goLine[2]) || (len(m[2]) == len(goLine[2]) && m[2] < goLine[2]) {
		t.Errorf("GO_IMAGE %s is older than go.mod's go %s.%s", img, goLine[1], goLine[2])
	}
}

// TestDockerfileCopyFromPathsExist: every COPY --from names a stage (or the
// shim image that Dockerfile.example's shim target builds) and a path that
// stage holds.
func TestDockerfileCopyFromPathsExist(t *testing.T) {
	example := loadDockerfile(t, "Dockerfile.example")
	shimStage, ok := example.Stage("shim")
	if !ok {
		t.Fatal("Dockerfile.example has no shim stage")
	}
	shimHolds := produced(t, example, shimStage)
	for _, d := range dockerfiles {
		t.Run(d.path, func(t *testing.T) {
			df := loadDockerfile(t, d.path)
			for _, s := range df.Stages {
				for _, in := range s.All("COPY") {
					from := in.Flags["from"]
					if from == "" {
						continue
					}
					w, err := Words(in.Args)
					if err != nil || len(w) != 2 {
						t.Fatalf("line %d: COPY --from wants SRC DST, got %q", in.Line, in.Args)
					}
					src, ok := df.Stage(from)
					if !ok || src.Index >= s.Index {
						t.Errorf("line %d: COPY --from=%s: no earlier stage of that name", in.Line, from)
						continue
					}
					holds := produced(t, df, src)
					if src.From == "${SHIM_IMAGE}" {
						holds = shimHolds
						if !strings.Contains(readRepoFile(t, d.path), "--target shim") {
							t.Errorf("%s copies from SHIM_IMAGE but does not say it is built with --target shim", d.path)
						}
					}
					if !slices.Contains(holds, path.Clean(w[0])) {
						t.Errorf("line %d: COPY --from=%s %s: that stage holds only %v", in.Line, from, w[0], holds)
					}
				}
			}
		})
	}
}

// TestDockerfileTrainingImage: the final stage of every Dockerfile is the
// shape the README documents.
func TestDockerfileTrainingImage(t *testing.T) {
	known := knownVariables(t)
	for _, d := range dockerfiles {
		t.Run(d.path, func(t *testing.T) {
			df := loadDockerfile(t, d.path)
			final, _ := df.Stage("")
			if base := argDefaults(t, df)["BASE_IMAGE"]; final.From != "${BASE_IMAGE}" || !strings.Contains(base, d.base) {
				t.Errorf("final stage FROM %s with BASE_IMAGE=%q, want ${BASE_IMAGE} defaulting to an image with %q", final.From, base, d.base)
			}
			order := []string{}
			for _, in := range final.Body {
				switch {
				case in.Cmd == "COPY" && in.Flags["from"] != "":
					if w, _ := Words(in.Args); len(w) == 2 && w[1] == shimPath {
						order = append(order, "copy-shim")
					}
				case in.Cmd == "RUN" && slices.Equal(in.Exec, []string{shimPath, "bake"}):
					order = append(order, "bake")
				case in.Cmd == "ENTRYPOINT":
					if !slices.Equal(in.Exec, []string{shimPath, "--"}) {
						t.Errorf("line %d: ENTRYPOINT %v, want [%s --]", in.Line, in.Exec, shimPath)
					}
					order = append(order, "entrypoint")
				case in.Cmd == "CMD":
					if len(in.Exec) == 0 {
						t.Errorf("line %d: CMD %q is not the exec form", in.Line, in.Args)
					}
					order = append(order, "cmd")
				}
			}
			if !slices.Equal(order, []string{"copy-shim", "bake", "entrypoint", "cmd"}) {
				t.Errorf("final stage has %v, want COPY of %s, RUN bake, ENTRYPOINT, CMD in that order", order, shimPath)
			}

			// Build arguments with values that say where they went.
			args := map[string]string{"REVISION": "arg-revision", "SOURCE": "arg-source", "CREATED": "arg-created"}
			env, labels := stageConfig(t, final, args)
			// OCI labels mirrored into the variables report/identity reads.
			for label, name := range map[string]string{
				"org.opencontainers.image.revision": identity.EnvRevision,
				"org.opencontainers.image.source":   identity.EnvSource,
				"org.opencontainers.image.created":  identity.EnvCreated,
			} {
				arg := "arg-" + strings.TrimPrefix(label, "org.opencontainers.image.")
				if labels[label] != arg || env[name] != arg {
					t.Errorf("LABEL %s=%q and ENV %s=%q: want both from the build argument (%q)", label, labels[label], name, env[name], arg)
				}
			}
			for name := range env {
				if strings.HasPrefix(name, "PREFLIGHT_") && !known[name] {
					t.Errorf("ENV %s is not a variable gpu-preflight reads (gpu-preflight -h, report/identity)", name)
				}
			}
			var volumes []string
			for _, in := range final.All("VOLUME") {
				volumes = append(volumes, in.Exec...)
			}
			if dir := env["PREFLIGHT_PROVENANCE_DIR"]; dir == "" || !slices.Contains(volumes, dir) {
				t.Errorf("PREFLIGHT_PROVENANCE_DIR=%q is not a VOLUME (%v)", dir, volumes)
			}
			for _, in := range final.All("COPY") {
				if in.Flags["from"] != "" {
					continue
				}
				w, _ := Words(in.Args)
				for _, src := range w[:len(w)-1] {
					if _, err := os.Stat(filepath.Join(repo(t), d.context, src)); err != nil {
						t.Errorf("line %d: COPY %s: not in the build context %s", in.Line, src, d.context)
					}
				}
			}
			// The usage comment builds with the context the COPYs assume.
			usage := regexp.MustCompile(`(?m)^#\s+docker build .* (\S+)$`).FindAllStringSubmatch(readRepoFile(t, d.path), -1)
			if !slices.ContainsFunc(usage, func(m []string) bool { return m[1] == d.context }) {
				t.Errorf("%s: no usage line `docker build ... %s` (the build context)", d.path, d.context)
			}
		})
	}
}

// TestDockerfileEnvIsValidConfiguration runs gpu-preflight with each final
// stage's environment: a value it refuses (exit 64) would stop every job.
func TestDockerfileEnvIsValidConfiguration(t *testing.T) {
	for _, d := range dockerfiles {
		t.Run(d.path, func(t *testing.T) {
			df := loadDockerfile(t, d.path)
			final, _ := df.Stage("")
			env := []string{"PATH=/usr/bin:/bin"}
			env0, _ := stageConfig(t, final, nil)
			for k, v := range env0 {
				env = append(env, k+"="+v)
			}
			empty := t.TempDir()
			env = append(env, "PREFLIGHT_PROVENANCE_DIR=off", "PREFLIGHT_ROOT="+empty, "PREFLIGHT_HOST_ROOT="+empty, "PREFLIGHT_LOG_FORMAT=json")
			r := runCmd(t, t.TempDir(), env, time.Minute, shim(t), "check")
			if r.code != 0 {
				t.Errorf("gpu-preflight check with the image's ENV exits %d:\n%s", r.code, r.stderr)
			}
		})
	}
}

// stageConfig is the ENV and LABEL a stage sets, with ARG defaults
// (overridden by buildArgs) and earlier ENV values expanded.
func stageConfig(t *testing.T, s Stage, buildArgs map[string]string) (env, labels map[string]string) {
	t.Helper()
	vars := map[string]string{}
	env, labels = map[string]string{}, map[string]string{}
	for _, in := range s.Body {
		if in.Cmd != "ARG" && in.Cmd != "ENV" && in.Cmd != "LABEL" {
			continue
		}
		kv, err := KeyValues(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range kv {
			v := Expand(p[1], vars)
			switch in.Cmd {
			case "ARG":
				if b, ok := buildArgs[p[0]]; ok {
					v = b
				}
				vars[p[0]] = v
			case "ENV":
				env[p[0]] = v
				vars[p[0]] = v
			case "LABEL":
				labels[p[0]] = v
			}
		}
	}
	return env, labels
}

// knownVariables lists the PREFLIGHT_* variables gpu-preflight reads: its
// configuration (from `gpu-preflight -h`) and the image identity.
func knownVariables(t *testing.T) map[string]bool {
	t.Helper()
	r := runCmd(t, t.TempDir(), []string{"PATH=/usr/bin:/bin"}, time.Minute, shim(t), "-h")
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`PREFLIGHT_[A-Z_]+`).FindAllString(r.stderr+r.stdout, -1) {
		known[m] = true
	}
	if !known["PREFLIGHT_POLICY"] || !known["PREFLIGHT_PROVENANCE_DIR"] {
		t.Fatalf("gpu-preflight -h does not list its configuration:\n%s%s", r.stdout, r.stderr)
	}
	for _, n := range []string{identity.EnvImage, identity.EnvDigest, identity.EnvRevision, identity.EnvCreated, identity.EnvSource} {
		known[n] = true
	}
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("known variables: %v", names)
	return known
}

// TestDocumentedDockerfileSnippets: every ```dockerfile block in README.md
// installs the shim where the examples do, from a path the shim image
// holds, and uses the exec forms the shim documents. A fragment without FROM
// is read as the end of a training image's Dockerfile.
func TestDocumentedDockerfileSnippets(t *testing.T) {
	example := loadDockerfile(t, "Dockerfile.example")
	shimStage, _ := example.Stage("shim")
	shimHolds := produced(t, example, shimStage)
	docs := []string{"README.md"}
	n := 0
	for _, doc := range docs {
		for i, b := range FencedBlocks(readRepoFile(t, doc)) {
			if b.Lang != "dockerfile" {
				continue
			}
			n++
			src := b.Body
			if !regexp.MustCompile(`(?mi)^\s*FROM\s`).MatchString(src) {
				src = "FROM your/framework-image:tag\n" + src
			}
			df, err := ParseDockerfile(src)
			if err != nil {
				t.Errorf("%s, dockerfile block %d: %v", doc, i, err)
				continue
			}
			final, _ := df.Stage("")
			copied := false
			for _, in := range final.Body {
				switch in.Cmd {
				case "COPY":
					w, _ := Words(in.Args)
					if in.Flags["from"] != "" && len(w) == 2 && w[1] == shimPath {
						copied = true
						if !slices.Contains(shimHolds, w[0]) {
							t.Errorf("%s: COPY --from=%s %s: the shim image (Dockerfile.example --target shim) holds %v", doc, in.Flags["from"], w[0], shimHolds)
						}
					}
				case "RUN":
					if strings.Contains(in.Args, "bake") && !slices.Equal(in.Exec, []string{shimPath, "bake"}) {
						t.Errorf("%s: RUN %s, want [%q, \"bake\"]", doc, in.Args, shimPath)
					}
				case "ENTRYPOINT":
					if !slices.Equal(in.Exec, []string{shimPath, "--"}) {
						t.Errorf("%s: ENTRYPOINT %s, want [%q, \"--\"]", doc, in.Args, shimPath)
					}
				}
			}
			if !copied {
				t.Errorf("%s, dockerfile block %d does not copy the shim to %s", doc, i, shimPath)
			}
		}
	}
	if n == 0 {
		t.Fatal("no dockerfile block in README.md")
	}
}
