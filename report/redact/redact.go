// Package redact keeps secrets out of the record, the log lines and the
// termination message, by what it reads: the environment's allow-list
// (environment.go), shell arguments (argv.go), free text (text.go) and URLs
// (url.go), with the forms a word holds (forms.go), credentials' own shapes
// (tokens.go) and credential names (names.go). It errs on the side of hiding.
package redact

// Placeholder replaces every redacted value.
const Placeholder = "[redacted]"
