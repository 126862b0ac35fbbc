/*
 * A fake libcuda.so.1 for gpu-preflight's tests, compiled by the tests. It
 * defines exactly the driver API entry points the CUDA smoke test resolves
 * (cmd/gpu-preflight-nvml/cudadrv.c), under the names the real library
 * exports (the _v2 ones where cuda.h maps to them), from this project's own
 * declarations (cmd/gpu-preflight-nvml/cudadrv.h), and answers from a
 * scenario file named by the variable SCENARIO_ENV (FAKE_CUDA_SCENARIO
 * unless the build says otherwise, so that two copies on one library path
 * can tell which one the dynamic linker chose).
 *
 * Scenario file: one fact per line, "#" comments.
 *   init ok | hang | <code>   cuInit's answer; hang never returns
 *   version 12040             cuDriverGetVersion
 *   count 8                   cuDeviceGetCount (default: the devices listed)
 *   <i> name <text>           device i: name, uuid (32 hex digits), busid,
 *   <i> uuid <hex>            cc "<major> <minor>", mode (compute mode),
 *   <i> busid 0000:18:00.0    total and free (bytes)
 *   <i> cc 9 0
 *   <i> <step> <code>         the call of step fails with <code> on device i:
 *                             device context memory module alloc launch copy
 *                             fatbin release
 *   <i> value wrong           the kernel writes another value than it is given
 *   <i> jitlog <text>         what a failing module step writes in the JIT log
 *   ledger <path>             after every call that takes or gives back a
 *                             context, module or allocation, rewrite <path>
 *                             with what is held (a Go program exits without
 *                             running C destructors, so the last state is
 *                             written as it changes)
 *
 * When FAKE_CUDA_LOADED names a file, loading the library appends a line
 * to it: a test can tell that nothing loaded libcuda at all.
 *
 * It behaves like the driver where the smoke test depends on it: calls
 * before cuInit return CUDA_ERROR_NOT_INITIALIZED, memory calls need a
 * current context, cuModuleGetFunction finds only entries the PTX declares,
 * a fatbin must start with the container magic and, unless the scenario
 * scripts its answer, loads only when it holds a cubin of the device's major
 * version at or below its minor, or PTX at or below its compute capability
 * (CUDA_ERROR_NO_BINARY_FOR_GPU otherwise), and the kernel stores its
 * second parameter at its first.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cudadrv.h"
#include "scenario.h"

#ifndef SCENARIO_ENV
#define SCENARIO_ENV "FAKE_CUDA_SCENARIO"
#endif

#define MAX_DEVICES 64

static int load(void) { return scenario_load(SCENARIO_ENV, "fake libcuda"); }
static const char *lookup(int dev, const char *key) { return scenario_lookup(dev, key); }

/* CUresult codes this file returns on its own. */
enum {
	SUCCESS = 0,
	INVALID_VALUE = 1,
	NOT_INITIALIZED = 3,
	INVALID_DEVICE = 101,
	INVALID_IMAGE = 200,
	INVALID_CONTEXT = 201,
	NO_BINARY_FOR_GPU = 209,
	INVALID_HANDLE = 400,
	NOT_FOUND = 500,
	UNKNOWN = 999,
};

static int initialised;
static int retained[MAX_DEVICES];
static int current = -1; /* device of the current context */
static int modules, allocations;

__attribute__((constructor)) static void loaded(void)
{
	const char *path = getenv("FAKE_CUDA_LOADED");
	FILE *f;

	if (path != NULL && *path != '\0' && (f = fopen(path, "a")) != NULL) {
		fprintf(f, "loaded by pid %d\n", (int)getpid());
		fclose(f);
	}
}

/* account writes what is held to the scenario's ledger file. */
static void account(void)
{
	const char *path = lookup(-1, "ledger");
	int contexts = 0;
	FILE *f;

	if (path == NULL || (f = fopen(path, "w")) == NULL)
		return;
	for (int i = 0; i < MAX_DEVICES; i++)
		contexts += retained[i];
	fprintf(f, "contexts %d modules %d allocations %d\n", contexts, modules, allocations);
	fclose(f);
}

struct module {
	char *ptx; /* NULL for a fatbin */
};

/* scripted returns the code the scenario scripts for step on dev, or 0. */
static CUresult scripted(int dev, const char *step)
{
	const char *v = lookup(dev, step);

	return v ? (CUresult)atoi(v) : SUCCESS;
}

static int device_count(void)
{
	const char *v = lookup(-1, "count");
	int n = 0;

	if (v != NULL)
		return atoi(v);
	for (int i = 0; i < scenario_nfacts; i++)
		if (scenario_facts[i].dev + 1 > n)
			n = scenario_facts[i].dev + 1;
	return n > MAX_DEVICES ? MAX_DEVICES : n;
}

static CUresult check_device(CUdevice dev)
{
	if (!initialised)
		return NOT_INITIALIZED;
	if (dev < 0 || dev >= device_count())
		return INVALID_DEVICE;
	return SUCCESS;
}

/* Names and strings as cuGetErrorName and cuGetErrorString of Debian's
 * libcuda1 535.309.01 give them, for the codes the scenarios use. */
static const struct {
	CUresult code;
	const char *name, *text;
} errors[] = {
	{0, "CUDA_SUCCESS", "no error"},
	{1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
	{2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
	{3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
	{34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
	{46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "CUDA-capable device(s) is/are busy or unavailable"},
	{100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
	{101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
	{200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
	{201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
	{209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
	{214, "CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error encountered"},
	{218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
	{221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "PTX JIT compiler library not found"},
	{222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."},
	{400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
	{500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
	{700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
	{719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
	{802, "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"},
	{803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination"},
	{804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted on non supported HW"},
	{999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static int error_index(CUresult r)
{
	for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
		if (errors[i].code == r)
			return (int)i;
	return -1;
}

/* Like the real library: an unknown code is CUDA_ERROR_INVALID_VALUE and
 * leaves *s NULL. */
CUresult cuGetErrorName(CUresult r, const char **s)
{
	int i = error_index(r);

	*s = i < 0 ? NULL : errors[i].name;
	return i < 0 ? INVALID_VALUE : SUCCESS;
}

CUresult cuGetErrorString(CUresult r, const char **s)
{
	int i = error_index(r);

	*s = i < 0 ? NULL : errors[i].text;
	return i < 0 ? INVALID_VALUE : SUCCESS;
}

CUresult cuInit(unsigned int flags)
{
	const char *v;

	if (flags != 0)
		return INVALID_VALUE;
	if (load() != 0)
		return UNKNOWN;
	v = lookup(-1, "init");
	if (v == NULL || strcmp(v, "ok") == 0) {
		initialised = 1;
		return SUCCESS;
	}
	if (strcmp(v, "hang") == 0)
		for (;;)
			pause();
	return (CUresult)atoi(v);
}

/* The driver answers this before cuInit; the scenario is read on demand. */
CUresult cuDriverGetVersion(int *version)
{
	const char *v;

	if (version == NULL)
		return INVALID_VALUE;
	if (scenario_nfacts == 0 && load() != 0)
		return UNKNOWN;
	v = lookup(-1, "version");
	*version = v ? atoi(v) : 12020;
	return SUCCESS;
}

CUresult cuDeviceGetCount(int *count)
{
	if (!initialised)
		return NOT_INITIALIZED;
	*count = device_count();
	return SUCCESS;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	CUresult r = check_device(ordinal);

	if (r == SUCCESS)
		r = scripted(ordinal, "device");
	if (r == SUCCESS)
		*dev = ordinal;
	return r;
}

CUresult cuDeviceGetName(char *buf, int len, CUdevice dev)
{
	const char *v;
	CUresult r = check_device(dev);

	if (r != SUCCESS)
		return r;
	v = lookup(dev, "name");
	snprintf(buf, (size_t)len, "%s", v ? v : "Fake GPU");
	return SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, int attr, CUdevice dev)
{
	const char *v;
	int major = 8, minor = 0;
	CUresult r = check_device(dev);

	if (r != SUCCESS)
		return r;
	if ((v = lookup(dev, "cc")) != NULL)
		sscanf(v, "%d %d", &major, &minor);
	switch (attr) {
	case PF_ATTR_CC_MAJOR:
		*value = major;
		return SUCCESS;
	case PF_ATTR_CC_MINOR:
		*value = minor;
		return SUCCESS;
	case PF_ATTR_COMPUTE_MODE:
		v = lookup(dev, "mode");
		*value = v ? atoi(v) : 0;
		return SUCCESS;
	}
	return INVALID_VALUE;
}

CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	const char *v;
	CUresult r = check_device(dev);

	if (r != SUCCESS)
		return r;
	memset(uuid->bytes, 0, 16);
	if ((v = lookup(dev, "uuid")) != NULL)
		for (int i = 0; i < 16 && v[2 * i] && v[2 * i + 1]; i++) {
			unsigned int b;
			sscanf(v + 2 * i, "%2x", &b);
			uuid->bytes[i] = (unsigned char)b;
		}
	return SUCCESS;
}

CUresult cuDeviceGetPCIBusId(char *buf, int len, CUdevice dev)
{
	const char *v;
	CUresult r = check_device(dev);

	if (r != SUCCESS)
		return r;
	v = lookup(dev, "busid");
	snprintf(buf, (size_t)len, "%s", v ? v : "0000:00:00.0");
	return SUCCESS;
}

static size_t bytes_fact(int dev, const char *key, size_t def)
{
	const char *v = lookup(dev, key);

	return v ? (size_t)strtoull(v, NULL, 10) : def;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	CUresult r = check_device(dev);

	if (r == SUCCESS)
		*bytes = bytes_fact(dev, "total", (size_t)16 << 30);
	return r;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
	CUresult r = check_device(dev);

	if (r == SUCCESS)
		r = scripted(dev, "context");
	if (r != SUCCESS)
		return r;
	retained[dev]++;
	*ctx = (CUcontext)(uintptr_t)(dev + 1);
	account();
	return SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	CUresult r = check_device(dev);

	if (r != SUCCESS)
		return r;
	if (retained[dev] == 0)
		return INVALID_CONTEXT;
	retained[dev]--;
	if (current == dev && retained[dev] == 0)
		current = -1;
	account();
	return scripted(dev, "release");
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	int dev = (int)(uintptr_t)ctx - 1;

	if (!initialised)
		return NOT_INITIALIZED;
	if (ctx == NULL) {
		current = -1;
		return SUCCESS;
	}
	if (dev < 0 || dev >= MAX_DEVICES || retained[dev] == 0)
		return INVALID_CONTEXT;
	current = dev;
	return SUCCESS;
}

/* in_context returns the current device, or -1 with *r set. */
static int in_context(CUresult *r)
{
	*r = !initialised ? NOT_INITIALIZED : current < 0 ? INVALID_CONTEXT : SUCCESS;
	return *r == SUCCESS ? current : -1;
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
	CUresult r;
	int dev = in_context(&r);

	if (dev < 0)
		return r;
	if ((r = scripted(dev, "memory")) != SUCCESS)
		return r;
	*total_bytes = bytes_fact(dev, "total", (size_t)16 << 30);
	*free_bytes = bytes_fact(dev, "free", *total_bytes - ((size_t)300 << 20));
	return SUCCESS;
}

CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned int n, int *opts, void **vals)
{
	CUresult r;
	int dev = in_context(&r);
	struct module *m;

	if (dev < 0)
		return r;
	if (image == NULL || strstr((const char *)image, ".version") == NULL)
		return INVALID_IMAGE;
	if ((r = scripted(dev, "module")) != SUCCESS) {
		const char *log = lookup(dev, "jitlog");
		char *buf = NULL;
		size_t size = 0;

		for (unsigned int i = 0; i < n; i++) {
			if (opts[i] == PF_JIT_ERROR_LOG_BUFFER)
				buf = vals[i];
			if (opts[i] == PF_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
				size = (size_t)vals[i];
		}
		if (buf != NULL && size > 0 && log != NULL)
			snprintf(buf, size, "%s", log);
		return r;
	}
	m = calloc(1, sizeof *m);
	m->ptx = strdup(image);
	modules++;
	account();
	*mod = (CUmodule)m;
	return SUCCESS;
}

/* fatbin_fits walks a fatbin container (magic, version, header size, fat
 * size; then entries: kind u16, version u16, header size u32, payload size
 * u64, ..., arch u32 at 0x1C) and reports whether one entry runs on cc. */
static int fatbin_fits(const unsigned char *p, int major, int minor)
{
	uint16_t hsize;
	uint64_t fat, pos;

	if (*(const uint32_t *)p != 0xBA55ED50u)
		return -1;
	hsize = *(const uint16_t *)(p + 6);
	fat = *(const uint64_t *)(p + 8);
	for (pos = hsize; pos + 64 <= hsize + fat;) {
		const unsigned char *e = p + pos;
		uint16_t kind = *(const uint16_t *)e;
		uint32_t ehsize = *(const uint32_t *)(e + 4);
		uint64_t payload = *(const uint64_t *)(e + 8);
		uint32_t arch = *(const uint32_t *)(e + 0x1C);

		if (ehsize < 64)
			return 0;
		if ((kind == 2 || kind == 0x10) && (int)arch / 10 == major && (int)arch % 10 <= minor)
			return 1;
		if (kind == 1 && (int)arch <= major * 10 + minor)
			return 1;
		pos += ehsize + payload;
	}
	return 0;
}

CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
	CUresult r;
	int dev = in_context(&r), major = 8, minor = 0, fits;
	const char *v;
	struct module *m;

	if (dev < 0)
		return r;
	if (image == NULL)
		return INVALID_VALUE;
	if ((v = lookup(dev, "cc")) != NULL)
		sscanf(v, "%d %d", &major, &minor);
	fits = fatbin_fits(image, major, minor);
	if (fits < 0)
		return INVALID_IMAGE;
	if ((v = lookup(dev, "fatbin")) != NULL)
		r = (CUresult)atoi(v);
	else if (!fits)
		r = NO_BINARY_FOR_GPU;
	if (r != SUCCESS)
		return r;
	m = calloc(1, sizeof *m);
	modules++;
	account();
	*mod = (CUmodule)m;
	return SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *fn, CUmodule mod, const char *name)
{
	struct module *m = (struct module *)mod;
	char entry[256];

	if (m == NULL || m->ptx == NULL)
		return INVALID_HANDLE;
	snprintf(entry, sizeof entry, ".entry %s(", name);
	if (strstr(m->ptx, entry) == NULL)
		return NOT_FOUND;
	*fn = (CUfunction)m;
	return SUCCESS;
}

CUresult cuModuleUnload(CUmodule mod)
{
	struct module *m = (struct module *)mod;

	if (m == NULL)
		return INVALID_HANDLE;
	free(m->ptx);
	free(m);
	modules--;
	account();
	return SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes)
{
	CUresult r;
	int dev = in_context(&r);
	void *p;

	if (dev < 0)
		return r;
	if ((r = scripted(dev, "alloc")) != SUCCESS)
		return r;
	p = calloc(1, bytes);
	allocations++;
	account();
	*ptr = (CUdeviceptr)(uintptr_t)p;
	return SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr ptr)
{
	if (ptr == 0)
		return INVALID_VALUE;
	free((void *)(uintptr_t)ptr);
	allocations--;
	account();
	return SUCCESS;
}

/* The launch runs at once; a scripted launch failure is reported by
 * cuCtxSynchronize, as the driver reports a kernel's faults. */
static CUresult pending;

CUresult cuLaunchKernel(CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
			unsigned int by, unsigned int bz, unsigned int shared, CUstream stream, void **params,
			void **extra)
{
	CUresult r;
	int dev = in_context(&r);
	CUdeviceptr out;
	unsigned int value;

	(void)stream;
	(void)extra;
	if (dev < 0)
		return r;
	if (fn == NULL || params == NULL || gx * gy * gz * bx * by * bz != 1 || shared != 0)
		return INVALID_VALUE;
	if ((pending = scripted(dev, "launch")) != SUCCESS)
		return SUCCESS;
	out = *(CUdeviceptr *)params[0];
	value = *(unsigned int *)params[1];
	if (lookup(dev, "value") != NULL)
		value = ~value;
	*(unsigned int *)(uintptr_t)out = value;
	return SUCCESS;
}

CUresult cuCtxSynchronize(void)
{
	CUresult r;
	int dev = in_context(&r);

	if (dev < 0)
		return r;
	r = pending;
	pending = SUCCESS;
	return r;
}

CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
	CUresult r;
	int dev = in_context(&r);

	if (dev < 0)
		return r;
	if ((r = scripted(dev, "copy")) != SUCCESS)
		return r;
	memcpy(dst, (void *)(uintptr_t)src, bytes);
	return SUCCESS;
}
