package compat

import (
	"testing"

	"github.com/gpu-preflight/gpu-preflight/preflight/version"
)

func TestMinDriver(t *testing.T) {
	for _, tt := range []struct{ cuda, want string }{
		{"11.8", "520.61.05"},
		{"11.8.0", "520.61.05"},
		{"11.8.20220929", "520.61.05"},
		{"12.8", "570.26"},
		{"12.2.2", "535.54.03"},
		{"13.0", "580.65.06"},
		{"12.7", ""},
		{"9.0", ""},
	} {
		got, ok := MinDriver(tt.cuda)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("MinDriver(%q) = %q, %v; want %q", tt.cuda, got, ok, tt.want)
		}
	}
}

func TestDriverCUDA(t *testing.T) {
	for _, tt := range []struct{ driver, want string }{
		{"515.65.01", "11.7"},
		{"470.57.02", "11.4"},
		{"535.129.03", "12.2"},
		{"545.23.08", "12.3"},
		{"550.54.15", "12.4"},
		{"565.57.01", "12.7"},
		{"580.65.06", "13.0"},
		{"430.64", "10.1"}, // between rows: the row below
		{"620.70.06", "13.5"},
		{"390.48", ""},
		{"", ""},
		{"999.1", ""},
	} {
		got, ok := DriverCUDA(tt.driver)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("DriverCUDA(%q) = %q, %v; want %q", tt.driver, got, ok, tt.want)
		}
	}
}

// Every CUDA toolkit's minimum driver must be in a branch that supports that
// CUDA version: the two tables agree.
func TestTablesAgree(t *testing.T) {
	for _, row := range toolkitDriver {
		cuda, ok := DriverCUDA(row.Driver)
		if !ok || !version.AtLeast(cuda, row.CUDA) {
			t.Errorf("toolkit %s needs driver %s, whose branch supports CUDA %q", row.CUDA, row.Driver, cuda)
		}
	}
	for i := 1; i < len(branchCUDA); i++ {
		if branchCUDA[i].Branch <= branchCUDA[i-1].Branch || !version.AtLeast(branchCUDA[i].CUDA, branchCUDA[i-1].CUDA) {
			t.Errorf("branch table out of order at %d", branchCUDA[i].Branch)
		}
	}
	for _, row := range mvcFloor {
		cuda, _ := DriverCUDA(row.Driver)
		if version.Major(cuda) != row.Major {
			t.Errorf("MVC floor %s for %d.x is in a branch supporting %s", row.Driver, row.Major, cuda)
		}
	}
}

func TestBranchForCUDA(t *testing.T) {
	for _, tt := range []struct {
		cuda string
		want int
	}{{"12.8", 570}, {"11.8", 520}, {"12.7", 565}, {"13.0", 580}, {"14.0", 0}} {
		if got, _ := BranchForCUDA(tt.cuda); got != tt.want {
			t.Errorf("BranchForCUDA(%q) = %d, want %d", tt.cuda, got, tt.want)
		}
	}
}

func TestPTXISACUDA(t *testing.T) {
	for _, tt := range []struct{ isa, want string }{
		{"7.8", "11.8"}, {"8.4", "12.4"}, {"8.7", "12.8"}, {"9.0", "13.0"}, {"6.0", ""},
	} {
		if got, _ := PTXISACUDA(tt.isa); got != tt.want {
			t.Errorf("PTXISACUDA(%q) = %q, want %q", tt.isa, got, tt.want)
		}
	}
}

func TestToolkitArchs(t *testing.T) {
	for _, tt := range []struct{ cuda, min, max string }{
		{"11.8", "3.5", "9.0"},
		{"12.2", "5.0", "9.0"},
		{"12.8", "5.0", "12.0"},
		{"13.0", "7.5", "12.1"},
		{"13.2", "7.5", "12.1"},
		{"10.2", "3.0", "7.5"},
	} {
		min, max, ok := ToolkitArchs(tt.cuda)
		if !ok || min != tt.min || max != tt.max {
			t.Errorf("ToolkitArchs(%q) = %s..%s %v, want %s..%s", tt.cuda, min, max, ok, tt.min, tt.max)
		}
	}
}

func TestForwardCompat(t *testing.T) {
	for brand, want := range map[string]Support{
		"Nvidia": Supported, "Tesla": Supported, "GeForceRTX": Unsupported, "QuadroRTX": Maybe, "": Maybe,
	} {
		if got := ForwardCompat(brand); got != want {
			t.Errorf("ForwardCompat(%q) = %v, want %v", brand, got, want)
		}
	}
}
