// Package suggest finds the word a typo was meant to be.
package suggest

// Closest returns the candidate nearest to word within two edits and under
// half its length, so that a short word does not match everything.
func Closest(word string, candidates []string) (string, bool) {
	best, bestDist := "", -1
	for _, c := range candidates {
		if n := len(word) - len(c); n > 2 || n < -2 {
			continue
		}
		d := editDistance(word, c)
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > 2 || 2*bestDist >= len([]rune(word)) {
		return "", false
	}
	return best, true
}

// editDistance is the optimal string alignment distance, so that a swap of
// two runes ("exlpain") is one edit.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1) // d[i][j]: the distance of x[:i] and y[:j]
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
