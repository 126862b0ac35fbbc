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
var credentialWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "COOKIE", "PRIVATE",
	"SIGNATURE", "JWT", "BEARER"}

// Sensitive reports whether a variable, flag or key name looks like it holds
// a credential. Names are split into words at '_', '-', '.', other
// punctuation and lower-to-upper case changes ("apiKey" -> API KEY), then:
//
//   - TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL, COOKIE,
//     PRIVATE, SIGNATURE (a presigned URL's X-Amz-Signature), JWT, BEARER
//     anywhere;
//   - a word equal to SIG (an Azure shared access signature's sig=);
//   - a word equal to PASS, PWD or PW only when not the whole name (the
//     shell's PWD is a directory);
//   - a word ending in KEY or KEYS (KEY, APIKEY, ACCESSKEY), but not a word
//     that merely starts with KEY (KEYBOARD, KEYMAP);
//   - a word starting or ending with AUTH, digits after it aside (AUTH,
//     AUTHORIZATION, OAUTH, OAUTH2, BASICAUTH), except AUTHOR and AUTHORS.
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
		case w == "SIG":
			return true
		case (w == "PASS" || w == "PWD" || w == "PW") && len(ws) > 1:
			return true
		case strings.HasSuffix(w, "KEY") || strings.HasSuffix(w, "KEYS"):
			return true
		case w == "AUTHOR" || w == "AUTHORS":
		case strings.HasPrefix(w, "AUTH") || strings.HasSuffix(strings.TrimRight(w, "0123456789"), "AUTH"):
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
//	-px (mysql)                 -> -p[redacted]
//	--user admin:x, -uadmin:x   -> --user admin:[redacted]
//	PASSWORD=x, db.password=x   -> PASSWORD=[redacted]
//	--db-password=x;y&z         -> --db-password=[redacted]
//	--set=training.password=x   -> --set=training.password=[redacted]
//	https://h/k?a=1&X-Amz-Security-Token=x -> ...&X-Amz-Security-Token=[redacted]
//	'--config={"token": "x"}'   -> --config={"token": "[redacted]"}
//	"Authorization: Bearer x"   -> "Authorization: [redacted]"
//	--header=X-Api-Key: x       -> --header=X-Api-Key: [redacted]
//	https://u:p@host/x          -> https://[redacted]@host/x
//	u:p@host:2379               -> [redacted]@host:2379
//	aws_secret_access_key x     -> aws_secret_access_key [redacted]
//	wandb login x               -> wandb login [redacted]
//	ghp_..., hf_..., eyJ...     -> [redacted] (see tokens)
//
// An element that holds white space ("bash -c 'python train.py --token
// x'", "host=db password=x") is a command line or a list in itself and is
// read word by word, shell quotes kept together. The program name (argv[0])
// gets the same treatment: a path cannot be a flag, but it can carry URL
// user-info.
func Argv(argv []string) []string {
	if argv == nil {
		return nil
	}
	out := make([]string, len(argv))
	c := cmdline{on: true}
	for i, a := range argv {
		out[i] = c.step(a, func(a string) string {
			if strings.IndexFunc(a, unicode.IsSpace) >= 0 {
				return value(a, true)
			}
			return word(a)
		})
	}
	return out
}

// cmdline is what one word of a command line tells about the next ones.
type cmdline struct {
	// on: the words are a command line (argv, or one element of it), not
	// free text (a message, an environment value), so the rules that read
	// a word by its position apply.
	on bool
	// next is what happens to the next word: the value of a credential
	// flag or of a credential-named positional key.
	next valueRule
	// login is set after a login verb: until the command ends, every
	// positional word but a host or URL is a credential.
	login bool
	// echo is set after echo or printf in a command line that pipes into
	// --password-stdin: the words up to the pipe are the credential.
	echo, stdin bool
	prev        string
}

// loginVerbs are the words after which a command takes a credential as a
// positional argument: `wandb login KEY` (the wandb CLI reference), and
// `conda token set TOKEN` (conda-token). The word before, when not empty,
// must precede the verb.
var loginVerbs = []struct{ before, verb string }{{"", "login"}, {"token", "set"}}

// shellOperators end one command of a command line and start another.
var shellOperators = map[string]bool{"|": true, "||": true, "&&": true, ";": true, "&": true}

// step returns w as it may be recorded, and notes what w says of the words
// after it; other rewrites the word when no positional rule applies.
func (c *cmdline) step(w string, other func(string) string) string {
	prev := c.prev
	c.prev = w
	if c.next != keep && !isFlag(w) {
		n := c.next
		c.next = keep
		return n.apply(trimQuotes(w))
	}
	c.next = keep
	if name, ok := bareFlag(w); ok {
		if c.next = flagValue(name, w); c.next != keep {
			return w
		}
	}
	if !c.on {
		return other(w)
	}
	switch {
	case shellOperators[w]:
		c.login, c.echo = false, false
		return w
	case c.echo:
		return Placeholder
	case c.stdin && (w == "echo" || w == "printf"):
		c.echo = true
		return w
	case c.login && !strings.HasPrefix(w, "-") && !hostLike(w):
		return Placeholder
	}
	for _, v := range loginVerbs {
		if w == v.verb && (v.before == "" || prev == v.before) {
			c.login = true
			return w
		}
	}
	if keyName(w) && Sensitive(w) {
		c.next = placeholder
		return w
	}
	return other(w)
}

// isFlag reports whether w is a flag rather than a flag's value: "--x" or
// "-x". A value that starts with dashes and no letter ("-----BEGIN ...") is
// a value.
func isFlag(w string) bool {
	n := len(w) - len(strings.TrimLeft(w, "-"))
	return n == 2 && len(w) > 2 && isLetter(w[2])
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// keyName reports whether w reads as a configuration key given as a
// positional argument (`aws configure set aws_secret_access_key X`, `git
// config user.password X`): letters, digits and '_', '.' or '-', with at
// least one '_' or '.'.
func keyName(w string) bool {
	if w == "" || !isLetter(w[0]) || !strings.ContainsAny(w, "_.") {
		return false
	}
	for _, c := range []byte(w) {
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// hostLike reports whether a positional word after a login verb names a
// registry or server rather than a credential: a URL, localhost, or a host
// name with a dot, optionally with a port and a path.
func hostLike(w string) bool {
	if strings.Contains(w, "://") {
		return true
	}
	host, _, _ := strings.Cut(w, "/")
	host, _, _ = strings.Cut(host, ":")
	if host == "localhost" {
		return true
	}
	if !strings.Contains(host, ".") || strings.HasPrefix(host, ".") || strings.HasSuffix(host, ".") {
		return false
	}
	for _, c := range []byte(host) {
		if !isLetter(c) && !(c >= '0' && c <= '9') && c != '.' && c != '-' {
			return false
		}
	}
	return true
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

// userFlags take "user:password": curl's -u/--user, --proxy-user/-U and
// --cert <certificate[:password]>, HTTPie's -a.
var userFlags = map[string]bool{"user": true, "u": true, "proxy-user": true, "U": true, "cert": true, "a": true}

// flagValue says what to do with the value of the flag named name (a, as
// given: "-p" or "--token").
func flagValue(name, a string) valueRule {
	switch {
	case strings.HasSuffix(name, "-stdin"):
		// --password-stdin reads the credential from stdin: what follows
		// is the next argument (a registry), not the password.
		return keep
	case flagSensitive(name, a):
		return placeholder
	case userFlags[name]:
		return afterColon
	}
	return keep
}

// loneNames are credential names that Sensitive leaves alone when they are
// the whole name, because the shell's PWD is a directory, but that as a
// flag or a key take a password: --pass, --pwd, --pw, openssl's -pass,
// -passin and -passout, {"pwd": ...}.
var loneNames = []string{"pass", "pwd", "pw", "passin", "passout"}

// flagSensitive is Sensitive for a flag's name, which is never the shell's
// PWD: a flag named as one of loneNames or a single-dash -p (mysql,
// sshpass, docker login) takes a password.
func flagSensitive(name, a string) bool {
	return Sensitive(name) || lone(name) || a == "-p"
}

func lone(name string) bool {
	for _, n := range loneNames {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}

// bareFlag reports whether a is a flag without an attached value ("--token",
// "-token") and returns its name.
func bareFlag(a string) (string, bool) {
	if !strings.HasPrefix(a, "-") || strings.ContainsAny(a, "= \t\n:") {
		return "", false
	}
	name := strings.TrimLeft(a, "-")
	if name == "" || !isLetter(name[0]) {
		return "", false
	}
	return name, true
}

// attached redacts a short flag with its value attached: mysql's
// -pPASSWORD, curl's -uUSER:PASSWORD and -UUSER:PASSWORD.
func attached(w string) (string, bool) {
	if len(w) < 3 || w[0] != '-' || w[1] == '-' {
		return "", false
	}
	switch w[1] {
	case 'p':
		if lone(w[1:]) || pFlags[w[1:]] {
			return "", false // -pass, -passin: a flag whose value follows
		}
		return "-p" + Placeholder, true
	case 'u', 'U':
		if user, _, ok := strings.Cut(w[2:], ":"); ok {
			return w[:2] + user + ":" + Placeholder, true
		}
	}
	return "", false
}

// pFlags are single-dash flags that start with p and take no password:
// openssl enc's -pbkdf2, gcc's -pthread, -pedantic, -pipe, -pie, -pg,
// nvidia-smi's -pm (persistence mode).
var pFlags = map[string]bool{"pbkdf2": true, "pthread": true, "pedantic": true, "pipe": true, "pie": true, "pg": true, "pm": true}

// word redacts one argv element without white space, or one word of a
// command line (which may hold white space inside shell quotes).
func word(w string) string {
	w = tokens(w)
	if r, ok := attached(w); ok {
		return r
	}
	w = wordInValue(w)
	// "X-Api-Key:abc", "--header=X-Api-Key:abc" as one argv element (curl
	// -H without the space, an HTTPie header item).
	if prefix, ok := headerPrefix(w); ok {
		return prefix + " " + Placeholder
	}
	return w
}

// wordInValue is word without the "name: value" form, which inside a string
// is split across words and handled by value.
func wordInValue(w string) string {
	// URL user-info goes first, so that an '=' inside it ("https://u=p@h")
	// is not taken for an assignment's, and a second pass finds nothing
	// more to redact.
	w = URLUserInfo(w)
	w = bareUserInfo(w)
	w = quotedPairs(w)
	// openssl's pass phrase argument: pass:PASSWORD.
	if strings.HasPrefix(w, "pass:") {
		return "pass:" + Placeholder
	}
	// "--user=admin:x".
	if name, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(name, "-") && userFlags[strings.TrimLeft(name, "-")] {
		return name + "=" + afterColon.apply(v)
	}
	return assignments(w)
}

// headerPrefix reports whether w starts an HTTP header whose name looks
// like a credential ("Authorization:", "--header=X-Api-Key:abc",
// `"Authorization:`) and returns w up to and including the ':'. The name is
// what follows the last '=' and any opening quote before the ':'. A URL
// ("auth://..."), an HTTPie JSON item ("token:=...") and a value already
// redacted are no header.
func headerPrefix(w string) (string, bool) {
	start := 0 // where the name before the next ':' starts
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '=':
			start = i + 1
		case ':':
			name := strings.TrimLeft(w[start:i], `"'`)
			start = i + 1
			if !headerName(name) || !Sensitive(name) {
				continue
			}
			rest := w[i+1:]
			if strings.HasPrefix(rest, "//") || strings.HasPrefix(rest, "=") ||
				len(rest) <= len(Placeholder)+8 && strings.TrimSpace(strings.Trim(rest, `"'`)) == Placeholder {
				continue
			}
			return w[:i+1], true
		}
	}
	return "", false
}

// bareUserInfo replaces "user:password" before an '@' that has no scheme in
// front of it ("etcd:pw@host:2379", torchrun's --rdzv-endpoint and
// PET_RDZV_ENDPOINT) with Placeholder. It looks at the word from its start
// and from after each '='. A user name holds no '/' (so an image reference
// "registry/ml/train:2.3@sha256:..." is not one), and what follows the '@'
// is a host, not a digest ("sha256:" and hex).
func bareUserInfo(w string) string {
	at := strings.LastIndexByte(w, '@')
	if at < 0 || !strings.Contains(w[:at], ":") || w[at+1:] == "" || isDigest(w[at+1:]) {
		return w
	}
	scheme := strings.LastIndex(w[:at], "://")
	for start := 0; start < at; {
		// The user runs from start to the first character a user name
		// cannot hold; that must be the ':' before the password.
		colon := start
		for colon < at && userChar(w[colon]) {
			colon++
		}
		if colon > start && colon < at && w[colon] == ':' && scheme < start && w[colon+1:at] != "" &&
			w[colon+1:at] != Placeholder && !strings.EqualFold(w[start:colon], "mailto") {
			return w[:start] + Placeholder + w[at:]
		}
		i := strings.IndexByte(w[start:at], '=')
		if i < 0 {
			break
		}
		start += i + 1
	}
	return w
}

// userChar reports whether c can be part of the user of
// "user:password@host": RFC 3986's unreserved characters, '%' for
// percent-encoding, and '+', '!', '$'; no '/', '@', ':' or '='.
func userChar(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || strings.IndexByte("-._~%+!$", c) >= 0
}

// isDigest reports whether s starts with a content digest as OCI image
// references carry it (sha256:<64 hex>, sha512:...).
func isDigest(s string) bool {
	alg, hex, ok := strings.Cut(s, ":")
	if !ok || alg == "" || len(hex) < 32 {
		return false
	}
	for _, c := range []byte(hex[:32]) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// assignments redacts the value of every "key=value" in a word whose key
// looks like a credential. A key starts after the last '&', ';', ',', '?',
// '=', white space or quote before its '=' (so query parameters in any
// position, "Server=x;Password=y", "a=1,b.password=y" and
// "--set=training.password=y" are all found). A redacted value runs to the
// end of the word when its key starts the word ("--db-password=a;b&c",
// "DB_PASSWORD=a;b": a password may hold any character), else to the next
// '&' or ';' (a ',' may be part of the password, so it does not end one).
func assignments(w string) string {
	if strings.IndexByte(w, '=') < 0 {
		return w
	}
	var b strings.Builder
	keyStart := 0 // start of the current key in w
	i := 0        // w[:i] is in b
	for j := 0; j < len(w); j++ {
		switch c := w[j]; c {
		case '&', ';', ',', '?', ' ', '\t', '\n', '"', '\'':
			keyStart = j + 1
		case '=':
			key := w[keyStart:j]
			if !keySensitive(key) {
				keyStart = j + 1
				continue
			}
			end := len(w)
			if keyStart > 0 {
				if e := strings.IndexAny(w[j+1:], "&;"); e >= 0 {
					end = e + j + 1
				}
			}
			b.WriteString(w[i : j+1])
			b.WriteString(Placeholder)
			i, j, keyStart = end, end-1, end
		}
	}
	b.WriteString(w[i:])
	return b.String()
}

// keySensitive is Sensitive for the key of an assignment, which may also be
// one of loneNames ("pwd=x"); a key written as a flag ("--pass=x") follows
// the flag rule.
func keySensitive(key string) bool {
	if strings.HasPrefix(key, "-") {
		name := strings.TrimLeft(key, "-")
		return flagSensitive(name, key)
	}
	return Sensitive(key) || lone(strings.TrimRight(key, ":"))
}

// quotedPairs redacts the value of every quoted key that looks like a
// credential and is followed by ':' or '=' in s: JSON and Python literals
// ('--config={"token": "x"}', "{'password': 'x'}"), and JSON escaped inside a
// shell string (`"{\"password\":\"x\"}"`). A quoted value is replaced up
// to its closing quote, a bare one (a number) up to the next ',', '}', ']'
// or white space.
func quotedPairs(s string) string {
	if !strings.ContainsAny(s, "\"'") {
		return s
	}
	if strings.Contains(s, `\"`) {
		s = escapedPairs(s, `\"`)
	}
	if strings.Contains(s, `\'`) {
		s = escapedPairs(s, `\'`)
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
		if k >= len(s) || (s[k] != ':' && s[k] != '=') || !(Sensitive(key) || lone(key)) {
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

// escapedPairs is quotedPairs for keys and values quoted with q, a
// backslash-escaped quote (`\"`).
func escapedPairs(s, q string) string {
	var b strings.Builder
	i := 0 // s[:i] is in b
	for {
		open := strings.Index(s[i:], q)
		if open < 0 {
			break
		}
		open += i
		end := strings.Index(s[open+len(q):], q)
		if end < 0 {
			break
		}
		end += open + len(q)
		key := s[open+len(q) : end]
		k := end + len(q)
		for k < len(s) && s[k] == ' ' {
			k++
		}
		if k >= len(s) || (s[k] != ':' && s[k] != '=') || !(Sensitive(key) || lone(key)) {
			b.WriteString(s[i:end])
			i = end
			continue
		}
		k++
		for k < len(s) && s[k] == ' ' {
			k++
		}
		from, to := k, k
		if strings.HasPrefix(s[k:], q) {
			from = k + len(q)
			if e := strings.Index(s[from:], q); e >= 0 {
				to = from + e
			} else {
				to = len(s)
			}
		} else {
			for to < len(s) && !strings.ContainsRune(",}] \t\n\\", rune(s[to])) {
				to++
			}
		}
		b.WriteString(s[i:from])
		b.WriteString(Placeholder)
		i = to
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
// message): token formats and quoted credential keys anywhere; within
// words (white space outside shell quotes separates them) the same flag,
// assignment and URL forms as Argv; and after a credential-named header
// ("Authorization: Bearer x") the rest of the line, or of the quoted word.
// Other white space is preserved.
func Value(s string) string { return value(s, false) }

// value is Value; on reads s as a command line (one argv element holding
// white space), where the positional rules of Argv apply as well.
func value(s string, on bool) string {
	if s == "" {
		return s
	}
	s = tokens(s)
	s = quotedPairs(s)
	var b strings.Builder
	b.Grow(len(s))
	c := cmdline{on: on, stdin: on && strings.Contains(strings.ToLower(s), "password-stdin")}
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
		k := wordEnd(s, j, c.next != keep)
		w := s[j:k]
		if prefix, ok := headerPrefix(w); ok && c.next == keep {
			// "Authorization: Bearer x": the rest of the line, or of the
			// quoted word that holds the header, is the credential,
			// whatever its scheme word.
			c.prev = w
			if strings.IndexFunc(w, unicode.IsSpace) >= 0 {
				b.WriteString(prefix + " " + Placeholder)
				if last := w[len(w)-1]; last == '"' || last == '\'' {
					b.WriteByte(last)
				}
			} else {
				eol := strings.IndexByte(s[k:], '\n')
				if eol < 0 {
					eol = len(s) - k
				}
				b.WriteString(prefix)
				if strings.TrimSpace(w[len(prefix):]+s[k:k+eol]) != "" {
					b.WriteString(" " + Placeholder)
				}
				k += eol
			}
			i = k
			continue
		}
		other := wordInValue
		if on {
			// An attached short flag (-pX) is a command line's: in free
			// text, "nvidia-smi -i 0 -pm 1" is a remedy.
			other = wordInValueOrAttached
		}
		b.WriteString(c.step(w, other))
		i = k
	}
	return b.String()
}

// wordInValueOrAttached is word for one word of a string: a header there
// spans the following words, so value handles it.
func wordInValueOrAttached(w string) string {
	if r, ok := attached(w); ok {
		return r
	}
	return wordInValue(w)
}

// wordEnd returns the end of the word that starts at s[j]: the next white
// space outside quotes. A quote right after '=' or ':' opens a quoted part
// (--password='two words', -H "Authorization: x") that runs to its closing
// quote, and so does one at the word's start when the word is a flag's
// value (value: --token "two words"); anywhere else a quote is a letter
// (the image's), and a quoted command line ('python train.py --token x')
// is read word by word.
func wordEnd(s string, j int, value bool) int {
	k := j
	for k < len(s) && !isSpace(s[k]) {
		if c := s[k]; (c == '"' || c == '\'') && (k == j && value || k > j && (s[k-1] == '=' || s[k-1] == ':')) {
			if e := closingQuote(s, k); e >= 0 {
				k = e + 1
				continue
			}
		}
		k++
	}
	return k
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
