package version

import (
	"errors"
	"testing"
)

// Each case is a rule of dsl_compare_version (libnvidia-container src/cli/dsl.c).
func TestCompare(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want int
	}{
		{"DriverWithPatchIsAtLeastBranch", "470.57.02", "470", 1},
		{"DriverWithPatchIsBelowNextBranch", "470.57.02", "471", -1},
		{"TrailingZerosAreIgnored", "471.00", "471", 0},
		{"TrailingZeroComponentIsIgnored", "470.0", "470", 0},
		{"MinorComparesNumerically", "12.10", "12.9", 1},
		{"LeadingZerosCompareNumerically", "535.129.03", "535.129.3", 0},
		{"HigherMinorIsGreater", "12.4", "12.2", 1},
		{"RunsOfDotsSeparateOneComponent", "1..2", "1.2", 0},
		{"NonZeroRemainderIsGreater", "470.05", "470", 1},
		{"ZeroThenNonZeroRemainderIsGreater", "470.0.1", "470", 1},
		{"ShorterIsLessWhenRemainderNonZero", "11", "11.8", -1},
		{"EmptyEqualsZero", "", "0.0", 0},
		{"TrailingDot", "12.", "12", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Compare(tt.a, tt.b)
			if err != nil {
				t.Fatalf("Compare(%q, %q): %v", tt.a, tt.b, err)
			}
			if got != tt.want {
				t.Errorf("Compare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
			back, _ := Compare(tt.b, tt.a)
			if back != -tt.want {
				t.Errorf("Compare(%q, %q) = %d, want %d (antisymmetry)", tt.b, tt.a, back, -tt.want)
			}
		})
	}
}

func TestCompareInvalid(t *testing.T) {
	for _, tt := range []struct{ name, a, b string }{
		{"LetterSuffixIsInvalid", "11.8a", "11.8"},
		{"SignIsInvalid", "+11", "11"},
		{"SpaceIsInvalid", "11 .8", "11"},
		{"LeadingDotIsInvalid", ".5", "1"},
		{"HugeComponentIsInvalid", "18446744073709551615", "1"},
		{"OverflowIsInvalid", "99999999999999999999999", "1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Compare(tt.a, tt.b); !errors.Is(err, ErrInvalid) {
				t.Errorf("Compare(%q, %q) error = %v, want ErrInvalid", tt.a, tt.b, err)
			}
		})
	}
}

func TestPrefix(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"11.8.20220929", 2, "11.8"},
		{"12.2.2.009", 2, "12.2"},
		{"12", 2, "12"},
		{"535.129.03", 1, "535"},
		{"2.1.0+cu121", 3, "2.1.0"},
		{"", 2, ""},
	} {
		if got := Prefix(tt.in, tt.n); got != tt.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
	if Major("535.129.03") != 535 || Major("x") != -1 {
		t.Error("Major")
	}
}

func FuzzCompare(f *testing.F) {
	for _, s := range [][2]string{
		{"470.57.02", "470"}, {"471.00", "471"}, {"12.10", "12.9"}, {"1..2", "1.2"},
		{"535.129.03", "520.61.05"}, {"11.8a", "11"}, {"", ""}, {".5", "5."},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ab, errA := Compare(a, b)
		ba, errB := Compare(b, a)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("error asymmetry: %v / %v", errA, errB)
		}
		if errA == nil && ab != -ba {
			t.Fatalf("Compare(%q,%q)=%d but Compare(%q,%q)=%d", a, b, ab, b, a, ba)
		}
		if c, err := Compare(a, a); err == nil && c != 0 {
			t.Fatalf("Compare(%q,%q)=%d want 0", a, a, c)
		}
		_ = Prefix(a, 2)
	})
}
