//go:build cgo

package main

import (
	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
)

var fabricStates = map[uint8]string{
	gonvml.GPU_FABRIC_STATE_NOT_SUPPORTED: facts.FabricNotSupported,
	gonvml.GPU_FABRIC_STATE_NOT_STARTED:   facts.FabricNotStarted,
	gonvml.GPU_FABRIC_STATE_IN_PROGRESS:   facts.FabricInProgress,
	gonvml.GPU_FABRIC_STATE_COMPLETED:     facts.FabricCompleted,
}

// fabricHealthFields are the healthMask fields that report a fault.
var fabricHealthFields = []struct {
	name         string
	shift, width uint32
	bad          func(uint32) bool
}{
	{facts.FabricHealthDegradedBandwidth, gonvml.GPU_FABRIC_HEALTH_MASK_SHIFT_DEGRADED_BW, gonvml.GPU_FABRIC_HEALTH_MASK_WIDTH_DEGRADED_BW,
		is(gonvml.GPU_FABRIC_HEALTH_MASK_DEGRADED_BW_TRUE)},
	{facts.FabricHealthRouteRecovery, gonvml.GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_RECOVERY, gonvml.GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_RECOVERY,
		is(gonvml.GPU_FABRIC_HEALTH_MASK_ROUTE_RECOVERY_TRUE)},
	{facts.FabricHealthRouteUnhealthy, gonvml.GPU_FABRIC_HEALTH_MASK_SHIFT_ROUTE_UNHEALTHY, gonvml.GPU_FABRIC_HEALTH_MASK_WIDTH_ROUTE_UNHEALTHY,
		is(gonvml.GPU_FABRIC_HEALTH_MASK_ROUTE_UNHEALTHY_TRUE)},
	{facts.FabricHealthAccessTimeoutRecovery, gonvml.GPU_FABRIC_HEALTH_MASK_SHIFT_ACCESS_TIMEOUT_RECOVERY, gonvml.GPU_FABRIC_HEALTH_MASK_WIDTH_ACCESS_TIMEOUT_RECOVERY,
		is(gonvml.GPU_FABRIC_HEALTH_MASK_ACCESS_TIMEOUT_RECOVERY_TRUE)},
	{facts.FabricHealthIncorrectConfiguration, gonvml.GPU_FABRIC_HEALTH_MASK_SHIFT_INCORRECT_CONFIGURATION, gonvml.GPU_FABRIC_HEALTH_MASK_WIDTH_INCORRECT_CONFIGURATION,
		func(v uint32) bool { return v > gonvml.GPU_FABRIC_HEALTH_MASK_INCORRECT_CONFIGURATION_NONE }},
}

func is(want uint32) func(uint32) bool { return func(v uint32) bool { return v == want } }

var computeModes = map[gonvml.ComputeMode]string{
	gonvml.COMPUTEMODE_DEFAULT:           facts.ComputeModeDefault,
	gonvml.COMPUTEMODE_EXCLUSIVE_THREAD:  facts.ComputeModeExclusiveThread,
	gonvml.COMPUTEMODE_PROHIBITED:        facts.ComputeModeProhibited,
	gonvml.COMPUTEMODE_EXCLUSIVE_PROCESS: facts.ComputeModeExclusiveProcess,
}

// clockEvents are the reasons that are the node's fault.
var clockEvents = []struct {
	bit  uint64
	name string
}{
	{gonvml.ClocksThrottleReasonHwSlowdown, facts.ClockHWSlowdown},
	{gonvml.ClocksEventReasonSwThermalSlowdown, facts.ClockSWThermal},
	{gonvml.ClocksThrottleReasonHwThermalSlowdown, facts.ClockHWThermal},
	{gonvml.ClocksThrottleReasonHwPowerBrakeSlowdown, facts.ClockHWPowerBrake},
}
