package compat

import (
	"strings"
	"testing"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

// A branch is supported through the last day of its end-of-life month and
// past end of life from the first day of the next.
func TestEndOfLifeMonthBoundary(t *testing.T) {
	for _, tt := range []struct {
		branch int
		on     string
		past   bool
	}{
		{535, "2026-05-31", false},
		{535, "2026-06-01", false},
		{535, "2026-06-30", false},
		{535, "2026-07-01", true},
		{535, "2026-12-01", true},
		{570, "2026-02-28", false},
		{570, "2026-03-01", true},
		{580, "2028-06-30", false},
		{580, "2028-07-01", true},
		{595, "2027-03-31", false},
		{595, "2027-04-01", true},
		{610, "2026-08-31", false},
		{610, "2026-09-01", true},
		{620, "2029-09-30", false},
		{620, "2029-10-01", true},
		{470, "2024-07-31", false},
		{470, "2024-08-01", true},
		{450, "2023-08-01", true},
		{418, "2022-04-01", true},
		// December rolls over into January of the next year.
		{460, "2022-01-31", false},
		{460, "2022-02-01", true},
		// A New Feature Branch without a published date never passes it.
		{590, "2040-01-01", false},
	} {
		b, ok := Lifecycle(tt.branch)
		if !ok {
			t.Fatalf("R%d missing from the lifecycle table", tt.branch)
		}
		if got := b.PastEndOfLife(day(tt.on)); got != tt.past {
			t.Errorf("R%d.PastEndOfLife(%s) = %v, want %v", tt.branch, tt.on, got, tt.past)
		}
	}
}

// The instant the month ends is the same wherever the clock is read.
func TestEndOfLifeInUTC(t *testing.T) {
	b, _ := Lifecycle(535)
	east := time.FixedZone("UTC+9", 9*3600)
	if b.PastEndOfLife(time.Date(2026, time.July, 1, 8, 59, 0, 0, east)) {
		t.Error("R535 past end of life at 2026-06-30T23:59Z")
	}
	if !b.PastEndOfLife(time.Date(2026, time.July, 1, 9, 0, 0, 0, east)) {
		t.Error("R535 not past end of life at 2026-07-01T00:00Z")
	}
}

// The rows the brief's sources give, as of December 2026.
func TestLifecycleRows(t *testing.T) {
	for _, tt := range []struct {
		branch int
		kind   Kind
		eol    string
	}{
		{418, LongTermSupport, "March 2022"},
		{440, NewFeature, "November 2020"},
		{450, LongTermSupport, "July 2023"},
		{460, Production, "January 2022"},
		{470, LongTermSupport, "July 2024"},
		{510, Production, "January 2023"},
		{515, Production, "by August 2025"},
		{525, Production, "by August 2025"},
		{535, LongTermSupport, "June 2026"},
		{550, Production, "by August 2025"},
		{560, NewFeature, "by August 2025"},
		{570, Production, "February 2026"},
		{580, LongTermSupport, "June 2028"},
		{590, NewFeature, ""},
		{595, Production, "March 2027"},
		{610, NewFeature, "August 2026"},
		{620, LongTermSupport, "September 2029"},
	} {
		b, ok := Lifecycle(tt.branch)
		if !ok || b.Kind != tt.kind || b.EndOfLifeText() != tt.eol {
			t.Errorf("R%d = %v %q (%v), want %v %q", tt.branch, b.Kind, b.EndOfLifeText(), ok, tt.kind, tt.eol)
		}
	}
}

func TestUnknownBranch(t *testing.T) {
	for _, n := range []int{0, 390, 600, 605, 625, 999} {
		if b, ok := Lifecycle(n); ok || b.Number != n || b.Kind != KindUnknown {
			t.Errorf("Lifecycle(%d) = %+v, %v; want unknown", n, b, ok)
		}
		if target, known := ForwardCompatTarget(n, day("2026-12-01")); target || known {
			t.Errorf("ForwardCompatTarget(%d) = %v, %v; want unknown", n, target, known)
		}
	}
	for _, drv := range []string{"", "abc", "600.10", "625.1.2"} {
		if _, ok := DriverLifecycle(drv); ok {
			t.Errorf("DriverLifecycle(%q) known", drv)
		}
	}
	if b, ok := DriverLifecycle("580.65.06"); !ok || b.Name() != "R580" {
		t.Errorf("DriverLifecycle(580.65.06) = %v %v", b.Name(), ok)
	}
}

// NVIDIA: New Feature Branches and branches past end of life are not
// supported targets for CUDA forward compatibility.
func TestForwardCompatTargetNFBAndEOLAreNot(t *testing.T) {
	for _, tt := range []struct {
		branch        int
		on            string
		target, known bool
	}{
		{535, "2026-06-30", true, true},
		{535, "2026-07-01", false, true}, // past end of life
		{580, "2026-12-01", true, true},
		{595, "2026-12-01", true, true},
		{620, "2026-12-01", true, true},
		{610, "2026-08-01", false, true}, // NFB, even inside its window
		{590, "2026-01-01", false, true}, // NFB without a date
		{615, "2026-12-01", false, true},
		{470, "2026-12-01", false, true},
		{410, "2026-12-01", false, true}, // designation unknown, ended
	} {
		target, known := ForwardCompatTarget(tt.branch, day(tt.on))
		if target != tt.target || known != tt.known {
			t.Errorf("ForwardCompatTarget(%d, %s) = %v, %v; want %v, %v", tt.branch, tt.on, target, known, tt.target, tt.known)
		}
	}
}

func names(bs []Branch) string {
	var s []string
	for _, b := range bs {
		s = append(s, b.Name())
	}
	return strings.Join(s, " ")
}

func TestSupportedBranches(t *testing.T) {
	for on, want := range map[string]string{
		"2026-01-15": "R535 R570 R580 R595 R620",
		"2026-06-30": "R535 R580 R595 R620",
		"2026-12-01": "R580 R595 R620",
		"2027-04-01": "R580 R620",
		"2028-07-01": "R620",
		"2029-10-01": "",
	} {
		if got := names(SupportedBranches(day(on))); got != want {
			t.Errorf("SupportedBranches(%s) = %q, want %q", on, got, want)
		}
	}
}

// The branches to move to for an image run its CUDA natively.
func TestSupportedBranchesFor(t *testing.T) {
	for _, tt := range []struct{ cuda, on, want string }{
		{"12.2", "2026-12-01", "R580 R595 R620"},
		{"12.2", "2026-06-01", "R535 R580 R595 R620"},
		{"12.4.1", "2026-06-01", "R580 R595 R620"},
		{"13.1", "2026-12-01", "R595 R620"},
		{"13.5", "2026-12-01", "R620"},
		{"14.0", "2026-12-01", ""},
	} {
		if got := names(SupportedBranchesFor(tt.cuda, day(tt.on))); got != tt.want {
			t.Errorf("SupportedBranchesFor(%s, %s) = %q, want %q", tt.cuda, tt.on, got, tt.want)
		}
	}
}

// Every row names its source and the day it was read; branches are unique
// and in order; every supported branch has a CUDA row, so "the branches that
// run this image" can be answered for it.
func TestLifecycleTableWellFormed(t *testing.T) {
	for i, b := range lifecycle {
		if !strings.HasPrefix(b.Source, "https://") {
			t.Errorf("R%d: source %q", b.Number, b.Source)
		}
		if _, err := time.Parse("2006-01-02", b.Read); err != nil {
			t.Errorf("R%d: read %q: %v", b.Number, b.Read, err)
		}
		if i > 0 && b.Number <= lifecycle[i-1].Number {
			t.Errorf("lifecycle out of order at R%d", b.Number)
		}
		if b.ListedOnly && b.EndOfLife.IsZero() {
			t.Errorf("R%d: listed as ended without the page's month", b.Number)
		}
		if b.Kind == LongTermSupport || b.Kind == Production {
			if b.EndOfLife.IsZero() {
				t.Errorf("R%d: a %v without an end of life", b.Number, b.Kind)
			}
			if _, ok := branchCUDAExact(b.Number); !ok && b.Number >= 418 {
				t.Errorf("R%d: no CUDA row in branchCUDA", b.Number)
			}
		}
	}
}

func TestKindStrings(t *testing.T) {
	for k, want := range map[Kind]string{
		LongTermSupport: "Long Term Support Branch LTSB",
		Production:      "Production Branch PB",
		NewFeature:      "New Feature Branch NFB",
		KindUnknown:     "unknown designation unknown",
	} {
		if got := k.String() + " " + k.Short(); got != want {
			t.Errorf("%d: %q, want %q", k, got, want)
		}
	}
}

// TestDriverBranchOnStatesTheLifecycleOnTheDay: the fact the record holds,
// on both sides of an end-of-life month, for a branch the table lacks and
// for no driver.
func TestDriverBranchOnStatesTheLifecycleOnTheDay(t *testing.T) {
	last := time.Date(2026, 6, 30, 23, 59, 59, 999999999, time.UTC)
	ltsb := facts.DriverBranch{Name: "R535", Known: true, Designation: "Long Term Support Branch", EndOfLife: "June 2026", Supported: true}
	ended := ltsb
	ended.Supported = false
	for _, c := range []struct {
		driver string
		on     time.Time
		want   facts.DriverBranch
	}{
		{"535.183.01", last, ltsb},
		{"535.183.01", last.Add(time.Nanosecond), ended},
		{"560.35.03", last, facts.DriverBranch{Name: "R560", Known: true, Designation: "New Feature Branch", EndOfLife: "by August 2025"}},
		{"600.10.01", last, facts.DriverBranch{Name: "R600"}},
		{"", last, facts.DriverBranch{}},
	} {
		if got := DriverBranchOn(c.driver, c.on); got != c.want {
			t.Errorf("DriverBranchOn(%q, %s) = %+v, want %+v", c.driver, c.on, got, c.want)
		}
	}
}
