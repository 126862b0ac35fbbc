// Package redact keeps secrets out of everything gpu-preflight writes: the
// provenance record, log lines and the termination message.
//
// Two rules, applied together:
//
//  1. Allow-list: only environment variables whose names are listed in
//     Allowed are recorded at all. Everything else (cloud credentials, user
//     variables) never leaves the process.
//  2. Credential shape: a variable name, flag name or key that looks like a
//     credential (see Sensitive) keeps its name but its value becomes
//     Placeholder; URL user-info ("https://u:p@host") is replaced wherever
//     it appears.
//
// Redaction errs on the side of hiding: a false positive costs a value in an
// audit record, a false negative leaks a credential into a log pipeline.
package redact

import (
	"sort"
	"strings"
	"unicode"
)

// Placeholder replaces every redacted value.
const Placeholder = "[redacted]"

// allowedPrefixes are the variable families recorded in a provenance record.
// They describe the GPU stack, the distributed launcher and gpu-preflight
// itself; none of them is meant to carry a secret (a name that does look like
// one is still redacted by Sensitive).
var allowedPrefixes = []string{
	"NVIDIA_",       // container toolkit: NVIDIA_VISIBLE_DEVICES, NVIDIA_REQUIRE_*, NVIDIA_DRIVER_CAPABILITIES
	"NV_",           // nvidia/cuda base images: NV_CUDA_LIB_VERSION, NV_CUDNN_VERSION
	"CUDA_",         // CUDA_VERSION, CUDA_VISIBLE_DEVICES, CUDA_MODULE_LOADING
	"CUDNN_",        // cuDNN settings
	"CUBLAS_",       // CUBLAS_WORKSPACE_CONFIG
	"NCCL_",         // NCCL tuning and debugging
	"PREFLIGHT_",    // gpu-preflight's own configuration
	"TORCH_",        // TORCH_CUDA_ARCH_LIST, TORCH_NCCL_*
	"PYTORCH_",      // PYTORCH_CUDA_ALLOC_CONF
	"TORCHELASTIC_", // torchrun: TORCHELASTIC_RUN_ID, TORCHELASTIC_RESTART_COUNT
	"PET_",          // torchrun options set as env by Kubeflow's PyTorchJob: PET_NNODES, PET_RDZV_ID
	"PADDLE_",       // PaddlePaddle distributed: PADDLE_TRAINER_ID, PADDLE_JOB_ID
	"FLAGS_",        // PaddlePaddle runtime flags: FLAGS_cudnn_deterministic
	"SLURM_",        // Slurm job, step and rank
	"OMPI_COMM_WORLD_",
	"XLA_",        // XLA_FLAGS, XLA_PYTHON_CLIENT_MEM_FRACTION
	"TF_",         // TF_FORCE_GPU_ALLOW_GROWTH, TF_CPP_MIN_LOG_LEVEL
	"KUBERNETES_", // KUBERNETES_SERVICE_HOST says the pod runs in a cluster
}

// allowedNames are single variables recorded by exact name.
var allowedNames = map[string]bool{
	// The search paths explain "command not found" and "wrong libcuda loaded".
	"PATH": true, "LD_LIBRARY_PATH": true, "LD_PRELOAD": true,
	// torchrun / generic distributed launchers.
	"RANK": true, "LOCAL_RANK": true, "WORLD_SIZE": true, "LOCAL_WORLD_SIZE": true,
	"GROUP_RANK": true, "ROLE_RANK": true, "MASTER_ADDR": true, "MASTER_PORT": true,
	// Kubernetes downward-API names gpu-preflight documents, and the index
	// Kubernetes injects into Indexed Jobs.
	"POD_NAME": true, "POD_NAMESPACE": true, "POD_UID": true, "NODE_NAME": true,
	"JOB_COMPLETION_INDEX": true,
	"OMP_NUM_THREADS":      true,
	"HOSTNAME":             true,
}

// Allowed reports whether the variable name may be recorded.
func Allowed(name string) bool {
	if allowedNames[name] {
		return true
	}
	for _, p := range allowedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Env filters an environment in os.Environ form ("NAME=value") to the
// allow-listed variables, with credential-looking values replaced. Entries
// without '=' are dropped. A name given twice keeps its first value, the one
// getenv (glibc's and Go's) returns.
func Env(environ []string) map[string]string {
	out := make(map[string]string)
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || !Allowed(name) {
			continue
		}
		if _, seen := out[name]; seen {
			continue
		}
		if Sensitive(name) {
			out[name] = Placeholder
			continue
		}
		out[name] = Value(value)
	}
	return out
}

// credentialWords are words that mark a name as a credential wherever they
// appear in it, even inside a longer word ("GITHUBTOKEN", "DBPASSWORD").
var credentialWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "COOKIE", "PRIVATE"}

// Sensitive reports whether a variable, flag or key name looks like it holds
// a credential. Names are split into words at '_', '-', '.', other
// punctuation and lower-to-upper case changes ("apiKey" -> API KEY), then:
//
//   - TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIAL, COOKIE, PRIVATE anywhere;
//   - a word equal to PASS or PWD only when not the whole name (the shell's
//     PWD is a directory);
//   - a word ending in KEY or KEYS (KEY, APIKEY, ACCESSKEY), but not a word
//     that merely starts with KEY (KEYBOARD, KEYMAP);
//   - a word starting or ending with AUTH (AUTH, AUTHORIZATION, OAUTH,
//     BASICAUTH), except AUTHOR and AUTHORS.
func Sensitive(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range credentialWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	ws := words(name)
	for _, w := range ws {
		switch {
		case (w == "PASS" || w == "PWD") && len(ws) > 1:
			return true
		case strings.HasSuffix(w, "KEY") || strings.HasSuffix(w, "KEYS"):
			return true
		case w == "AUTHOR" || w == "AUTHORS":
		case strings.HasPrefix(w, "AUTH") || strings.HasSuffix(w, "AUTH"):
			return true
		}
	}
	return false
}

// words splits a name into upper-case words at non-alphanumerics and at
// lower-to-upper case changes.
func words(name string) []string {
	var out []string
	var cur []rune
	var prev rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToUpper(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// Argv returns a copy of argv with credential values replaced:
//
//	--token=x, -password=x      -> --token=[redacted]
//	--token x                   -> --token [redacted]
//	PASSWORD=x, db.password=x   -> PASSWORD=[redacted]
//	"Authorization: Bearer x"   -> "Authorization: [redacted]"
//	https://u:p@host/x          -> https://[redacted]@host/x
//
// The program name (argv[0]) gets the same treatment: a path cannot be a
// flag, but it can carry URL user-info.
func Argv(argv []string) []string {
	if argv == nil {
		return nil
	}
	out := make([]string, len(argv))
	redactNext := false
	for i, a := range argv {
		if redactNext {
			redactNext = false
			// A following flag is not the value: "--use-auth --verbose".
			if !strings.HasPrefix(a, "--") {
				out[i] = Placeholder
				continue
			}
		}
		if name, ok := bareFlag(a); ok && Sensitive(name) {
			out[i] = a
			redactNext = true
			continue
		}
		out[i] = word(a)
	}
	return out
}

// bareFlag reports whether a is a flag without an attached value ("--token",
// "-token") and returns its name.
func bareFlag(a string) (string, bool) {
	if !strings.HasPrefix(a, "-") || strings.ContainsAny(a, "= ") {
		return "", false
	}
	name := strings.TrimLeft(a, "-")
	if name == "" {
		return "", false
	}
	return name, true
}

// word redacts one argv element or one whitespace-free word of a value.
func word(a string) string {
	// URL user-info goes first, so that an '=' inside it ("https://u=p@h")
	// is not taken for the assignment's, and a second pass finds nothing
	// more to redact.
	a = URLUserInfo(a)
	// "--name=value", "-name=value", "NAME=value", "a.b.password=value",
	// "https://[redacted]@host/?token=value".
	if name, _, ok := strings.Cut(a, "="); ok && Sensitive(strings.TrimLeft(name, "-")) {
		return name + "=" + Placeholder
	}
	// "Authorization: Bearer x" as one argv element (curl -H).
	if name, _, ok := strings.Cut(a, ":"); ok && headerName(name) && Sensitive(name) {
		return name + ": " + Placeholder
	}
	return a
}

// Value redacts a free-form string (an environment value, a finding's
// message): URL user-info anywhere; within whitespace-separated words the
// same flag and assignment forms as Argv; and after a credential-named
// header word ("Authorization: Bearer x") the rest of the line. Other
// whitespace is preserved.
func Value(s string) string {
	if s == "" {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	redactNext := false
	i := 0
	for i < len(s) {
		// Copy the separator run.
		j := i
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		b.WriteString(s[i:j])
		if j == len(s) {
			break
		}
		k := j
		for k < len(s) && !isSpace(s[k]) {
			k++
		}
		w := s[j:k]
		switch {
		case redactNext && !strings.HasPrefix(w, "--"):
			redactNext = false
			b.WriteString(Placeholder)
		case strings.HasSuffix(w, ":") && headerName(strings.TrimSuffix(w, ":")) && Sensitive(strings.TrimSuffix(w, ":")):
			// "Authorization: Bearer x": the rest of the line is the
			// credential, whatever its scheme word.
			redactNext = false
			b.WriteString(w)
			eol := strings.IndexByte(s[k:], '\n')
			if eol < 0 {
				eol = len(s) - k
			}
			if strings.TrimSpace(s[k:k+eol]) != "" {
				b.WriteString(" " + Placeholder)
			}
			k += eol
		default:
			redactNext = false
			if name, ok := bareFlag(w); ok && Sensitive(name) {
				redactNext = true
				b.WriteString(w)
			} else {
				b.WriteString(wordInValue(w))
			}
		}
		i = k
	}
	return b.String()
}

// wordInValue is word without the "name: value" form, which inside a string
// is split across words and handled by Value.
func wordInValue(w string) string {
	w = URLUserInfo(w) // first, as in word
	if name, _, ok := strings.Cut(w, "="); ok && Sensitive(strings.TrimLeft(name, "-")) {
		return name + "=" + Placeholder
	}
	return w
}

// headerName reports whether s can be an HTTP header name as people write
// them (letters, digits, '-', '_'), so "auth.example.com:443" is a host, not
// a header.
func headerName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// URLUserInfo replaces the user-info of every "scheme://user:pass@host" in s
// with Placeholder. The user-info ends at the last '@' before the end of the
// authority ('/', '?', '#' or whitespace), so an unescaped '@' in a password
// is covered too. A user name alone ("https://token@host") is redacted as
// well: tokens are often passed that way.
func URLUserInfo(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 || !isScheme(s[:i]) {
			if i < 0 {
				b.WriteString(s)
				return b.String()
			}
			b.WriteString(s[:i+3])
			s = s[i+3:]
			continue
		}
		b.WriteString(s[:i+3])
		rest := s[i+3:]
		end := strings.IndexAny(rest, "/?# \t\n\r\v\f")
		if end < 0 {
			end = len(rest)
		}
		at := strings.LastIndexByte(rest[:end], '@')
		if at < 0 {
			s = rest
			continue
		}
		b.WriteString(Placeholder)
		s = rest[at:]
	}
}

// isScheme reports whether the text before "://" ends in a URL scheme
// (ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), RFC 3986 section 3.1).
func isScheme(before string) bool {
	n := 0
	for n < len(before) {
		c := before[len(before)-1-n]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			break
		}
		n++
	}
	if n == 0 {
		return false
	}
	first := before[len(before)-n]
	return first >= 'a' && first <= 'z' || first >= 'A' && first <= 'Z'
}

// AllowedNames lists the exact names Allowed accepts and the prefixes it
// accepts, sorted, for documentation and tests.
func AllowedNames() (names, prefixes []string) {
	for n := range allowedNames {
		names = append(names, n)
	}
	sort.Strings(names)
	prefixes = append(prefixes, allowedPrefixes...)
	sort.Strings(prefixes)
	return names, prefixes
}
