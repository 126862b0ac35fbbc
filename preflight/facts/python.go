package facts

// Python is which Python the command runs, and so which copy of each
// framework the checks judge.
type Python struct {
	// Interpreter is the executable inside the image, "" when it cannot be
	// told; How says how it was chosen ("python3 on PATH").
	Interpreter string `json:"interpreter,omitempty"`
	How         string `json:"how,omitempty"`
	// Environment is its prefix; Version its X.Y, "3.13t" when free-threaded.
	Environment string `json:"environment,omitempty"`
	Version     string `json:"version,omitempty"`
	// Candidates are the environments one of which runs the command when
	// that cannot be told: each one's frameworks are judged.
	Candidates []string `json:"candidates,omitempty"`
}
