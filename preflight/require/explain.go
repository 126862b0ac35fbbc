package require

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpu-preflight/gpu-preflight/internal/truncate"
)

// Explain lists this many alternatives, factors of one and other brands, and counts the rest.
const (
	maxListedTerms   = 64
	maxListedFactors = 16
	maxListedBrands  = 16
)

// Explain says, factor by factor, which OR term held or why none did: what
// `gpu-preflight explain` prints. Alternatives that failed only on another
// brand share one line, as the official images' forward-compatibility terms do.
func (r Result) Explain() string {
	var b strings.Builder
	name := r.Requirement.Var
	if name == "" {
		name = "requirement"
	}
	verdict := "satisfied"
	switch {
	case r.Err != nil:
		verdict = "INVALID"
	case !r.Satisfied:
		verdict = "NOT satisfied"
	}
	fmt.Fprintf(&b, "%s: %s %s, %s\n", name, verdict, r.deviceText(), r.hostText())
	n := len(r.Terms)
	var le *LengthError
	if errors.As(r.Err, &le) {
		// Not parsed: show its start, not a value no terminal should print.
		fmt.Fprintf(&b, "  value: %s\n  %v\n", truncate.String(r.Requirement.Value, truncate.MessageBytes), r.Err)
		return b.String()
	}
	fmt.Fprintf(&b, "  value: %s\n", shortValue(r.Requirement.Value, r.Terms))
	if n == 0 {
		b.WriteString("  no alternatives: an empty requirement is always satisfied\n")
		return b.String()
	}

	width := 0
	for _, t := range r.Terms {
		for _, f := range t.Factors {
			if f.Outcome != NotEvaluated && len(f.Text) > width {
				width = len(f.Text)
			}
		}
	}
	width = min(width, 40)

	var otherBrands []string // brands of alternatives that failed on brand
	seenBrand := map[string]bool{}
	brandFailures, notEvaluated, listed, unlisted := 0, 0, 0, 0
	for i, t := range r.Terms {
		status, ok := termStatus(t)
		if !ok {
			notEvaluated++
			continue
		}
		if brand, isBrand := failedOnBrand(t); isBrand {
			brandFailures++
			// A set: a requirement can name thousands of brands.
			if key := strings.ToLower(brand); !seenBrand[key] {
				seenBrand[key] = true
				otherBrands = append(otherBrands, brand)
			}
			continue
		}
		if listed == maxListedTerms {
			unlisted++
			continue
		}
		listed++
		fmt.Fprintf(&b, "  alternative %d of %d %s: %s\n", i+1, n, status, truncate.String(t.Text, maxQuoted))
		if len(t.Factors) == 0 {
			prev := "true, as before any factor"
			if !t.Held {
				prev = "false, from the alternative before"
			}
			fmt.Fprintf(&b, "      (no factors: libnvidia-container stops here with the last factor's value, %s)\n", prev)
		}
		for j, f := range t.Factors {
			if j == maxListedFactors {
				fmt.Fprintf(&b, "      ... and %d more %s, not listed\n", len(t.Factors)-j, plural(len(t.Factors)-j, "factor", "factors"))
				break
			}
			fmt.Fprintf(&b, "      %-*s  %-24s  %s\n", width, truncate.String(f.Text, maxQuoted), hostColumn(f, r.Device), outcomeText(f))
		}
	}
	if unlisted > 0 {
		fmt.Fprintf(&b, "  %d more %s did not hold, not listed\n", unlisted, plural(unlisted, "alternative", "alternatives"))
	}
	if brandFailures > 0 {
		brand := "unknown"
		if r.Device != nil && r.Device.Brand != "" {
			brand = r.Device.Brand
		}
		names := strings.Join(otherBrands[:min(len(otherBrands), maxListedBrands)], ", ")
		if len(otherBrands) > maxListedBrands {
			names += fmt.Sprintf(" and %d more", len(otherBrands)-maxListedBrands)
		}
		fmt.Fprintf(&b, "  %d %s for other brands (%s) did not hold: the GPU's brand is %s\n",
			brandFailures, plural(brandFailures, "alternative", "alternatives"), truncate.String(names, truncate.MessageBytes*4), brand)
	}
	if notEvaluated > 0 {
		why := "the first alternative that holds decides"
		if r.Err != nil {
			why = "the invalid factor ended the evaluation"
		}
		fmt.Fprintf(&b, "  %d later %s not evaluated (%s)\n", notEvaluated, plural(notEvaluated, "alternative", "alternatives"), why)
	}
	switch {
	case r.Err != nil:
		fmt.Fprintf(&b, "  %v\n", r.Err)
		fmt.Fprintf(&b, "  nvidia-container-cli would fail with: %s\n", r.ToolkitError())
	case !r.Satisfied:
		fmt.Fprintf(&b, "  no alternative held; nvidia-container-cli would fail with: %s\n", r.ToolkitError())
	}
	return b.String()
}

func (r Result) deviceText() string {
	if r.Device == nil {
		return "with no GPU (arch and brand factors count as true)"
	}
	return fmt.Sprintf("on GPU %d (arch %s, brand %s)", r.Device.Index, orUnknown(r.Device.Arch), orUnknown(r.Device.Brand))
}

func (r Result) hostText() string {
	return fmt.Sprintf("driver %s, CUDA %s", orUnknown(r.Host.Driver), orUnknown(r.Host.CUDA))
}

func termStatus(t TermResult) (status string, ok bool) {
	if !t.Evaluated {
		return "", false
	}
	for _, f := range t.Factors {
		switch f.Outcome {
		case Invalid:
			return "is invalid", true
		case False:
			return "failed", true
		}
	}
	if t.Held {
		return "held", true
	}
	return "failed", true
}

// failedOnBrand reports whether the term's first false factor is brand=OTHER.
func failedOnBrand(t TermResult) (string, bool) {
	for _, f := range t.Factors {
		if f.Outcome == False {
			return f.Value, f.Name == propBrand && f.Op == "="
		}
		if f.Outcome == Invalid || f.Outcome == NotEvaluated {
			return "", false
		}
	}
	return "", false
}

func hostColumn(f FactorResult, d *Device) string {
	switch f.Name {
	case propCUDA, propDriver:
		return "host " + f.Name + " " + orUnknown(f.HostValue)
	case propArch, propBrand:
		if d == nil {
			return "no GPU"
		}
		return "GPU " + f.Name + " " + orUnknown(f.HostValue)
	}
	return ""
}

func outcomeText(f FactorResult) string {
	switch f.Outcome {
	case Missing:
		return "true (not known, counts as true)"
	case NotEvaluated:
		return "not evaluated"
	case Invalid:
		return "INVALID: " + truncate.String(f.Reason, 2*maxQuoted)
	}
	return string(f.Outcome)
}

// shortValue is the value, cut after two alternatives when there are many.
func shortValue(v string, terms []TermResult) string {
	if len(v) <= 120 || len(terms) <= 2 {
		return truncate.String(v, 2*maxQuoted)
	}
	return fmt.Sprintf("%s %s ... (%d alternatives)", truncate.String(terms[0].Text, maxQuoted), truncate.String(terms[1].Text, maxQuoted), len(terms))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
