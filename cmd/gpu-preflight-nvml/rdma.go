//go:build cgo

package main

/*
#include <stdlib.h>
#include "verbs.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/rdmaprobe"
	"github.com/gpu-preflight/gpu-preflight/preflight/transport"
)

// rdmaMain is `gpu-preflight-nvml rdma MODE LIBRARY HCA:PORT[,PORT]...`.
func rdmaMain(args []string) int {
	if len(args) < 2 || (args[0] != facts.RDMAModeOpen && args[0] != facts.RDMAModeRegister) {
		fmt.Fprintln(os.Stderr, "usage: gpu-preflight-nvml rdma open|register LIBIBVERBS [HCA:PORT[,PORT]...]")
		return 2
	}
	var targets []transport.Target
	for _, a := range args[2:] {
		t, err := transport.ParseTarget(a)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gpu-preflight-nvml:", err)
			return 2
		}
		targets = append(targets, t)
	}
	return write(verbsCheck(args[0], args[1], targets))
}

// verbsCheck loads lib and runs the tier's calls on each target; every
// failure is a step with the errno libibverbs left, never a crash.
func verbsCheck(mode, lib string, targets []transport.Target) facts.RDMACheck {
	doc := facts.RDMACheck{Mode: mode, Outcome: facts.RDMAOK, Library: lib}
	path := C.CString(lib)
	defer C.free(unsafe.Pointer(path))
	var errBuf [1024]C.char
	if C.pv_open(path, &errBuf[0], C.size_t(len(errBuf))) != C.PV_OPEN_OK {
		doc.Outcome, doc.Error = facts.RDMALibraryFailed, C.GoString(&errBuf[0])
		return doc
	}
	var n C.int
	var list **C.struct_ibv_device
	st := verbsStep(facts.RDMAStepList, func() error {
		var err error
		list, err = C.pv_get_device_list(&n)
		return nullErr(list == nil, err)
	})
	doc.List = &st
	if st.Failed() {
		doc.Outcome = facts.RDMAFailed
		return doc
	}
	defer C.pv_free_device_list(list)
	index := map[string]C.int{}
	for i := C.int(0); i < n && i < rdmaprobe.MaxDevices; i++ {
		name := C.GoString(C.pv_device_name(list, i))
		doc.Listed = append(doc.Listed, name)
		index[name] = i
	}
	for _, t := range targets {
		d := facts.RDMADevice{Name: t.HCA, Steps: []facts.RDMAStep{}}
		i, ok := index[t.HCA]
		if !ok {
			d.Steps = append(d.Steps, facts.RDMAStep{Step: facts.RDMAStepFind,
				Message: "libibverbs does not list it: no loaded provider matched the device"})
		} else {
			verbsDevice(mode, list, i, t.Ports, &d)
		}
		if d.Failed() != nil {
			doc.Outcome = facts.RDMAFailed
		}
		doc.Devices = append(doc.Devices, d)
	}
	return doc
}

// regBytes is what the tier registers: enough to prove the memlock limit
// and the HCA's memory translation, no more.
const regBytes = 1 << 20

// verbsDevice opens device i, queries ports, allocates a protection
// domain and, in register mode, registers regBytes; then gives back all
// it took, in reverse order.
func verbsDevice(mode string, list **C.struct_ibv_device, i C.int, ports []int, d *facts.RDMADevice) {
	add := func(s facts.RDMAStep) bool {
		d.Steps = append(d.Steps, s)
		return !s.Failed()
	}
	var ctx *C.struct_ibv_context
	if !add(verbsStep(facts.RDMAStepOpen, func() error {
		var err error
		ctx, err = C.pv_open_device(list, i)
		return nullErr(ctx == nil, err)
	})) {
		return
	}
	defer func() { add(verbsStep(facts.RDMAStepClose, func() error { return rcErr(C.pv_close_device(ctx)) })) }()
	for _, p := range ports {
		var state, layer C.int
		if !add(verbsStep(facts.RDMAStepPort, func() error { return rcErr(C.pv_query_port(ctx, C.int(p), &state, &layer)) })) {
			return
		}
		d.Ports = append(d.Ports, facts.RDMAPort{Num: p, State: rdmaprobe.PortState(int(state)), LinkLayer: rdmaprobe.LinkLayer(int(layer))})
	}
	var pd *C.struct_ibv_pd
	if !add(verbsStep(facts.RDMAStepPD, func() error {
		var err error
		pd, err = C.pv_alloc_pd(ctx)
		return nullErr(pd == nil, err)
	})) {
		return
	}
	defer func() { add(verbsStep(facts.RDMAStepFreePD, func() error { return rcErr(C.pv_dealloc_pd(pd)) })) }()
	if mode != facts.RDMAModeRegister {
		return
	}
	buf, err := unix.Mmap(-1, 0, regBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		add(facts.RDMAStep{Step: facts.RDMAStepRegMR, Errno: unix.ErrnoName(err.(syscall.Errno)), Message: "mmap of the buffer: " + err.Error()})
		return
	}
	defer unix.Munmap(buf)
	var mr *C.struct_ibv_mr
	if !add(verbsStep(facts.RDMAStepRegMR, func() error {
		var err error
		mr, err = C.pv_reg_mr(pd, unsafe.Pointer(&buf[0]), regBytes)
		return nullErr(mr == nil, err)
	})) {
		return
	}
	add(verbsStep(facts.RDMAStepDeregMR, func() error { return rcErr(C.pv_dereg_mr(mr)) }))
}

// verbsStep runs call and records its errno and duration.
func verbsStep(step string, call func() error) facts.RDMAStep {
	start := time.Now()
	err := call()
	s := facts.RDMAStep{Step: step, Millis: millisSince(start)}
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
		s.Errno, s.Message = unix.ErrnoName(errno), errno.Error()
	case err != nil:
		s.Message = err.Error()
	}
	return s
}

// nullErr is a NULL return's error: the errno libibverbs set, or a word
// that it set none.
func nullErr(null bool, err error) error {
	if !null {
		return nil
	}
	if err == nil || err == syscall.Errno(0) {
		return errors.New("returned NULL without setting errno")
	}
	return err
}

// rcErr is a verbs call's return: 0, or the errno value.
func rcErr(rc C.int) error {
	if rc == 0 {
		return nil
	}
	return syscall.Errno(rc)
}
