package app

import (
	"context"
	"time"

	"github.com/gpu-preflight/gpu-preflight/preflight/check"
	"github.com/gpu-preflight/gpu-preflight/preflight/envvars"
	"github.com/gpu-preflight/gpu-preflight/preflight/gather"
)

// checkInput gathers within PREFLIGHT_TIMEOUT what the checks read: what
// explain, advise and affinity start from.
func checkInput(cfg Config, env envvars.Env) check.Input {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(cfg.Timeout))
	defer cancel()
	g, _ := gather.Gather(ctx, cfg.gatherOptions(env))
	return cfg.checkInput(g)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
