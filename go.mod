module github.com/gpu-preflight/gpu-preflight

go 1.26.0

require (
	github.com/NVIDIA/go-nvml v0.13.4-1
	github.com/distribution/reference v0.6.0
	github.com/kelseyhightower/envconfig v1.4.0
	github.com/rs/zerolog v1.35.1
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/sys v0.50.0
)

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.20.5 // indirect
	github.com/mattn/go-colorable v0.1.14 // indirect
	github.com/mattn/go-isatty v0.0.20 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)
