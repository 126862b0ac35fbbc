package affinity

import (
	"fmt"
	"strconv"
	"strings"
)

// YAML writes the affinity as a pod spec's `nodeAffinity:` block, by hand
// (the shim carries no YAML library); the examples' tests decode it strictly.
func (a Affinity) YAML(header string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(header), "\n") {
		if line != "" {
			fmt.Fprintf(&b, "# %s\n", line)
		}
	}
	for _, n := range a.LeftOut {
		fmt.Fprintf(&b, "# Note: %s\n", n)
	}
	if a.Unconstrained {
		b.WriteString("# Every driver branch and GPU passes: no node affinity is needed.\nnodeAffinity: {}\n")
		return b.String()
	}
	b.WriteString("nodeAffinity:\n  requiredDuringSchedulingIgnoredDuringExecution:\n    nodeSelectorTerms:\n")
	for _, t := range a.Terms {
		fmt.Fprintf(&b, "      # %s\n      - matchExpressions:\n", t.Comment)
		for _, e := range t.Exprs {
			vals := make([]string, len(e.Values))
			for i, v := range e.Values {
				vals[i] = strconv.Quote(v)
			}
			fmt.Fprintf(&b, "          - {key: %s, operator: %s, values: [%s]}\n", e.Key, e.Operator, strings.Join(vals, ", "))
		}
	}
	return b.String()
}
