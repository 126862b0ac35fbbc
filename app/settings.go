package app

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/kelseyhightower/envconfig"
	"github.com/rs/zerolog"

	"github.com/gpu-preflight/gpu-preflight/internal/suggest"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/policy"
	"github.com/gpu-preflight/gpu-preflight/report"
	"github.com/gpu-preflight/gpu-preflight/report/logs"
)

// The parts of the configuration: a command's flags and -h are the settings
// of the parts it reads.
const (
	PartImage    = "image"    // the image's files, environment and manifest
	PartHost     = "host"     // the host's files, the probes and their deadlines
	PartChecks   = "checks"   // what is required beyond the image's requirements
	PartDecision = "decision" // how the findings become a decision and an exit code
	PartRecord   = "record"   // where the log, the record and the termination message go
	PartCommand  = "command"  // how the command starts (the ENTRYPOINT form only)
)

// AllParts is what the ENTRYPOINT form reads.
var AllParts = []string{PartImage, PartHost, PartChecks, PartDecision, PartRecord, PartCommand}

// Setting is one Config field: its variable, and the flag of the same name.
type Setting struct {
	Key     string // PREFLIGHT_POLICY
	Flag    string // policy
	Default string
	Part    string // one of AllParts
	Bool    bool   // the flag needs no value (flag's IsBoolFlag)
	desc    string
	field   int
	typ     reflect.Type
}

// Meaning is what -h says of the setting, with the words a choice accepts.
func (s Setting) Meaning() string {
	c, ok := reflect.Zero(s.typ).Interface().(choice)
	switch {
	case !ok:
		return s.desc
	case s.desc == "":
		return wordList(c.accepted())
	}
	return s.desc + ": " + wordList(c.accepted())
}

func wordList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// Settings are Config's fields: the variables, the flags and -h.
func Settings() []Setting { return settingsOnce() }

var settingsOnce = newSettings()

func newSettings() func() []Setting { return sync.OnceValue(readSettings) }

func readSettings() []Setting {
	t := reflect.TypeFor[Config]()
	isBool := reflect.TypeFor[interface{ IsBoolFlag() bool }]()
	out := make([]Setting, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		key := f.Tag.Get("envconfig")
		if key == "" {
			continue
		}
		out = append(out, Setting{Key: key, Default: f.Tag.Get("default"), Part: f.Tag.Get("part"), desc: f.Tag.Get("desc"),
			Bool: reflect.PointerTo(f.Type).Implements(isBool), field: i, typ: f.Type,
			Flag: strings.Map(flagRune, strings.TrimPrefix(key, envPrefix))})
	}
	return out
}

const envPrefix = "PREFLIGHT_"

// flagRune spells a variable's name as its flag's: MIN_GPUS is min-gpus.
func flagRune(r rune) rune {
	if r == '_' {
		return '-'
	}
	return unicode.ToLower(r)
}

func SettingsOf(parts []string) []Setting {
	var out []Setting
	for _, s := range Settings() {
		if slices.Contains(parts, s.Part) {
			out = append(out, s)
		}
	}
	return out
}

func settingOf(key string) Setting {
	i := slices.IndexFunc(Settings(), func(s Setting) bool { return s.Key == key })
	return Settings()[i]
}

// Config's field types decode a variable's and a flag's value one way.
var (
	_ envconfig.Decoder = (*boolValue)(nil)
	_ envconfig.Decoder = (*number)(nil)
	_ envconfig.Decoder = (*duration)(nil)
)

// boolValue takes strconv.ParseBool's words in any case.
type boolValue bool

func (b *boolValue) Decode(s string) error {
	v, err := strconv.ParseBool(strings.ToLower(s))
	if err != nil {
		return errors.New("want true or false (also 1, 0, t, f, in any case)")
	}
	*b = boolValue(v)
	return nil
}

func (b *boolValue) IsBoolFlag() bool { return true }

// number is a whole number as envconfig reads an int (10, 0x10).
type number int

func (n *number) Decode(s string) error {
	v, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		return errors.New("want a whole number")
	}
	*n = number(v)
	return nil
}

type duration time.Duration

func (d *duration) Decode(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("want a duration such as 10s, 500ms or 2m")
	}
	*d = duration(v)
	return nil
}

// A choice takes one of its owner's words, in any case.
type choice interface{ accepted() []string }

type (
	policyName string // policy's
	logFormat  string // report/logs'
	logLevel   string // zerolog's
	argvMode   string // report's
	cudaMode   string // the CUDA smoke test's
	rdmaMode   string // the RDMA active tier's
)

func (rdmaMode) accepted() []string {
	return []string{facts.RDMAModeOff, facts.RDMAModeOpen, facts.RDMAModeRegister}
}
func (policyName) accepted() []string { return policy.Names() }
func (logFormat) accepted() []string {
	return []string{logs.FormatJSON, logs.FormatConsole, logs.FormatAuto}
}
func (logLevel) accepted() []string {
	var names []string
	for l := zerolog.TraceLevel; l <= zerolog.PanicLevel; l++ {
		names = append(names, l.String())
	}
	return append(names, zerolog.Disabled.String())
}
func (argvMode) accepted() []string { return report.ArgvModes }
func (cudaMode) accepted() []string {
	return []string{facts.CUDAModeOff, facts.CUDAModeInit, facts.CUDAModeKernel}
}

func (p *policyName) Decode(s string) error {
	v, err := policy.Parse(s)
	if err != nil {
		return choiceError(s, p.accepted())
	}
	*p = policyName(v)
	return nil
}
func (f *logFormat) Decode(s string) error { return decodeChoice((*string)(f), s, f.accepted()) }
func (l *logLevel) Decode(s string) error  { return decodeChoice((*string)(l), s, l.accepted()) }
func (m *argvMode) Decode(s string) error  { return decodeChoice((*string)(m), s, m.accepted()) }
func (m *cudaMode) Decode(s string) error  { return decodeChoice((*string)(m), s, m.accepted()) }
func (m *rdmaMode) Decode(s string) error  { return decodeChoice((*string)(m), s, m.accepted()) }

func decodeChoice(v *string, s string, accepted []string) error {
	for _, a := range accepted {
		if strings.EqualFold(s, a) {
			*v = a
			return nil
		}
	}
	return choiceError(s, accepted)
}

func choiceError(s string, accepted []string) error {
	msg := "accepted values are " + strings.Join(accepted, ", ")
	if m, ok := suggest.Closest(strings.ToLower(s), accepted); ok {
		msg += fmt.Sprintf(" (did you mean %s?)", m)
	}
	return errors.New(msg)
}

// superviseMode is whether the command runs as a child or replaces us.
type superviseMode int

const (
	superviseAuto superviseMode = iota // when gpu-preflight is PID 1
	superviseOn
	superviseOff
)

func (superviseMode) accepted() []string { return []string{"auto", "true", "false"} }

func (m *superviseMode) IsBoolFlag() bool { return true }

func (m *superviseMode) Decode(s string) error {
	if strings.EqualFold(s, "auto") {
		*m = superviseAuto
		return nil
	}
	var b boolValue
	if b.Decode(s) != nil {
		return choiceError(s, m.accepted())
	}
	*m = superviseOff
	if b {
		*m = superviseOn
	}
	return nil
}

// supervises under auto as PID 1, which the kernel sends no signal it has
// no handler for: a command exec'd there would ignore `docker stop`.
func (m superviseMode) supervises(pid int) bool {
	return m == superviseOn || m == superviseAuto && pid == 1
}
