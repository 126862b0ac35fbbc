package compat

import (
	"fmt"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

// Kind is a data-center driver branch's designation in NVIDIA's lifecycle.
type Kind int

// Branch designations (docs/driver-lifecycle.md).
const (
	KindUnknown     Kind = iota
	LongTermSupport      // Long Term Support Branch (LTSB)
	Production           // Production Branch (PB)
	NewFeature           // New Feature Branch (NFB)
)

// String returns the designation as NVIDIA's tables write it.
func (k Kind) String() string {
	switch k {
	case LongTermSupport:
		return "Long Term Support Branch"
	case Production:
		return "Production Branch"
	case NewFeature:
		return "New Feature Branch"
	}
	return "unknown designation"
}

// Short returns the abbreviation NVIDIA uses: LTSB, PB or NFB.
func (k Kind) Short() string {
	switch k {
	case LongTermSupport:
		return "LTSB"
	case Production:
		return "PB"
	case NewFeature:
		return "NFB"
	}
	return "unknown"
}

// Month is a calendar month: NVIDIA publishes end-of-life dates to the month.
type Month struct {
	Year  int
	Month time.Month
}

// IsZero reports whether no month is set.
func (m Month) IsZero() bool { return m.Year == 0 }

// String returns "June 2026", or "" for the zero Month.
func (m Month) String() string {
	if m.IsZero() {
		return ""
	}
	return fmt.Sprintf("%s %d", m.Month, m.Year)
}

func (m Month) ends() time.Time {
	return time.Date(m.Year, m.Month+1, 1, 0, 0, 0, 0, time.UTC)
}

// Branch is one data-center driver branch's place in NVIDIA's lifecycle.
type Branch struct {
	Number    int   // 535 for R535: the first component of the driver version
	Kind      Kind  // its designation
	EndOfLife Month // zero where NVIDIA published none (New Feature Branches)
	// ListedOnly: NVIDIA only listed the branch as ended on a page last
	// updated in EndOfLife.
	ListedOnly bool
	Source     string // where the row was read: URLs, space-separated
	Read       string // the day it was read there, YYYY-MM-DD
}

// Name returns "R535".
func (b Branch) Name() string { return fmt.Sprintf("R%d", b.Number) }

// EndOfLifeText returns "June 2026", "by August 2025" for a branch only
// listed as ended, or "" when none was published.
func (b Branch) EndOfLifeText() string {
	if b.ListedOnly {
		return "by " + b.EndOfLife.String()
	}
	return b.EndOfLife.String()
}

// PastEndOfLife reports whether the branch is past its end of life on the
// day on: supported through the last day of the month NVIDIA gives (UTC).
func (b Branch) PastEndOfLife(on time.Time) bool {
	if b.EndOfLife.IsZero() {
		return false
	}
	return !on.UTC().Before(b.EndOfLife.ends())
}

// Supported reports whether the branch is a Long Term Support or Production
// Branch not past its end of life on the day on.
func (b Branch) Supported(on time.Time) bool {
	return (b.Kind == LongTermSupport || b.Kind == Production) && !b.PastEndOfLife(on)
}

// Lifecycle returns the row of driver branch n (535 for R535); a branch
// the table does not hold is unknown, not assumed.
func Lifecycle(n int) (Branch, bool) {
	for _, b := range lifecycle {
		if b.Number == n {
			return b, true
		}
	}
	return Branch{Number: n}, false
}

// DriverLifecycle returns the lifecycle row of the branch of a driver
// version ("580.65.06" -> R580).
func DriverLifecycle(driver string) (Branch, bool) {
	n := version.Major(driver)
	if n <= 0 {
		return Branch{}, false
	}
	return Lifecycle(n)
}

// DriverBranchOn is the driver's branch fact on the day on; zero without a
// driver version.
func DriverBranchOn(driver string, on time.Time) facts.DriverBranch {
	b, known := DriverLifecycle(driver)
	if b.Number == 0 {
		return facts.DriverBranch{}
	}
	out := facts.DriverBranch{Name: b.Name(), Known: known}
	if known {
		if b.Kind != KindUnknown {
			out.Designation = b.Kind.String()
		}
		out.EndOfLife = b.EndOfLifeText()
		out.Supported = b.Supported(on)
	}
	return out
}

// ForwardCompatTarget reports whether branch n is a supported CUDA forward
// compatibility target on the day on: not a New Feature Branch nor past end
// of life. known is false when the branch is not in the table.
func ForwardCompatTarget(n int, on time.Time) (target, known bool) {
	b, ok := Lifecycle(n)
	switch {
	case !ok:
		return false, false
	case b.PastEndOfLife(on) || b.Kind == NewFeature:
		return false, true
	case b.Kind == KindUnknown:
		return false, false
	}
	return true, true
}

// SupportedBranches returns the branches supported on the day on, oldest first.
func SupportedBranches(on time.Time) []Branch {
	var out []Branch
	for _, b := range lifecycle {
		if b.Supported(on) {
			out = append(out, b)
		}
	}
	return out
}

// SupportedBranchesFor returns the branches supported on the day on that
// run CUDA cuda natively, oldest first: where to move a node for that image.
func SupportedBranchesFor(cuda string, on time.Time) []Branch {
	var out []Branch
	for _, b := range SupportedBranches(on) {
		if c, ok := branchCUDAExact(b.Number); ok && version.AtLeast(c, version.Prefix(cuda, 2)) {
			out = append(out, b)
		}
	}
	return out
}

func branchCUDAExact(n int) (string, bool) {
	for _, row := range branchCUDA {
		if row.Branch == n {
			return row.CUDA, true
		}
	}
	return "", false
}

// Sources of the lifecycle rows; what each says is in docs/driver-lifecycle.md.
const (
	// Supported Drivers and CUDA Toolkit Versions, R620, R615 and R580 editions.
	srcDC620 = "https://docs.nvidia.com/datacenter/tesla/drivers/620/supported-drivers-and-cuda-toolkit-versions.html"
	srcDC615 = "https://docs.nvidia.com/datacenter/tesla/drivers/615/supported-drivers-and-cuda-toolkit-versions.html"
	srcDC580 = "https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-cuda-toolkit-versions.html"
	// NVIDIA CUDA and Drivers Support, RN-08625-001 v02, March 2021, Table 1.
	srcDC2021 = "https://docs.nvidia.com/datacenter/tesla/pdf/NVIDIA_CUDA_Drivers_Support.pdf"
	// NVIDIA's maintainers quoting the lifecycle page of their time.
	srcR470 = "https://github.com/NVIDIA/gpu-operator/pull/927"
	srcR510 = "https://github.com/NVIDIA/ansible-role-nvidia-driver/pull/58"
	// NVIDIA's driver release lists and maintainers naming New Feature Branches.
	srcNFB590 = "https://forums.developer.nvidia.com/t/current-graphics-driver-releases/28500/12"
	srcNFB545 = "https://www.nvidia.com/object/Unix.html"
	srcNFB575 = "https://github.com/NVIDIA/holodeck/pull/790"
	srcAKS    = "https://github.com/Azure/aks-gpu/pull/113" // secondary: AKS GPU images' designations
)

// lifecycle is NVIDIA's data-center driver branch lifecycle, oldest first,
// correctable here and nowhere else. A branch not here is unknown;
// branches 600-609 and 625 do not exist.
var lifecycle = []Branch{
	{Number: 410, Kind: KindUnknown, EndOfLife: Month{2025, time.August}, ListedOnly: true, Source: srcDC580, Read: "2026-12-01"},
	{Number: 418, Kind: LongTermSupport, EndOfLife: Month{2022, time.March}, Source: srcDC2021, Read: "2026-12-01"},
	{Number: 440, Kind: NewFeature, EndOfLife: Month{2020, time.November}, Source: srcDC2021, Read: "2026-12-01"},
	{Number: 450, Kind: LongTermSupport, EndOfLife: Month{2023, time.July}, Source: srcDC2021, Read: "2026-12-01"},
	// R455, an "Evaluation/Developer Branch", is short-lived and never a production target: an NFB.
	{Number: 455, Kind: NewFeature, EndOfLife: Month{2025, time.August}, ListedOnly: true, Source: srcDC2021, Read: "2026-12-01"},
	{Number: 460, Kind: Production, EndOfLife: Month{2022, time.January}, Source: srcDC2021, Read: "2026-12-01"},
	{Number: 465, Kind: NewFeature, EndOfLife: Month{2025, time.August}, ListedOnly: true, Source: srcAKS, Read: "2026-12-01"},
	{Number: 470, Kind: LongTermSupport, EndOfLife: Month{2024, time.July}, Source: srcR470, Read: "2026-12-01"},
	{Number: 495, Kind: NewFeature, EndOfLife: Month{2025, time.August}, ListedOnly: true, Source: srcAKS, Read: "2026-12-01"},
	{Number: 510, Kind: Production, EndOfLife: Month{2023, time.January}, Source: srcR510, Read: "2026-12-01"},
	{Number: 515, Kind: Production, EndOfLife: Month{2025, time.August}, ListedOnly: true, Source: srcDC580 + " " + srcAKS, Read: "2026-12-01"},
	{Number: 520, Kind: NewFeature, Source: srcAKS, Read: "2026-12-01"},
	{Number: 525, Kind: Production, EndOfLife: Month{2025, time.August}, ListedOnly: true, Source: srcDC580 + " " + srcAKS, Read: "2026-12-01"},
	{Number: 535, Kind: LongTermSupport, EndOfLife: Month{2026, time.June}, Source: srcDC615, Read: "2026-12-01"},
	{Number: 545, Kind: NewFeature, Source: srcNFB545, Read: "2026-12-01"},
	{Number: 550, Kind: Production, EndOfLife: Month{2025, time.August}, ListedOnly: true, Source: srcDC580 + " " + srcAKS, Read: "2026-12-01"},
	{Number: 560, Kind: NewFeature, EndOfLife: Month{2025, time.August}, ListedOnly: true, Source: srcDC580 + " " + srcAKS, Read: "2026-12-01"},
	{Number: 565, Kind: NewFeature, EndOfLife: Month{2025, time.August}, ListedOnly: true, Source: srcDC580 + " " + srcAKS, Read: "2026-12-01"},
	{Number: 570, Kind: Production, EndOfLife: Month{2026, time.February}, Source: srcDC580, Read: "2026-12-01"},
	{Number: 575, Kind: NewFeature, EndOfLife: Month{2025, time.August}, ListedOnly: true, Source: srcDC580 + " " + srcNFB575, Read: "2026-12-01"},
	{Number: 580, Kind: LongTermSupport, EndOfLife: Month{2028, time.June}, Source: srcDC620, Read: "2026-12-01"},
	{Number: 590, Kind: NewFeature, Source: srcNFB590, Read: "2026-12-01"},
	{Number: 595, Kind: Production, EndOfLife: Month{2027, time.March}, Source: srcDC620, Read: "2026-12-01"},
	{Number: 610, Kind: NewFeature, EndOfLife: Month{2026, time.August}, Source: srcDC615, Read: "2026-12-01"},
	// Derived: on neither edition's list of LTSB and PB branches.
	{Number: 615, Kind: NewFeature, Source: srcDC620, Read: "2026-12-01"},
	{Number: 620, Kind: LongTermSupport, EndOfLife: Month{2029, time.September}, Source: srcDC620, Read: "2026-12-01"},
}
