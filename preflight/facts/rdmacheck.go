package facts

// RDMACheck is what the active tier (PREFLIGHT_RDMA_CHECK) did on each HCA.
type RDMACheck struct {
	Mode           string       `json:"mode"`
	Outcome        string       `json:"outcome"`
	Error          string       `json:"error,omitempty"`
	Via            string       `json:"via,omitempty"`
	Library        string       `json:"library,omitempty"`
	List           *RDMAStep    `json:"list,omitempty"`
	Listed         []string     `json:"listed,omitempty"`
	Devices        []RDMADevice `json:"devices,omitempty"`
	DurationMillis float64      `json:"durationMillis,omitempty"`
}

// Modes of the active tier.
const (
	RDMAModeOff      = "off"
	RDMAModeOpen     = "open"
	RDMAModeRegister = "register"
)

// Outcomes of the active tier.
const (
	RDMANotRun        = "not-run"            // off, or nothing to test (the Error says which)
	RDMAOK            = "ok"                 // every step on every device succeeded
	RDMAFailed        = "failed"             // a verbs call failed: see List and the steps
	RDMALibraryFailed = "library-not-loaded" // dlopen or dlvsym of libibverbs failed
	RDMATimeout       = "timeout"            // killed at PREFLIGHT_RDMA_TIMEOUT
	RDMAUnavailable   = "unavailable"        // the probe could not be started
	RDMAProbeFailed   = "probe-failed"       // the probe crashed or printed garbage
)

// RDMADevice is one HCA tested, its ports as ibv_query_port answered.
type RDMADevice struct {
	Name  string     `json:"name"`
	Ports []RDMAPort `json:"ports,omitempty"`
	Steps []RDMAStep `json:"steps"`
}

// RDMAPort is ibv_query_port's answer in sysfs's words.
type RDMAPort struct {
	Num       int    `json:"num"`
	State     string `json:"state"`
	LinkLayer string `json:"linkLayer"`
}

// RDMAStep is one verbs call; Errno and Message are empty on success.
type RDMAStep struct {
	Step    string  `json:"step"`
	Errno   string  `json:"errno,omitempty"`
	Message string  `json:"message,omitempty"`
	Millis  float64 `json:"millis"`
}

// The verbs calls, in the order the tier makes them.
const (
	RDMAStepList    = "ibv_get_device_list"
	RDMAStepFind    = "find"
	RDMAStepOpen    = "ibv_open_device"
	RDMAStepPort    = "ibv_query_port"
	RDMAStepPD      = "ibv_alloc_pd"
	RDMAStepRegMR   = "ibv_reg_mr"
	RDMAStepDeregMR = "ibv_dereg_mr"
	RDMAStepFreePD  = "ibv_dealloc_pd"
	RDMAStepClose   = "ibv_close_device"
)

// Failed reports whether the call failed.
func (s RDMAStep) Failed() bool { return s.Errno != "" || s.Message != "" }

// Failed returns the device's first failed step, or nil.
func (d RDMADevice) Failed() *RDMAStep {
	for i := range d.Steps {
		if d.Steps[i].Failed() {
			return &d.Steps[i]
		}
	}
	return nil
}
