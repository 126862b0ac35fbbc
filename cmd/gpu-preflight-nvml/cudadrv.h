/*
 * The CUDA driver API entry points the CUDA smoke test calls, declared here
 * rather than taken from NVIDIA's cuda.h: the probe builds without a CUDA
 * toolkit, and the list below is exactly what it loads with dlsym. The types
 * and values are those of the CUDA Driver API reference (docs/cuda.md gives
 * the sources); where cuda.h maps a name to a versioned symbol (#define
 * cuMemGetInfo cuMemGetInfo_v2), the versioned name is the one resolved, as
 * a program compiled against cuda.h would call it (`nm -D libcuda.so.1` of
 * the 535 driver lists both; the unversioned ones keep the 32-bit ABI).
 */
#ifndef GPU_PREFLIGHT_CUDADRV_H
#define GPU_PREFLIGHT_CUDADRV_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct {
	unsigned char bytes[16];
} CUuuid;

/* CUdevice_attribute values. */
#define PF_ATTR_COMPUTE_MODE 20
#define PF_ATTR_CC_MAJOR 75
#define PF_ATTR_CC_MINOR 76

/* CUjit_option values. */
#define PF_JIT_ERROR_LOG_BUFFER 5
#define PF_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

/* pf_open's answers. */
#define PF_OPEN_OK 0
#define PF_OPEN_NOT_LOADED 1
#define PF_OPEN_SYMBOL_MISSING 2

int pf_open(const char *soname, char *err, size_t errlen);
int pf_loaded_path(char *buf, size_t len);
const char *pf_error_name(CUresult r);
const char *pf_error_string(CUresult r);

CUresult pf_init(void);
CUresult pf_driver_version(int *version);
CUresult pf_device_count(int *count);
CUresult pf_device_get(int ordinal, CUdevice *dev);
CUresult pf_device_name(CUdevice dev, char *buf, int len);
CUresult pf_device_attribute(CUdevice dev, int attr, int *value);
CUresult pf_device_uuid(CUdevice dev, unsigned char *out16);
CUresult pf_device_pci_bus_id(CUdevice dev, char *buf, int len);
CUresult pf_device_total_mem(CUdevice dev, size_t *bytes);

CUresult pf_primary_ctx_retain(CUdevice dev, CUcontext *ctx);
CUresult pf_ctx_set_current(CUcontext ctx);
CUresult pf_primary_ctx_release(CUdevice dev);
CUresult pf_mem_get_info(size_t *free_bytes, size_t *total_bytes);

CUresult pf_module_load_ptx(CUmodule *mod, const char *ptx, char *log, unsigned int loglen);
CUresult pf_module_load_data(CUmodule *mod, const void *image);
CUresult pf_module_get_function(CUfunction *fn, CUmodule mod, const char *name);
CUresult pf_module_unload(CUmodule mod);
CUresult pf_mem_alloc(CUdeviceptr *ptr, size_t bytes);
CUresult pf_mem_free(CUdeviceptr ptr);
CUresult pf_launch_write(CUfunction fn, CUdeviceptr out, unsigned int value);
CUresult pf_ctx_synchronize(void);
CUresult pf_memcpy_dtoh(void *dst, CUdeviceptr src, size_t bytes);

#endif
