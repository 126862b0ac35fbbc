package facts

// Python is the interpreter the command runs, which decides the copy of
// each framework the checks judge.
type Python struct {
	Interpreter string   `json:"interpreter,omitempty"` // its path in the image; "" when it cannot be told
	How         string   `json:"how,omitempty"`         // "python3 on PATH", "the #! line of /usr/local/bin/train"
	Environment string   `json:"environment,omitempty"` // its prefix
	Version     string   `json:"version,omitempty"`     // X.Y, "3.13t" when free-threaded
	Candidates  []string `json:"candidates,omitempty"`  // when it cannot be told: the prefixes one of which runs it, each judged
}
