package redact

import (
	"reflect"
	"strings"
	"testing"
)

// argvForms are the argv shapes that carried a credential past redaction
// (issue 13: 12 of 22 planted in argv reached the record, the ledger and
// the log). Kubernetes expands $(HF_TOKEN) in a container's args, so each
// is a real way a secret gets into argv. SECRET stands for the credential.
var argvForms = []struct {
	name string
	in   []string
	want []string
}{
	{"ShortPasswordFlag", []string{"mysql", "-u", "root", "-p", "SECRET", "db"},
		[]string{"mysql", "-u", "root", "-p", Placeholder, "db"}},
	{"CommandLineInOneElement", []string{"bash", "-c", "python train.py --token SECRET --lr 0.1"},
		[]string{"bash", "-c", "python train.py --token [redacted] --lr 0.1"}},
	{"SeveralFlagsInOneElement", []string{"python", "train.py", "--lr=0.1 --hf_token=SECRET"},
		[]string{"python", "train.py", "--lr=0.1 --hf_token=[redacted]"}},
	{"DSNWithSpaces", []string{"app", "--dsn", "host=db user=u password=SECRET"},
		[]string{"app", "--dsn", "host=db user=u password=[redacted]"}},
	{"PresignedURLTokenNotFirst", []string{"curl", "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Security-Token=SECRET&X-Amz-Expires=3600"},
		[]string{"curl", "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Security-Token=[redacted]&X-Amz-Expires=3600"}},
	{"URLPasswordWithSlashes", []string{"aws-cp", "s3://AKIAIOSFODNN7EXAMPLE:SECRET/with/slashes@bucket/key"},
		[]string{"aws-cp", "s3://[redacted]@bucket/key"}},
	{"URLPasswordWithHash", []string{"curl", "https://u:SECRET#x@host/"},
		[]string{"curl", "https://[redacted]@host/"}},
	{"NestedAssignment", []string{"helm", "--set=training.password=SECRET"},
		[]string{"helm", "--set=training.password=[redacted]"}},
	{"UserColonPassword", []string{"curl", "--user", "admin:SECRET", "https://h/"},
		[]string{"curl", "--user", "admin:[redacted]", "https://h/"}},
	{"PassFlag", []string{"openssl", "enc", "--pass", "SECRET"},
		[]string{"openssl", "enc", "--pass", Placeholder}},
	{"PassphraseFlag", []string{"gpg", "--passphrase", "SECRET"},
		[]string{"gpg", "--passphrase", Placeholder}},
	{"JSONConfig", []string{"train", `--config={"token": "SECRET", "lr": 0.1}`},
		[]string{"train", `--config={"token": "[redacted]", "lr": 0.1}`}},
	// Neighbours of the forms above.
	{"UserFlagEquals", []string{"curl", "--user=admin:SECRET"}, []string{"curl", "--user=admin:[redacted]"}},
	{"PassEquals", []string{"x", "--pass=SECRET"}, []string{"x", "--pass=[redacted]"}},
	{"PresignedSignature", []string{"curl", "https://h/k?X-Amz-Date=1&X-Amz-Signature=SECRET"},
		[]string{"curl", "https://h/k?X-Amz-Date=1&X-Amz-Signature=[redacted]"}},
	{"SemicolonDSN", []string{"app", "Server=db;User Id=u;Password=SECRET;"}, []string{"app", "Server=db;User Id=u;Password=[redacted];"}},
	{"HelmList", []string{"helm", "--set", "a=1,b.password=SECRET"}, []string{"helm", "--set", "a=1,b.password=[redacted]"}},
	{"PythonDict", []string{"x", "{'api_key': 'SECRET'}"}, []string{"x", "{'api_key': '[redacted]'}"}},
	{"JSONNoSpace", []string{"x", `{"password":"SECRET"}`}, []string{"x", `{"password":"[redacted]"}`}},
	{"QuotedInCommandLine", []string{"sh", "-c", "train --token 'SECRET'"}, []string{"sh", "-c", "train --token [redacted]"}},
	{"UserFlagInCommandLine", []string{"sh", "-c", "curl -u admin:SECRET https://h/"}, []string{"sh", "-c", "curl -u admin:[redacted] https://h/"}},
	// What must stay.
	{"PortIsNotAPassword", []string{"x", "https://host:8443/a@b"}, []string{"x", "https://host:8443/a@b"}},
	{"UnbufferedPython", []string{"python", "-u", "train.py"}, []string{"python", "-u", "train.py"}},
	{"OrdinaryQuery", []string{"x", "https://h/?a=1&b=2"}, []string{"x", "https://h/?a=1&b=2"}},
	{"Requirement", []string{"x", "cuda>=11.8 brand=tesla,driver>=470,driver<471"}, []string{"x", "cuda>=11.8 brand=tesla,driver>=470,driver<471"}},
}

func TestArgvLeakForms(t *testing.T) {
	for _, tt := range argvForms {
		t.Run(tt.name, func(t *testing.T) {
			got := Argv(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Argv(%q)\n = %q\nwant %q", tt.in, got, tt.want)
			}
			if strings.Contains(strings.Join(got, " "), "SECRET") {
				t.Errorf("SECRET survived: %q", got)
			}
			// The log redacts an argv again: that must change nothing.
			if again := Argv(got); !reflect.DeepEqual(again, got) {
				t.Errorf("Argv not idempotent: %q -> %q", got, again)
			}
		})
	}
}

// secretAlphabet is what the planted secrets are made of: base64, URL-safe
// base64 and percent-encoding, as API tokens and cloud keys are.
const secretAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-.~%"

// plantSecret makes a secret from raw: "ZQ", 6 to 40 characters of
// secretAlphabet, "QZ". The markers never occur in the shapes' other text,
// so a secret cut in two still shows at either end.
func plantSecret(raw []byte) string {
	var b strings.Builder
	b.WriteString("ZQ")
	for i := 0; i < 6 || i < len(raw) && i < 40; i++ {
		c := byte(i * 7)
		if i < len(raw) {
			c = raw[i]
		}
		b.WriteByte(secretAlphabet[int(c)%len(secretAlphabet)])
	}
	b.WriteString("QZ")
	return b.String()
}

// secretShapes put a secret into argv the ways argvForms does. Each
// returns the elements that carry it.
var secretShapes = []func(s string) []string{
	func(s string) []string { return []string{"-p", s} },
	func(s string) []string { return []string{"--token", s} },
	func(s string) []string { return []string{"--hf_token=" + s} },
	func(s string) []string { return []string{"--lr=0.1 --hf_token=" + s} },
	func(s string) []string { return []string{"host=db user=u password=" + s} },
	func(s string) []string {
		return []string{"https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4&X-Amz-Security-Token=" + s + "&X-Amz-Expires=60"}
	},
	func(s string) []string { return []string{"s3://AKIAIOSFODNN7EXAMPLE:" + s + "@bucket/key"} },
	func(s string) []string { return []string{"https://u:" + s + "#x@host/"} },
	func(s string) []string { return []string{"--set=training.password=" + s} },
	func(s string) []string { return []string{"--user", "admin:" + s} },
	func(s string) []string { return []string{"--pass", s} },
	func(s string) []string { return []string{"--passphrase", s} },
	func(s string) []string { return []string{`--config={"token": "` + s + `"}`} },
	func(s string) []string { return []string{"Authorization: Bearer " + s} },
	func(s string) []string { return []string{"PASSWORD=" + s} },
}

// ordinaryArgs surround the secret.
var ordinaryArgs = []string{"python", "train.py", "--epochs", "3", "--lr=0.1", "-m", "torch.distributed.run",
	"--nproc_per_node=8", "cuda>=11.8", "https://example.com/data?split=train", "a=b", "-v", "x,y", "{}", ":"}

// FuzzArgvPlantedSecrets plants a random secret in a random shape inside a
// random argv: as its own elements, or inside one element holding the whole
// command line ("bash -c '...'"), among ordinary arguments. No part of the
// secret may survive Argv.
func FuzzArgvPlantedSecrets(f *testing.F) {
	f.Add([]byte("hunter2-token"), uint8(0), uint8(3), uint8(1), false)
	f.Add([]byte("AKIA/with+slash=="), uint8(6), uint8(0), uint8(2), true)
	f.Add([]byte("p#ss"), uint8(7), uint8(5), uint8(0), false)
	f.Fuzz(func(t *testing.T, raw []byte, shape, before, after uint8, oneElement bool) {
		secret := plantSecret(raw)
		argv := []string{"bash"}
		for i := 0; i < int(before)%4; i++ {
			argv = append(argv, ordinaryArgs[(int(before)+i)%len(ordinaryArgs)])
		}
		argv = append(argv, secretShapes[int(shape)%len(secretShapes)](secret)...)
		for i := 0; i < int(after)%4; i++ {
			argv = append(argv, ordinaryArgs[(int(after)*3+i)%len(ordinaryArgs)])
		}
		if oneElement {
			argv = []string{"bash", "-c", strings.Join(argv[1:], " ")}
		}
		out := strings.Join(Argv(argv), "\x00")
		if strings.Contains(out, "ZQ") || strings.Contains(out, "QZ") {
			t.Errorf("the planted secret %q survived:\nin:  %q\nout: %q", secret, argv, Argv(argv))
		}
	})
}
