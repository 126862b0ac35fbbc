// Package redact keeps secrets out of everything gpu-preflight writes: the
// provenance record, log lines and the termination message.
//
// Two rules, applied together:
//
//  1. Allow-list: only environment variables Allowed names are recorded at
//     all: those gpu-preflight reads from the container (envvars.Read) and
//     the families listed here. Everything else (cloud credentials, user
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
	"slices"
	"strings"
	"unicode"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
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
	"KUBERNETES_", // KUBERNETES_SERVICE_HOST says the pod runs in a cluster
}

// TensorFlowPrefixes are TensorFlow's own variable families, not every TF_
// name: TF_CLI_CONFIG_FILE and TF_VAR_* are Terraform's (and a Terraform
// variable can hold a credential). TensorFlow's GPU guide and its C++
// runtime read TF_CPP_MIN_LOG_LEVEL, TF_FORCE_GPU_ALLOW_GROWTH,
// TF_GPU_ALLOCATOR, TF_GPU_THREAD_MODE, TF_XLA_FLAGS, TF_ENABLE_ONEDNN_OPTS,
// TF_CUDNN_DETERMINISTIC, TF_DETERMINISTIC_OPS, TF_NUM_INTEROP_THREADS and
// TF_NUM_INTRAOP_THREADS (docs/sources.md, "The recorded environment").
var TensorFlowPrefixes = []string{"TF_CPP_", "TF_FORCE_GPU_", "TF_GPU_", "TF_XLA_", "TF_ENABLE_", "TF_CUDNN_",
	"TF_DETERMINISTIC_", "TF_NUM_INTEROP_", "TF_NUM_INTRAOP_"}

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
	// TensorFlow's cluster and task for MultiWorkerMirroredStrategy.
	"TF_CONFIG":       true,
	"OMP_NUM_THREADS": true,
	"HOSTNAME":        true,
}

// allowed is the record's own allow-list as one set.
var allowed = envvars.Names{Exact: allowedNames, Prefixes: slices.Concat(allowedPrefixes, TensorFlowPrefixes)}

// Allowed reports whether the variable name may be recorded: every variable
// gpu-preflight reads from the container, so that a record shows what its
// facts came from, and the record's own families.
func Allowed(name string) bool { return envvars.IsRead(name) || allowed.Has(name) }

// Env returns the allow-listed variables of env, with credential-looking
// values replaced.
func Env(env envvars.Env) map[string]string {
	out := env.Filter(Allowed)
	for name, value := range out {
		if Sensitive(name) {
			out[name] = Placeholder
		} else {
			out[name] = Value(value)
		}
	}
	return out
}

// credentialWords are words that mark a name as a credential wherever they
// appear in it, even inside a longer word ("GITHUBTOKEN", "DBPASSWORD").
var credentialWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "COOKIE", "PRIVATE", "SIGNATURE"}

// Sensitive reports whether a variable, flag or key name looks like it holds
// a credential. Names are split into words at '_', '-', '.', other
// punctuation and lower-to-upper case changes ("apiKey" -> API KEY), then:
//
//   - TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL, COOKIE,
//     PRIVATE, SIGNATURE (a presigned URL's X-Amz-Signature) anywhere;
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
//	--token x, --pass x, -p x   -> --token [redacted]
//	--user admin:x, -u admin:x  -> --user admin:[redacted]
//	PASSWORD=x, db.password=x   -> PASSWORD=[redacted]
//	--set=training.password=x   -> --set=training.password=[redacted]
//	https://h/k?a=1&X-Amz-Security-Token=x -> ...&X-Amz-Security-Token=[redacted]
//	'--config={"token": "x"}'   -> --config={"token": "[redacted]"}
//	"Authorization: Bearer x"   -> "Authorization: [redacted]"
//	https://u:p@host/x          -> https://[redacted]@host/x
//	s3://AKIA:se/cr/et@bucket/k -> s3://[redacted]@bucket/k
//
// An element that holds white space ("bash -c 'python train.py --token x'",
// "host=db password=x") is a command line or a list in itself and gets
// Value's treatment. The program name (argv[0]) gets the same treatment: a
// path cannot be a flag, but it can carry URL user-info.
func Argv(argv []string) []string {
	if argv == nil {
		return nil
	}
	out := make([]string, len(argv))
	next := keep
	for i, a := range argv {
		if next != keep {
			n := next
			next = keep
			// A following flag is not the value: "--use-auth --verbose".
			if !strings.HasPrefix(a, "--") {
				out[i] = n.apply(a)
				continue
			}
		}
		if name, ok := bareFlag(a); ok {
			if next = flagValue(name, a); next != keep {
				out[i] = a
				continue
			}
		}
		if strings.IndexFunc(a, unicode.IsSpace) >= 0 {
			out[i] = Value(a)
		} else {
			out[i] = word(a)
		}
	}
	return out
}

// valueRule is what happens to the word after a bare flag.
type valueRule int

const (
	keep        valueRule = iota
	placeholder           // the whole value is the credential
	afterColon            // "user:password": the part after the first ':'
)

func (r valueRule) apply(v string) string {
	if r == afterColon {
		if user, _, ok := strings.Cut(v, ":"); ok {
			return user + ":" + Placeholder
		}
		return v
	}
	return Placeholder
}

// userFlags take "user:password" (curl -u, --user, --proxy-user).
var userFlags = map[string]bool{"user": true, "u": true, "proxy-user": true, "U": true}

// flagValue says what to do with the value of the flag named name (a, as
// given: "-p" or "--token").
func flagValue(name, a string) valueRule {
	switch {
	case flagSensitive(name, a):
		return placeholder
	case userFlags[name]:
		return afterColon
	}
	return keep
}

// flagSensitive is Sensitive for a flag's name, which is never the shell's
// PWD: a flag named exactly pass (--pass, openssl's -pass) or a single-dash
// -p (mysql, sshpass, docker login) takes a password.
func flagSensitive(name, a string) bool {
	return Sensitive(name) || strings.EqualFold(name, "pass") || a == "-p"
}

// bareFlag reports whether a is a flag without an attached value ("--token",
// "-token") and returns its name.
func bareFlag(a string) (string, bool) {
	if !strings.HasPrefix(a, "-") || strings.ContainsAny(a, "= \t\n") {
		return "", false
	}
	name := strings.TrimLeft(a, "-")
	if name == "" {
		return "", false
	}
	return name, true
}

// word redacts one whitespace-free argv element or word of a value.
func word(a string) string {
	a = wordInValue(a)
	// "X-Api-Key:abc" as one argv element (curl -H without the space).
	if name, _, ok := strings.Cut(a, ":"); ok && headerName(name) && Sensitive(name) {
		return name + ": " + Placeholder
	}
	return a
}

// wordInValue is word without the "name: value" form, which inside a string
// is split across words and handled by Value.
func wordInValue(w string) string {
	// URL user-info goes first, so that an '=' inside it ("https://u=p@h")
	// is not taken for an assignment's, and a second pass finds nothing
	// more to redact.
	w = URLUserInfo(w)
	w = quotedPairs(w)
	// "--user=admin:x".
	if name, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(name, "-") && userFlags[strings.TrimLeft(name, "-")] {
		return name + "=" + afterColon.apply(v)
	}
	return assignments(w)
}

// assignments redacts the value of every "key=value" in a whitespace-free
// word whose key looks like a credential. A key starts after the last '&',
// ';', ',', '?' or '=' before its '=' (so query parameters in any position,
// "Server=x;Password=y", "a=1,b.password=y" and "--set=training.password=y"
// are all found), and a redacted value runs to the next '&' or ';' (a ','
// may be part of the password, so it does not end one).
func assignments(w string) string {
	if strings.IndexByte(w, '=') < 0 {
		return w
	}
	var b strings.Builder
	keyStart := 0 // start of the current key in w
	i := 0        // w[:i] is in b
	for j := 0; j < len(w); j++ {
		switch c := w[j]; c {
		case '&', ';', ',', '?':
			keyStart = j + 1
		case '=':
			key := w[keyStart:j]
			if !keySensitive(key) {
				keyStart = j + 1
				continue
			}
			end := strings.IndexAny(w[j+1:], "&;")
			if end < 0 {
				end = len(w)
			} else {
				end += j + 1
			}
			b.WriteString(w[i : j+1])
			b.WriteString(Placeholder)
			i, j, keyStart = end, end-1, end
		}
	}
	b.WriteString(w[i:])
	return b.String()
}

// keySensitive is Sensitive for the key of an assignment; a key written as
// a flag ("--pass=x") follows the flag rule.
func keySensitive(key string) bool {
	if strings.HasPrefix(key, "-") {
		name := strings.TrimLeft(key, "-")
		return flagSensitive(name, key)
	}
	return Sensitive(key)
}

// quotedPairs redacts the value of every quoted key that looks like a
// credential and is followed by ':' or '=' in s: JSON and Python literals
// ('--config={"token": "x"}', "{'password': 'x'}"). A quoted value is
// replaced up to its closing quote, a bare one (a number) up to the next
// ',', '}', ']' or white space.
func quotedPairs(s string) string {
	if !strings.ContainsAny(s, "\"'") {
		return s
	}
	var b strings.Builder
	i := 0 // s[:i] is in b
	for j := 0; j < len(s); j++ {
		q := s[j]
		if q != '"' && q != '\'' {
			continue
		}
		end := closingQuote(s, j)
		if end < 0 {
			break
		}
		key := s[j+1 : end]
		k := end + 1
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k >= len(s) || (s[k] != ':' && s[k] != '=') || !Sensitive(key) {
			j = end
			continue
		}
		k++
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k >= len(s) {
			break
		}
		var from, to int
		if v := s[k]; v == '"' || v == '\'' {
			from, to = k+1, closingQuote(s, k)
			if to < 0 {
				to = len(s)
			}
		} else {
			from, to = k, k
			for to < len(s) && !strings.ContainsRune(",}] \t\n", rune(s[to])) {
				to++
			}
		}
		b.WriteString(s[i:from])
		b.WriteString(Placeholder)
		i, j = to, to
		if to < len(s) && (s[to] == '"' || s[to] == '\'') {
			b.WriteByte(s[to])
			i = to + 1
		}
		j = i - 1
	}
	b.WriteString(s[i:])
	return b.String()
}

// closingQuote returns the index of the quote that closes the one at s[i],
// skipping backslash escapes, or -1.
func closingQuote(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case s[i]:
			return j
		}
	}
	return -1
}

// Value redacts a free-form string (an environment value, a finding's
// message, one argv element holding a command line): URL user-info and
// quoted credential keys anywhere; within whitespace-separated words the
// same flag and assignment forms as Argv; and after a credential-named
// header word ("Authorization: Bearer x") the rest of the line. Other
// whitespace is preserved.
func Value(s string) string {
	if s == "" {
		return s
	}
	s = quotedPairs(s)
	var b strings.Builder
	b.Grow(len(s))
	next := keep
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
		case next != keep && !strings.HasPrefix(w, "--"):
			b.WriteString(next.apply(trimQuotes(w)))
			next = keep
		case strings.HasSuffix(w, ":") && headerName(strings.TrimSuffix(w, ":")) && Sensitive(strings.TrimSuffix(w, ":")):
			// "Authorization: Bearer x": the rest of the line is the
			// credential, whatever its scheme word.
			next = keep
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
			next = keep
			if name, ok := bareFlag(w); ok && flagValue(name, w) != keep {
				next = flagValue(name, w)
				b.WriteString(w)
			} else {
				b.WriteString(wordInValue(w))
			}
		}
		i = k
	}
	return b.String()
}

// trimQuotes drops the shell quotes around a word of a command line
// ("--token 'x'"), which would otherwise survive around the placeholder.
func trimQuotes(w string) string {
	if len(w) >= 2 && (w[0] == '\'' || w[0] == '"') && w[len(w)-1] == w[0] {
		return w[1 : len(w)-1]
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
// authority, so an unescaped '@' in a password is covered too, and so is an
// unescaped '/', '?' or '#' (userInfoEnd). A user name alone ("https://token@host") is redacted as
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
		at := userInfoEnd(rest)
		if at < 0 {
			s = rest
			continue
		}
		b.WriteString(Placeholder)
		s = rest[at:]
	}
}

// userInfoEnd returns the index of the '@' that ends the user-info at the
// start of rest (what follows "scheme://"), or -1 when there is none.
//
// Normally the user-info ends at the last '@' before the authority ends
// ('/', '?', '#' or white space). But a password may hold '/', '?' or '#'
// unescaped (AWS secret keys hold '/': "s3://AKIA...:se/cr/et@bucket/key";
// "https://u:p#x@host/"): when the authority so far reads "user:rest" and
// rest is not a port number, the user-info runs to the last '@' before
// white space.
func userInfoEnd(rest string) int {
	word := len(rest)
	if i := strings.IndexAny(rest, " \t\n\r\v\f"); i >= 0 {
		word = i
	}
	end := strings.IndexAny(rest[:word], "/?#")
	if end < 0 {
		end = word
	}
	if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
		return at
	}
	if end == word {
		return -1
	}
	_, pass, ok := strings.Cut(rest[:end], ":")
	if !ok || pass == "" || strings.Trim(pass, "0123456789") == "" {
		return -1 // no password, or host:port
	}
	return strings.LastIndexByte(rest[:word], '@')
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
