/*
 * Thin calls into libcuda.so.1 through pointers resolved with dlsym, so the
 * probe links against nothing from NVIDIA and loads the library the way a
 * training process does: dlopen by soname, through the process's own
 * LD_LIBRARY_PATH and ld.so.cache (an image that puts
 * /usr/local/cuda/compat first gets its forward-compatibility libcuda).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "cudadrv.h"

static void *lib;

static CUresult (*p_cuInit)(unsigned int);
static CUresult (*p_cuDriverGetVersion)(int *);
static CUresult (*p_cuGetErrorName)(CUresult, const char **);
static CUresult (*p_cuGetErrorString)(CUresult, const char **);
static CUresult (*p_cuDeviceGetCount)(int *);
static CUresult (*p_cuDeviceGet)(CUdevice *, int);
static CUresult (*p_cuDeviceGetName)(char *, int, CUdevice);
static CUresult (*p_cuDeviceGetAttribute)(int *, int, CUdevice);
static CUresult (*p_cuDeviceGetUuid_v2)(CUuuid *, CUdevice);
static CUresult (*p_cuDeviceGetPCIBusId)(char *, int, CUdevice);
static CUresult (*p_cuDeviceTotalMem_v2)(size_t *, CUdevice);
static CUresult (*p_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*p_cuDevicePrimaryCtxRelease_v2)(CUdevice);
static CUresult (*p_cuCtxSetCurrent)(CUcontext);
static CUresult (*p_cuCtxSynchronize)(void);
static CUresult (*p_cuMemGetInfo_v2)(size_t *, size_t *);
static CUresult (*p_cuModuleLoadDataEx)(CUmodule *, const void *, unsigned int, int *, void **);
static CUresult (*p_cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*p_cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*p_cuModuleUnload)(CUmodule);
static CUresult (*p_cuMemAlloc_v2)(CUdeviceptr *, size_t);
static CUresult (*p_cuMemFree_v2)(CUdeviceptr);
static CUresult (*p_cuLaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
				    unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
static CUresult (*p_cuMemcpyDtoH_v2)(void *, CUdeviceptr, size_t);

#define SYM(name) {#name, (void **)&p_##name}

static const struct {
	const char *name;
	void **slot;
} symbols[] = {
	SYM(cuInit),
	SYM(cuDriverGetVersion),
	SYM(cuGetErrorName),
	SYM(cuGetErrorString),
	SYM(cuDeviceGetCount),
	SYM(cuDeviceGet),
	SYM(cuDeviceGetName),
	SYM(cuDeviceGetAttribute),
	SYM(cuDeviceGetUuid_v2),
	SYM(cuDeviceGetPCIBusId),
	SYM(cuDeviceTotalMem_v2),
	SYM(cuDevicePrimaryCtxRetain),
	SYM(cuDevicePrimaryCtxRelease_v2),
	SYM(cuCtxSetCurrent),
	SYM(cuCtxSynchronize),
	SYM(cuMemGetInfo_v2),
	SYM(cuModuleLoadDataEx),
	SYM(cuModuleLoadData),
	SYM(cuModuleGetFunction),
	SYM(cuModuleUnload),
	SYM(cuMemAlloc_v2),
	SYM(cuMemFree_v2),
	SYM(cuLaunchKernel),
	SYM(cuMemcpyDtoH_v2),
};

int pf_open(const char *soname, char *err, size_t errlen)
{
	const char *e;

	/* RTLD_NOW: a library that cannot resolve its own dependencies fails
	 * here, with dlerror's reason, not at the first call. */
	lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "dlopen failed");
		return PF_OPEN_NOT_LOADED;
	}
	for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
		*symbols[i].slot = dlsym(lib, symbols[i].name);
		if (*symbols[i].slot == NULL) {
			snprintf(err, errlen, "%s has no symbol %s", soname, symbols[i].name);
			return PF_OPEN_SYMBOL_MISSING;
		}
	}
	return PF_OPEN_OK;
}

int pf_loaded_path(char *buf, size_t len)
{
	struct link_map *map = NULL;

	if (lib == NULL || dlinfo(lib, RTLD_DI_LINKMAP, &map) != 0 || map == NULL || map->l_name == NULL)
		return -1;
	snprintf(buf, len, "%s", map->l_name);
	return 0;
}

const char *pf_error_name(CUresult r)
{
	const char *s = NULL;

	return p_cuGetErrorName(r, &s) == 0 ? s : NULL;
}

const char *pf_error_string(CUresult r)
{
	const char *s = NULL;

	return p_cuGetErrorString(r, &s) == 0 ? s : NULL;
}

CUresult pf_init(void) { return p_cuInit(0); }
CUresult pf_driver_version(int *version) { return p_cuDriverGetVersion(version); }
CUresult pf_device_count(int *count) { return p_cuDeviceGetCount(count); }
CUresult pf_device_get(int ordinal, CUdevice *dev) { return p_cuDeviceGet(dev, ordinal); }
CUresult pf_device_name(CUdevice dev, char *buf, int len) { return p_cuDeviceGetName(buf, len, dev); }
CUresult pf_device_attribute(CUdevice dev, int attr, int *value) { return p_cuDeviceGetAttribute(value, attr, dev); }

CUresult pf_device_uuid(CUdevice dev, unsigned char *out16)
{
	CUuuid u;
	CUresult r = p_cuDeviceGetUuid_v2(&u, dev);

	if (r == 0)
		memcpy(out16, u.bytes, 16);
	return r;
}

CUresult pf_device_pci_bus_id(CUdevice dev, char *buf, int len) { return p_cuDeviceGetPCIBusId(buf, len, dev); }
CUresult pf_device_total_mem(CUdevice dev, size_t *bytes) { return p_cuDeviceTotalMem_v2(bytes, dev); }
CUresult pf_primary_ctx_retain(CUdevice dev, CUcontext *ctx) { return p_cuDevicePrimaryCtxRetain(ctx, dev); }
CUresult pf_ctx_set_current(CUcontext ctx) { return p_cuCtxSetCurrent(ctx); }
CUresult pf_primary_ctx_release(CUdevice dev) { return p_cuDevicePrimaryCtxRelease_v2(dev); }
CUresult pf_mem_get_info(size_t *free_bytes, size_t *total_bytes) { return p_cuMemGetInfo_v2(free_bytes, total_bytes); }

CUresult pf_module_load_ptx(CUmodule *mod, const char *ptx, char *log, unsigned int loglen)
{
	int opts[] = {PF_JIT_ERROR_LOG_BUFFER, PF_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *vals[] = {log, (void *)(size_t)loglen};

	if (loglen > 0)
		log[0] = '\0';
	return p_cuModuleLoadDataEx(mod, ptx, 2, opts, vals);
}

CUresult pf_module_load_data(CUmodule *mod, const void *image) { return p_cuModuleLoadData(mod, image); }
CUresult pf_module_get_function(CUfunction *fn, CUmodule mod, const char *name) { return p_cuModuleGetFunction(fn, mod, name); }
CUresult pf_module_unload(CUmodule mod) { return p_cuModuleUnload(mod); }
CUresult pf_mem_alloc(CUdeviceptr *ptr, size_t bytes) { return p_cuMemAlloc_v2(ptr, bytes); }
CUresult pf_mem_free(CUdeviceptr ptr) { return p_cuMemFree_v2(ptr); }

/* One thread in one block: the kernel stores value at out. */
CUresult pf_launch_write(CUfunction fn, CUdeviceptr out, unsigned int value)
{
	void *params[] = {&out, &value};

	return p_cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
}

CUresult pf_ctx_synchronize(void) { return p_cuCtxSynchronize(); }
CUresult pf_memcpy_dtoh(void *dst, CUdeviceptr src, size_t bytes) { return p_cuMemcpyDtoH_v2(dst, src, bytes); }
