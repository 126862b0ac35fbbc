//go:build cgo

package main

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "cudadrv.h"
*/
import "C"

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/gpu-preflight/gpu-preflight/preflight/cuda"
	"github.com/gpu-preflight/gpu-preflight/preflight/facts"
	"github.com/gpu-preflight/gpu-preflight/preflight/fatbin"
)

// smoke runs the CUDA smoke test in mode and returns what it saw; in kernel
// mode fatbinLib's fatbin is loaded on every device. Every CUDA failure is a
// step in the document, never a crash. It runs on the main thread, which a
// CUDA context is current to and which gave up CAP_MKNOD (capabilities.go).
func smoke(mode, fatbinLib string) facts.CUDACheck {
	doc := facts.CUDACheck{Mode: mode, Outcome: facts.CUDAOK}
	soname := C.CString(cuda.Soname)
	defer C.free(unsafe.Pointer(soname))
	var errBuf [1024]C.char
	switch C.pf_open(soname, &errBuf[0], C.size_t(len(errBuf))) {
	case C.PF_OPEN_NOT_LOADED:
		doc.Outcome = facts.CUDALibraryNotFound
		doc.Error = C.GoString(&errBuf[0])
		return doc
	case C.PF_OPEN_SYMBOL_MISSING:
		doc.Outcome = facts.CUDALibraryIncomplete
		doc.Error = C.GoString(&errBuf[0])
		return doc
	}
	var pathBuf [4096]C.char
	if C.pf_loaded_path(&pathBuf[0], C.size_t(len(pathBuf))) == 0 {
		doc.Library = C.GoString(&pathBuf[0])
	}

	// cuDriverGetVersion answers before cuInit, and when it fails: the
	// version of the library loaded, compat or not.
	var version C.int
	if C.pf_driver_version(&version) == 0 {
		doc.DriverAPIVersion = int(version)
	}
	init := timed(facts.CUDAStepInit, func() C.CUresult { return C.pf_init() })
	doc.Init = &init
	if init.Failed() {
		doc.Outcome = facts.CUDAFailed
		return doc
	}
	var count C.int
	if st := timed(facts.CUDAStepCount, func() C.CUresult { return C.pf_device_count(&count) }); st.Failed() {
		doc.Init = &st
		doc.Outcome = facts.CUDAFailed
		return doc
	}
	doc.DeviceCount = int(count)

	var images []fatbinImage
	if mode == facts.CUDAModeKernel && fatbinLib != "" {
		doc.Fatbin, images = loadFatbin(fatbinLib)
	}
	for _, im := range images {
		defer C.free(im.data)
	}
	for i := 0; i < int(count) && i < cuda.MaxDevices; i++ {
		d := cudaDevice(i, mode == facts.CUDAModeKernel, images)
		if d.Failed() != nil {
			doc.Outcome = facts.CUDAFailed
		}
		doc.Devices = append(doc.Devices, d)
	}
	return doc
}

type fatbinImage struct {
	data    unsafe.Pointer
	targets string
}

// loadFatbin reads lib's containers kernel mode loads, one per distinct
// target set (fatbin.PickContainers), within cuda.MaxFatbinBytes.
func loadFatbin(lib string) (*facts.CUDAFatbin, []fatbinImage) {
	fb := &facts.CUDAFatbin{Library: lib}
	r, err := fatbin.ScanFile(lib)
	if err != nil {
		fb.Error = err.Error()
		return fb, nil
	}
	picked := fatbin.PickContainers(r, cuda.MaxFatbins)
	if len(picked) == 0 {
		fb.Error = "no loadable fatbin entry in " + lib
		return fb, nil
	}
	var images []fatbinImage
	for _, c := range picked {
		data, err := fatbin.ReadContainer(lib, c.Section, c.Offset, cuda.MaxFatbinBytes-int64(fb.Bytes))
		if err != nil {
			if len(images) == 0 {
				fb.Error = err.Error()
			}
			break
		}
		fb.Bytes += len(data)
		fb.Containers++
		for _, t := range c.Targets {
			if !slices.Contains(fb.Targets, t) {
				fb.Targets = append(fb.Targets, t)
			}
		}
		images = append(images, fatbinImage{data: C.CBytes(data), targets: strings.Join(c.Targets, " ")})
	}
	slices.Sort(fb.Targets)
	return fb, images
}

// cudaDevice runs the steps on device ordinal i, then releases all it took.
func cudaDevice(i int, kernel bool, images []fatbinImage) (d facts.CUDADevice) {
	start := time.Now()
	d = facts.CUDADevice{Ordinal: i, Steps: []facts.CUDAStep{}}
	defer func() { d.DurationMillis = millisSince(start) }()
	add := func(s facts.CUDAStep) bool {
		d.Steps = append(d.Steps, s)
		return !s.Failed()
	}

	var dev C.CUdevice
	if !add(timed(facts.CUDAStepDevice, func() C.CUresult { return describe(i, &dev, &d) })) {
		return d
	}
	var ctx C.CUcontext
	if !add(timed(facts.CUDAStepContext, func() C.CUresult {
		if r := C.pf_primary_ctx_retain(dev, &ctx); r != 0 {
			ctx = nil
			return r
		}
		return C.pf_ctx_set_current(ctx)
	})) {
		if ctx != nil {
			C.pf_primary_ctx_release(dev)
		}
		return d
	}
	var mods []C.CUmodule
	var buf C.CUdeviceptr
	defer func() {
		add(timed(facts.CUDAStepRelease, func() C.CUresult { return release(dev, mods, buf) }))
	}()

	var free, total C.size_t
	if add(timed(facts.CUDAStepMemory, func() C.CUresult { return C.pf_mem_get_info(&free, &total) })) {
		d.FreeBytes, d.TotalBytes = uint64(free), uint64(total)
	}
	if !kernel {
		return d
	}
	// The fatbin first: a faulting kernel leaves the context unusable. One
	// step for all containers; the first that fails names its targets.
	if len(images) > 0 {
		var failed string
		st := timed(facts.CUDAStepFatbin, func() C.CUresult {
			for n, im := range images {
				var mod C.CUmodule
				if r := C.pf_module_load_data(&mod, im.data); r != 0 {
					failed = fmt.Sprintf("container %d of %d, targets %s", n+1, len(images), im.targets)
					return r
				}
				mods = append(mods, mod)
			}
			return 0
		})
		if failed != "" {
			st.Message = strings.TrimPrefix(st.Message+"; "+failed, "; ")
		}
		add(st)
	}
	writeKernel(&d, add, &mods, &buf)
	return d
}

// writeKernel JIT-compiles the embedded PTX, runs its kernel once and
// checks what it wrote, each step only after the one before succeeded.
func writeKernel(d *facts.CUDADevice, add func(facts.CUDAStep) bool, mods *[]C.CUmodule, buf *C.CUdeviceptr) {
	var mod C.CUmodule
	var fn C.CUfunction
	ptx := C.CString(cuda.KernelPTX)
	defer C.free(unsafe.Pointer(ptx))
	name := C.CString(cuda.KernelName)
	defer C.free(unsafe.Pointer(name))
	var jitLog [2048]C.char
	st := timed(facts.CUDAStepModule, func() C.CUresult {
		if r := C.pf_module_load_ptx(&mod, ptx, &jitLog[0], C.uint(len(jitLog))); r != 0 {
			return r
		}
		*mods = append(*mods, mod)
		return C.pf_module_get_function(&fn, mod, name)
	})
	if log := strings.TrimSpace(C.GoString(&jitLog[0])); st.Failed() && log != "" {
		st.Message += "; JIT log: " + log
	}
	if !add(st) {
		return
	}
	if !add(timed(facts.CUDAStepAlloc, func() C.CUresult { return C.pf_mem_alloc(buf, 4) })) {
		*buf = 0
		return
	}
	want := cuda.KernelValue(d.Ordinal)
	if !add(timed(facts.CUDAStepLaunch, func() C.CUresult {
		if r := C.pf_launch_write(fn, *buf, C.uint(want)); r != 0 {
			return r
		}
		return C.pf_ctx_synchronize()
	})) {
		return
	}
	var got C.uint
	if !add(timed(facts.CUDAStepCopy, func() C.CUresult { return C.pf_memcpy_dtoh(unsafe.Pointer(&got), *buf, 4) })) {
		return
	}
	cmp := facts.CUDAStep{Step: facts.CUDAStepCompare}
	if uint32(got) != want {
		cmp.Error = facts.CUDAWrongValue
		cmp.Message = fmt.Sprintf("the kernel was to write 0x%08x and 0x%08x was copied back", want, uint32(got))
	}
	add(cmp)
}

// describe gets device i and fills its facts.
func describe(i int, dev *C.CUdevice, d *facts.CUDADevice) C.CUresult {
	if r := C.pf_device_get(C.int(i), dev); r != 0 {
		return r
	}
	var name [256]C.char
	if r := C.pf_device_name(*dev, &name[0], C.int(len(name))); r != 0 {
		return r
	}
	d.Name = C.GoString(&name[0])
	var uuid [16]C.uchar
	if r := C.pf_device_uuid(*dev, &uuid[0]); r != 0 {
		return r
	}
	d.UUID = cuda.FormatUUID(C.GoBytes(unsafe.Pointer(&uuid[0]), 16))
	var bus [64]C.char
	if r := C.pf_device_pci_bus_id(*dev, &bus[0], C.int(len(bus))); r != 0 {
		return r
	}
	d.PCIBusID = C.GoString(&bus[0])
	var major, minor, mode C.int
	if r := C.pf_device_attribute(*dev, C.PF_ATTR_CC_MAJOR, &major); r != 0 {
		return r
	}
	if r := C.pf_device_attribute(*dev, C.PF_ATTR_CC_MINOR, &minor); r != 0 {
		return r
	}
	d.ComputeCapability = fmt.Sprintf("%d.%d", major, minor)
	if r := C.pf_device_attribute(*dev, C.PF_ATTR_COMPUTE_MODE, &mode); r != 0 {
		return r
	}
	d.ComputeMode = cuda.ComputeModeName(int(mode))
	var total C.size_t
	if r := C.pf_device_total_mem(*dev, &total); r != 0 {
		return r
	}
	d.TotalBytes = uint64(total)
	return 0
}

// release gives back what a device's steps took, in reverse order: the exit
// would too, but this proves the context lets go.
func release(dev C.CUdevice, mods []C.CUmodule, buf C.CUdeviceptr) C.CUresult {
	var first C.CUresult
	keep := func(r C.CUresult) {
		if first == 0 {
			first = r
		}
	}
	if buf != 0 {
		keep(C.pf_mem_free(buf))
	}
	for i := len(mods) - 1; i >= 0; i-- {
		keep(C.pf_module_unload(mods[i]))
	}
	keep(C.pf_ctx_set_current(nil))
	keep(C.pf_primary_ctx_release(dev))
	return first
}

// timed runs call as step and records its CUresult, names and duration.
func timed(step string, call func() C.CUresult) facts.CUDAStep {
	start := time.Now()
	r := call()
	s := facts.CUDAStep{Step: step, Code: int(r), Millis: millisSince(start)}
	if r != 0 {
		s.Error = cuda.Name(int(r), goString(C.pf_error_name(r)))
		s.Message = goString(C.pf_error_string(r))
	}
	return s
}

// goString copies a C string the library owns; "" for NULL.
func goString(p *C.char) string {
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

func millisSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }
