package compat

import (
	"strings"
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
		{"13.2", "595.45.04"},
		// 615.71.09 is 13.4 Update 1's compat driver, not the GA floor.
		{"13.4", "615"},
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
	for _, tt := range []struct {
		driver, want string
		assumed      bool
	}{
		{"515.65.01", "11.7", false},
		{"470.57.02", "11.4", false},
		{"535.129.03", "12.2", false},
		{"545.23.08", "12.3", false},
		{"550.54.15", "12.4", false},
		{"565.57.01", "12.7", false},
		{"580.65.06", "13.0", false},
		{"610.43.02", "13.3", false},
		{"620.70.06", "13.5", false},
		// Between rows: the row below, and said to be a guess.
		{"430.64", "10.1", true},
		{"600.10", "13.2", true},
		{"625.1", "13.5", true},
		{"390.48", "", false},
		{"", "", false},
		{"999.1", "", false},
	} {
		got, assumed, ok := LookupDriverCUDA(tt.driver)
		if got != tt.want || ok != (tt.want != "") || assumed != tt.assumed {
			t.Errorf("LookupDriverCUDA(%q) = %q, assumed %v, %v; want %q, assumed %v", tt.driver, got, assumed, ok, tt.want, tt.assumed)
		}
		if c, ok := DriverCUDA(tt.driver); c != got || ok != (got != "") {
			t.Errorf("DriverCUDA(%q) = %q, %v; LookupDriverCUDA says %q", tt.driver, c, ok, got)
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

func TestPTXISACUDA(t *testing.T) {
	for _, tt := range []struct{ isa, want string }{
		{"7.8", "11.8"}, {"8.4", "12.4"}, {"8.7", "12.8"}, {"9.0", "13.0"}, {"6.0", ""},
		{"9.2", "13.2"}, {"9.3", "13.3"}, {"9.4", "13.4"}, {"9.5", "13.5"},
	} {
		if got, _ := PTXISACUDA(tt.isa); got != tt.want {
			t.Errorf("PTXISACUDA(%q) = %q, want %q", tt.isa, got, tt.want)
		}
	}
}

func TestPTXISABeyond(t *testing.T) {
	for _, tt := range []struct {
		isa    string
		beyond bool
	}{{"9.6", true}, {"10.0", true}, {"9.5", false}, {"8.4", false}, {"x", false}} {
		if cuda, beyond := PTXISABeyond(tt.isa); beyond != tt.beyond || cuda != "13.5" {
			t.Errorf("PTXISABeyond(%q) = %q, %v; want 13.5, %v", tt.isa, cuda, beyond, tt.beyond)
		}
	}
}

func TestToolkitTargets(t *testing.T) {
	for _, tt := range []struct{ cuda, want string }{
		{"11.8", "3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0"},
		{"12.2", "5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0"},
		// Thor is sm_101 before CUDA 13: nothing of capability 11.x.
		{"12.8", "5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 10.0 10.1 12.0"},
		{"12.9", "5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5 8.0 8.6 8.7 8.9 9.0 10.0 10.1 10.3 12.0 12.1"},
		{"13.0", "7.5 8.0 8.6 8.7 8.8 8.9 9.0 10.0 10.3 11.0 12.0 12.1"},
		{"13.3", "7.5 8.0 8.6 8.7 8.8 8.9 9.0 10.0 10.3 11.0 12.0 12.1"},
		{"13.4", "7.5 8.0 8.6 8.7 8.8 8.9 9.0 10.0 10.3 10.7 11.0 12.0 12.1"},
		{"10.2", "3.0 3.2 3.5 3.7 5.0 5.2 5.3 6.0 6.1 6.2 7.0 7.2 7.5"},
	} {
		got, ok := ToolkitTargets(tt.cuda)
		if !ok || strings.Join(got, " ") != tt.want {
			t.Errorf("ToolkitTargets(%q) = %q, %v; want %q", tt.cuda, got, ok, tt.want)
		}
	}
	if _, ok := ToolkitTargets("9.2"); ok {
		t.Error("ToolkitTargets knows CUDA 9.2, which the table does not hold")
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
