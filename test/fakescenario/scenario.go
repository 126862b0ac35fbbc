// Package fakescenario writes the scenario files both fake driver libraries
// read through scenario.h: a "#" name line, init's answer, then "key value"
// per driver fact and "i key value" per fact of device i.
package fakescenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Text renders a scenario file, facts in key order so it is stable.
func Text(name, init string, driver map[string]string, devices []map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\ninit %s\n", name, init)
	for _, k := range slices.Sorted(maps.Keys(driver)) {
		fmt.Fprintf(&b, "%s %s\n", k, driver[k])
	}
	for i, d := range devices {
		for _, k := range slices.Sorted(maps.Keys(d)) {
			fmt.Fprintf(&b, "%d %s %s\n", i, k, d[k])
		}
	}
	return b.String()
}

// Devices is n devices of one model: model(i) gives device i's facts.
func Devices(n int, model func(int) map[string]string) []map[string]string {
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = model(i)
	}
	return out
}
