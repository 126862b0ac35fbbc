package redact

import (
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/test/redacttest"
)

func TestSensitiveNames(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		// The credential words, anywhere in the name.
		{"HF_TOKEN", true},
		{"GITHUBTOKEN", true},
		{"AWS_SECRET_ACCESS_KEY", true},
		{"AWS_ACCESS_KEY_ID", true},
		{"DB_PASSWORD", true},
		{"MYSQL_ROOT_PASSWD", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", true},
		{"PREFLIGHT_TOKEN", true},
		{"password", true},
		{"hfToken", true},
		{"apiKey", true},
		{"api-key", true},
		{"db.password", true},
		{"SESSION_COOKIE", true},
		{"SSH_PRIVATE_KEY", true},
		// KEY: a word ending in KEY or KEYS, not one starting with it.
		{"KEY", true},
		{"APIKEY", true},
		{"OPENAI_API_KEY", true},
		{"SIGNING_KEYS", true},
		{"KEYBOARD", false},
		{"XKB_KEYMAP", false},
		{"KEYBOARD_LAYOUT", false},
		// AUTH: a word starting or ending with it, but not AUTHOR.
		{"AUTH", true},
		{"BASIC_AUTH", true},
		{"OAUTH_CLIENT", true},
		{"Authorization", true},
		{"GIT_AUTHOR_NAME", false},
		{"AUTHORS", false},
		// PASS and PWD only as part of a longer name: the shell's PWD is a directory.
		{"PWD", false},
		{"DB_PWD", true},
		{"SMTP_PASS", true},
		{"PASS", false},
		{"PASSTHROUGH", false},
		// Ordinary names.
		{"NVIDIA_VISIBLE_DEVICES", false},
		{"CUDA_VERSION", false},
		{"NCCL_DEBUG", false},
		{"PATH", false},
		{"MASTER_ADDR", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := Sensitive(tt.name); got != tt.want {
			t.Errorf("Sensitive(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestAllowListOnlyRecordsKnownFamilies(t *testing.T) {
	env := []string{
		"NVIDIA_VISIBLE_DEVICES=all",
		"NVIDIA_REQUIRE_CUDA=cuda>=12.2 brand=tesla,driver>=470,driver<471",
		"CUDA_VERSION=12.2.2",
		"NCCL_DEBUG=INFO",
		"PREFLIGHT_POLICY=fail",
		"PATH=/usr/local/cuda/bin:/usr/bin",
		"RANK=3",
		"SLURM_JOB_ID=4242",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"HF_TOKEN=hf_plantedplantedplanted",
		"HOME=/root",
		"MY_APP_SETTING=x",
		"PREFLIGHT_TOKEN=abc123",      // allow-listed family, credential name
		"NCCL_IB_PKEY=7",              // harmless but KEY-shaped: hidden anyway
		"NVIDIA_VISIBLE_DEVICES=none", // duplicate: the first wins, as in getenv
		"noequals",
	}
	got := Env(envvars.Parse(env))
	want := map[string]string{
		"NVIDIA_VISIBLE_DEVICES": "all",
		"NVIDIA_REQUIRE_CUDA":    "cuda>=12.2 brand=tesla,driver>=470,driver<471",
		"CUDA_VERSION":           "12.2.2",
		"NCCL_DEBUG":             "INFO",
		"PREFLIGHT_POLICY":       "fail",
		"PATH":                   "/usr/local/cuda/bin:/usr/bin",
		"RANK":                   "3",
		"SLURM_JOB_ID":           "4242",
		"PREFLIGHT_TOKEN":        Placeholder,
		"NCCL_IB_PKEY":           Placeholder,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Env() =\n%v\nwant\n%v", got, want)
	}
}

func TestEnvValuesLoseURLUserInfo(t *testing.T) {
	got := Env(envvars.Parse([]string{"PREFLIGHT_IMAGE_SOURCE=https://oauth2:glpat-planted@gitlab.example/team/repo.git"}))
	if want := "https://[redacted]@gitlab.example/team/repo.git"; got["PREFLIGHT_IMAGE_SOURCE"] != want {
		t.Errorf("got %q, want %q", got["PREFLIGHT_IMAGE_SOURCE"], want)
	}
}

// A variable's name is recorded too, so a token in it is hidden with its value.
func TestEnvNamesLoseTokens(t *testing.T) {
	got := Env(envvars.Parse([]string{"NCCL_ghp_Nx4QwTz9KmLpVr2XkWq7TzNm3PbVx6KqLw=1", "NCCL_DEBUG=INFO"}))
	if want := map[string]string{"NCCL_[redacted]": Placeholder, "NCCL_DEBUG": "INFO"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Env() = %v, want %v", got, want)
	}
}

func TestArgvForms(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"flag with equals", []string{"train", "--token=abc"}, []string{"train", "--token=[redacted]"}},
		{"flag and separate value", []string{"train", "--token", "abc", "--lr", "0.1"}, []string{"train", "--token", "[redacted]", "--lr", "0.1"}},
		{"single dash flag", []string{"x", "-password", "hunter2"}, []string{"x", "-password", "[redacted]"}},
		{"password equals", []string{"x", "--password=hunter2"}, []string{"x", "--password=[redacted]"}},
		{"camel case flag", []string{"x", "--apiKey=k"}, []string{"x", "--apiKey=[redacted]"}},
		{"env assignment", []string{"env", "PASSWORD=x", "python"}, []string{"env", "PASSWORD=[redacted]", "python"}},
		{"hydra override", []string{"python", "train.py", "db.password=x", "lr=0.1"}, []string{"python", "train.py", "db.password=[redacted]", "lr=0.1"}},
		{"URL user-info", []string{"git", "clone", "https://u:p@host/x"}, []string{"git", "clone", "https://[redacted]@host/x"}},
		{"URL inside flag value", []string{"x", "--data=s3://AKIA:secret@bucket/key"}, []string{"x", "--data=s3://[redacted]@bucket/key"}},
		{"URL with a token query", []string{"curl", "https://u:p=q@host/x?token=abc"}, []string{"curl", "https://[redacted]@host/x?token=[redacted]"}},
		{"header", []string{"curl", "-H", "Authorization: Bearer abc"}, []string{"curl", "-H", "Authorization: [redacted]"}},
		{"flag followed by flag keeps the flag", []string{"x", "--use-auth", "--verbose"}, []string{"x", "--use-auth", "--verbose"}},
		{"bare flag at end", []string{"x", "--token"}, []string{"x", "--token"}},
		{"host:port is not a header", []string{"x", "--master", "auth.example.com:443"}, []string{"x", "--master", "auth.example.com:443"}},
		{"X-Api-Key header", []string{"curl", "-H", "X-Api-Key: abc"}, []string{"curl", "-H", "X-Api-Key: [redacted]"}},
		{"KEYBOARD is not a key", []string{"x", "--keyboard=us"}, []string{"x", "--keyboard=us"}},
		{"ordinary", []string{"python", "-m", "torch.distributed.run", "--nproc_per_node=8", "train.py"}, []string{"python", "-m", "torch.distributed.run", "--nproc_per_node=8", "train.py"}},
		{"empty", []string{}, []string{}},
		{"nil", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			got := Argv(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Argv(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !reflect.DeepEqual(in, tt.in) {
				t.Errorf("Argv modified its input: %q", tt.in)
			}
		})
	}
}

func TestValueForms(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://u:p@host/x", "https://[redacted]@host/x"},
		{"https://token@github.com/org/repo", "https://[redacted]@github.com/org/repo"},
		{"https://u:p@ss@host/x", "https://[redacted]@host/x"},   // unescaped @ in the password
		{"see https://host/x?u=a@b", "see https://host/x?u=a@b"}, // @ after the authority is not user-info
		{"mailto:a@b.c", "mailto:a@b.c"},
		{"a https://u:p@h1/x and ftp://v:q@h2", "a https://[redacted]@h1/x and ftp://[redacted]@h2"},
		{"--token abc --lr 1", "--token [redacted] --lr 1"},
		{"--token=abc", "--token=[redacted]"},
		{"Authorization: Bearer abc", "Authorization: [redacted]"},
		{"h Authorization: Basic abc\nnext line", "h Authorization: [redacted]\nnext line"},
		{"Authorization:", "Authorization:"},
		// Free text is no command line: a remedy's flags stay.
		{"on the host, as root: nvidia-smi -i 3 -pm 1", "on the host, as root: nvidia-smi -i 3 -pm 1"},
		{"run mysql -pfoo and wandb login foo", "run mysql -pfoo and wandb login foo"},
		{"PASSWORD=x  HOME=/root", "PASSWORD=[redacted]  HOME=/root"},
		{"cuda>=11.8 brand=tesla,driver>=470,driver<471", "cuda>=11.8 brand=tesla,driver>=470,driver<471"},
		{"driver 515.65.01 supports CUDA <= 11.7; upgrade to >= 520.61.05", "driver 515.65.01 supports CUDA <= 11.7; upgrade to >= 520.61.05"},
		{"", ""},
		{"://@", "://@"},
		{"x://@", "x://[redacted]@"},
		// User-info is redacted before the assignment rule reads the name,
		// so one pass does it all: the query's token, and an '=' inside
		// the user-info is not the assignment's.
		{"https://user:hunter2@host/path?token=abc", "https://[redacted]@host/path?token=[redacted]"},
		{"A://=@tokey=", "A://[redacted]@tokey=[redacted]"},
	}
	for _, tt := range tests {
		if got := Value(tt.in); got != tt.want {
			t.Errorf("Value(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAllowedNamesAreDocumented(t *testing.T) {
	names, prefixes := AllowedNames()
	if len(names) == 0 || len(prefixes) == 0 {
		t.Fatal("empty allow-list")
	}
	for _, n := range names {
		if !Allowed(n) {
			t.Errorf("listed name %s is not allowed", n)
		}
	}
	for _, p := range prefixes {
		if !Allowed(p + "X") {
			t.Errorf("listed prefix %s is not allowed", p)
		}
	}
}

// planted are the secrets the fuzz targets and the report tests plant.
var planted = []string{"hunter2", "plantedsecret"}

func FuzzValue(f *testing.F) {
	for _, s := range []string{
		"https://u:hunter2@host/x", "--password hunter2", "--token=hunter2", "PASSWORD=hunter2",
		"cuda>=12.2 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471",
		"Authorization: Bearer hunter2", "s3://a:b@c", "://", "a@b", "\x00://\xff@",
	} {
		f.Add(s)
	}
	for _, form := range redacttest.Forms {
		f.Add(strings.Join(form.Argv, " "))
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Value(s)
		// Redacting twice changes nothing more.
		if again := Value(out); again != out {
			t.Errorf("Value not idempotent: %q -> %q -> %q", s, out, again)
		}
		// No URL user-info survives: whatever precedes an '@' inside an
		// authority is the placeholder.
		if URLUserInfo(out) != out {
			t.Errorf("user-info left in %q (from %q)", out, s)
		}
		// A planted form that starts a word (the flag forms only count as
		// flags there) must not survive.
		for _, p := range planted {
			for _, form := range []string{"--password " + p, "--token=" + p, "https://u:" + p + "@h/"} {
				if startsWord(s, form) && startsWord(out, form) {
					t.Errorf("%q survived in %q", form, out)
				}
			}
		}
	})
}

func FuzzArgv(f *testing.F) {
	f.Add("--password", "hunter2", "x")
	f.Add("--token=hunter2", "https://u:p@h/", "PASSWORD=x")
	f.Add("-", "--", "=")
	for _, form := range redacttest.Forms {
		a := append(form.Argv[1:len(form.Argv):len(form.Argv)], "", "", "")
		f.Add(a[0], a[1], a[2])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		in := []string{a, b, c}
		out := Argv(in)
		if len(out) != len(in) {
			t.Fatalf("Argv changed the length: %q -> %q", in, out)
		}
		if name, ok := flagWithoutValue(a); ok && flagValueRule(name, a) == redactValue && !isFlag(b) && out[1] != Placeholder {
			t.Errorf("value after %q not redacted: %q", a, out)
		}
	})
}

// startsWord reports whether form occurs in s at the start or after
// whitespace.
func startsWord(s, form string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], form)
		if j < 0 {
			return false
		}
		if k := i + j; k == 0 || isSpace(s[k-1]) {
			return true
		}
		i += j + 1
	}
}

// TensorFlow's variables are recorded, and only TensorFlow's: Terraform's
// TF_CLI_CONFIG_FILE and TF_VAR_* share the TF_ prefix.
func TestTensorFlowPrefixesAreExact(t *testing.T) {
	for name, want := range map[string]bool{
		"TF_CPP_MIN_LOG_LEVEL": true, "TF_FORCE_GPU_ALLOW_GROWTH": true, "TF_GPU_ALLOCATOR": true, "TF_XLA_FLAGS": true,
		"TF_ENABLE_ONEDNN_OPTS": true, "TF_CUDNN_DETERMINISTIC": true, "TF_DETERMINISTIC_OPS": true,
		"TF_NUM_INTRAOP_THREADS": true,
		"TF_CLI_CONFIG_FILE":     false, "TF_VAR_db_password": false, "TF_LOG": false, "TF_TOKEN_app_terraform_io": false,
	} {
		if got := Allowed(name); got != want {
			t.Errorf("Allowed(%s) = %v, want %v", name, got, want)
		}
	}
}

// AllowedNames lists the exact names Allowed accepts and the prefixes it
// accepts, sorted: what the README must document.
func AllowedNames() (names, prefixes []string) {
	for n := range allowedNames {
		names = append(names, n)
	}
	sort.Strings(names)
	prefixes = append(prefixes, allowedPrefixes...)
	sort.Strings(prefixes)
	return names, prefixes
}

// Every issuer's token format is redacted wherever it stands in free text:
// alone, after '=', in quotes, and before punctuation.
func TestTokenFormatsAreRedactedInFreeText(t *testing.T) {
	for _, tok := range redacttest.Tokens {
		v := tok.Value()
		for _, text := range []string{v, "key rotated: " + v + ", see the runbook", "NOTE=" + v, `{"note": "` + v + `"}`, "(" + v + ")"} {
			got := Value(text)
			if l := redacttest.Leaks(got, []string{tok.Secret}); len(l) > 0 || !strings.Contains(got, Placeholder) {
				t.Errorf("%s: Value(%q) = %q", tok.Issuer, text, got)
			}
		}
	}
}

// A prefix inside a longer word starts no token: "mydapi..." is a name.
func TestTokenPrefixInsideAWordIsKept(t *testing.T) {
	for _, s := range []string{"mydapi0123456789abcdef0123456789abcdef", "Xhvs.R0670sAqZnKX3yW40NddrPVk", "sdckr_pat_abcdefghijkl"} {
		if got := Value(s); got != s {
			t.Errorf("Value(%q) = %q, want it kept", s, got)
		}
	}
}
