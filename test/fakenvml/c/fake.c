/*
 * A fake libnvidia-ml.so.1 for gpu-preflight's tests, compiled by the tests
 * against go-nvml's own nvml.h (so every type matches what the probe was
 * built with). The functions here answer from a scenario file named by
 * FAKE_NVML_SCENARIO; every other entry point the header declares is a
 * generated stub returning NVML_ERROR_NOT_SUPPORTED (stubs.c, written by
 * the Go generator in this directory, which skips the names defined here).
 *
 * Scenario file: one fact per line, "#" comments.
 *   init ok | hang | <code>     nvmlInit's answer; hang never returns
 *   driver 550.54.15            system facts: driver, nvml, cuda, cuda_v2, count
 *   <i> <key> <value...>        GPU i: name uuid busid brand cc arch memory
 *                               mig persistence ecc retired minor migmax migdevices
 * A value "!<code>" makes that call fail with NVML return code <code>; a
 * fact that is not in the file makes its call return NOT_SUPPORTED.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvml.h"
#include "scenario.h"

static int initialised;

static int load(void) { return scenario_load("FAKE_NVML_SCENARIO", "fake libnvidia-ml"); }

static const char *lookup(int gpu, const char *key) { return scenario_lookup(gpu, key); }

/* answer finds a fact; it returns SUCCESS with *value set, or the scripted
 * error, or NOT_SUPPORTED when the scenario does not script the fact. */
static nvmlReturn_t answer(int gpu, const char *key, const char **value)
{
	const char *v;

	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	v = lookup(gpu, key);
	if (v == NULL)
		return NVML_ERROR_NOT_SUPPORTED;
	if (v[0] == '!')
		return (nvmlReturn_t)atoi(v + 1);
	*value = v;
	return NVML_SUCCESS;
}

static nvmlReturn_t copy_string(const char *v, char *buf, unsigned int len)
{
	if (buf == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (strlen(v) + 1 > len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, v, strlen(v) + 1);
	return NVML_SUCCESS;
}

static int device_index(nvmlDevice_t device)
{
	return (int)(uintptr_t)device.handle - 1;
}

static nvmlReturn_t string_fact(int gpu, const char *key, char *buf, unsigned int len)
{
	const char *v;
	nvmlReturn_t r = answer(gpu, key, &v);

	return r == NVML_SUCCESS ? copy_string(v, buf, len) : r;
}

static nvmlReturn_t uint_fact(int gpu, const char *key, unsigned long long *out)
{
	const char *v;
	nvmlReturn_t r = answer(gpu, key, &v);

	if (r == NVML_SUCCESS)
		*out = strtoull(v, NULL, 10);
	return r;
}

/* NVML's own strings, as nvmlErrorString of Debian's libnvidia-ml1
 * 535.309.01 returns them (printed by calling it for codes 0..27). */
const char *nvmlErrorString(nvmlReturn_t result)
{
	static const char *const s[] = {
		"Success", "Uninitialized", "Invalid Argument", "Not Supported",
		"Insufficient Permissions", "Already Initialized", "Not Found",
		"Insufficient Size", "Insufficient External Power", "Driver Not Loaded",
		"Timeout", "Interrupt Request Issue", "NVML Shared Library Not Found",
		"Function Not Found", "Corrupted infoROM", "GPU is lost",
		"GPU requires reset", "GPU access blocked by the operating system",
		"Driver/library version mismatch", "In use by another client",
		"Insufficient Memory", "No data", "vGPU ECC not supported",
		"Insufficient Resources", "Invalid Frequency", "Argument version mismatch",
		"Requested functionality has been deprecated", "System is not in ready state",
	};
	if ((unsigned)result < sizeof s / sizeof s[0])
		return s[result];
	return "Unknown Error";
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	const char *v;

	(void)flags;
	if (load() != 0)
		return NVML_ERROR_UNKNOWN;
	v = lookup(-1, "init");
	if (v == NULL || strcmp(v, "ok") == 0) {
		initialised = 1;
		return NVML_SUCCESS;
	}
	if (strcmp(v, "hang") == 0)
		for (;;)
			pause();
	return (nvmlReturn_t)atoi(v);
}

nvmlReturn_t nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
nvmlReturn_t nvmlInit(void) { return nvmlInitWithFlags(0); }

nvmlReturn_t nvmlShutdown(void)
{
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	initialised = 0;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	return string_fact(-1, "driver", version, length);
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
	return string_fact(-1, "nvml", version, length);
}

static nvmlReturn_t cuda_version(const char *key, int *v)
{
	unsigned long long n;
	nvmlReturn_t r = uint_fact(-1, key, &n);

	if (r == NVML_SUCCESS)
		*v = (int)n;
	return r;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v) { return cuda_version("cuda", v); }
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return cuda_version("cuda_v2", v); }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	unsigned long long n;
	nvmlReturn_t r = uint_fact(-1, "count", &n);

	if (r == NVML_SUCCESS)
		*count = (unsigned int)n;
	return r;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *count) { return nvmlDeviceGetCount_v2(count); }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	unsigned int count;
	nvmlReturn_t r = nvmlDeviceGetCount_v2(&count);
	const char *v;

	if (r != NVML_SUCCESS)
		return r;
	if (index >= count)
		return NVML_ERROR_INVALID_ARGUMENT;
	v = lookup((int)index, "handle");
	if (v != NULL && v[0] == '!')
		return (nvmlReturn_t)atoi(v + 1);
	device->handle = (struct nvmlDevice_st *)(uintptr_t)(index + 1);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
	return nvmlDeviceGetHandleByIndex_v2(index, device);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	return string_fact(device_index(device), "name", name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	return string_fact(device_index(device), "uuid", uuid, length);
}

static nvmlReturn_t pci_info(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	const char *v;
	unsigned int domain = 0, bus = 0, dev = 0;
	nvmlReturn_t r = answer(device_index(device), "busid", &v);

	if (r != NVML_SUCCESS)
		return r;
	memset(pci, 0, sizeof *pci);
	snprintf(pci->busId, sizeof pci->busId, "%s", v);
	if (sscanf(v, "%x:%x:%x.", &domain, &bus, &dev) == 3) {
		pci->domain = domain;
		pci->bus = bus;
		pci->device = dev;
		snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT, domain, bus, dev);
	}
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci) { return pci_info(device, pci); }
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci) { return pci_info(device, pci); }
nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci) { return pci_info(device, pci); }

#define UINT_GETTER(fn, key, type)                                        \
	nvmlReturn_t fn(nvmlDevice_t device, type *out)                   \
	{                                                                 \
		unsigned long long n;                                     \
		nvmlReturn_t r = uint_fact(device_index(device), key, &n); \
		if (r == NVML_SUCCESS)                                    \
			*out = (type)n;                                   \
		return r;                                                 \
	}

UINT_GETTER(nvmlDeviceGetBrand, "brand", nvmlBrandType_t)
UINT_GETTER(nvmlDeviceGetArchitecture, "arch", nvmlDeviceArchitecture_t)
UINT_GETTER(nvmlDeviceGetPersistenceMode, "persistence", nvmlEnableState_t)
UINT_GETTER(nvmlDeviceGetRetiredPagesPendingStatus, "retired", nvmlEnableState_t)
UINT_GETTER(nvmlDeviceGetMinorNumber, "minor", unsigned int)
UINT_GETTER(nvmlDeviceGetMaxMigDeviceCount, "migmax", unsigned int)

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	*index = (unsigned int)device_index(device);
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
	const char *v;
	nvmlReturn_t r = answer(device_index(device), "cc", &v);

	if (r == NVML_SUCCESS && sscanf(v, "%d %d", major, minor) != 2)
		return NVML_ERROR_UNKNOWN;
	return r;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	unsigned long long total;
	nvmlReturn_t r = uint_fact(device_index(device), "memory", &total);

	if (r == NVML_SUCCESS) {
		memory->total = total;
		memory->free = total;
		memory->used = 0;
	}
	return r;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *current, unsigned int *pending)
{
	const char *v;
	nvmlReturn_t r = answer(device_index(device), "mig", &v);

	if (r == NVML_SUCCESS && sscanf(v, "%u %u", current, pending) != 2)
		return NVML_ERROR_UNKNOWN;
	return r;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t errorType,
					 nvmlEccCounterType_t counterType, unsigned long long *eccCounts)
{
	/* Only the volatile uncorrected total is scripted. */
	if (errorType != NVML_MEMORY_ERROR_TYPE_UNCORRECTED || counterType != NVML_VOLATILE_ECC)
		return NVML_ERROR_NOT_SUPPORTED;
	return uint_fact(device_index(device), "ecc", eccCounts);
}

/* MIG devices: slots 0..migdevices-1 hold one, the rest of migmax are empty. */
nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t *migDevice)
{
	unsigned long long present;
	int gpu = device_index(device);
	nvmlReturn_t r = uint_fact(gpu, "migdevices", &present);

	if (r != NVML_SUCCESS)
		return r;
	if (index >= present)
		return NVML_ERROR_NOT_FOUND;
	migDevice->handle = (struct nvmlDevice_st *)(uintptr_t)(0x10000 * (gpu + 1) + index);
	return NVML_SUCCESS;
}

/*
 * Health calls (docs/node-health.md), per GPU:
 *   remap <corr> <unc> <pending> <failed>    nvmlDeviceGetRemappedRows
 *   fabric <state> <status> <clique> <mask>  nvmlDeviceGetGpuFabricInfo(V); fabricuuid <32 hex digits>
 *   used <bytes>, reserved <bytes>           nvmlDeviceGetMemoryInfo_v2, with memory as the total
 *   procs <pid>:<bytes> ...                  nvmlDeviceGetComputeRunningProcesses, every version
 *   computemode <n>                          nvmlDeviceGetComputeMode
 *   nvlink <0|1> ...                         nvmlDeviceGetNvLinkState, one state per link
 *   pciegen, pciemaxgen, pciegpumaxgen <n>   nvmlDevice{Curr,Max,GpuMax}PcieLinkGeneration
 *   pciewidth, pciemaxwidth <n>              nvmlDevice{Curr,Max}PcieLinkWidth
 *   clocks <mask>                            nvmlDeviceGetCurrentClocks{Event,Throttle}Reasons
 */

/* field returns the n-th space-separated number of key's value. */
static nvmlReturn_t field(nvmlDevice_t device, const char *key, int n, unsigned long long *out)
{
	const char *v;
	char *end;
	nvmlReturn_t r = answer(device_index(device), key, &v);

	if (r != NVML_SUCCESS)
		return r;
	for (int i = 0;; i++) {
		unsigned long long x = strtoull(v, &end, 0);
		if (end == v)
			return NVML_ERROR_UNKNOWN;
		if (i == n) {
			*out = x;
			return NVML_SUCCESS;
		}
		v = end;
	}
}

nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned int *corrRows, unsigned int *uncRows,
				       unsigned int *isPending, unsigned int *failureOccurred)
{
	unsigned int *out[] = {corrRows, uncRows, isPending, failureOccurred};

	for (int i = 0; i < 4; i++) {
		unsigned long long x;
		nvmlReturn_t r = field(device, "remap", i, &x);
		if (r != NVML_SUCCESS)
			return r;
		*out[i] = (unsigned int)x;
	}
	return NVML_SUCCESS;
}

static nvmlReturn_t fabric(nvmlDevice_t device, unsigned char uuid[NVML_GPU_FABRIC_UUID_LEN], nvmlReturn_t *status,
			   unsigned int *clique, nvmlGpuFabricState_t *state, unsigned int *mask)
{
	unsigned long long x[4];
	const char *hex;

	for (int i = 0; i < 4; i++) {
		nvmlReturn_t r = field(device, "fabric", i, &x[i]);
		if (r != NVML_SUCCESS)
			return r;
	}
	*state = (nvmlGpuFabricState_t)x[0];
	*status = (nvmlReturn_t)x[1];
	*clique = (unsigned int)x[2];
	if (mask != NULL)
		*mask = (unsigned int)x[3];
	memset(uuid, 0, NVML_GPU_FABRIC_UUID_LEN);
	if (answer(device_index(device), "fabricuuid", &hex) == NVML_SUCCESS)
		for (int i = 0; i < NVML_GPU_FABRIC_UUID_LEN && sscanf(hex + 2 * i, "%2hhx", &uuid[i]) == 1; i++)
			;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *info)
{
	return fabric(device, info->clusterUuid, &info->status, &info->cliqueId, &info->state, NULL);
}

/* The versioned call fills the structure its version field names. */
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device, nvmlGpuFabricInfoV_t *info)
{
	if (info->version == nvmlGpuFabricInfo_v2) {
		nvmlGpuFabricInfo_v2_t *v2 = (nvmlGpuFabricInfo_v2_t *)info;
		return fabric(device, v2->clusterUuid, &v2->status, &v2->cliqueId, &v2->state, &v2->healthMask);
	}
	if (info->version == nvmlGpuFabricInfo_v3)
		return fabric(device, info->clusterUuid, &info->status, &info->cliqueId, &info->state, &info->healthMask);
	return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
	unsigned long long total, used, reserved;
	nvmlReturn_t r;

	if (memory->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if ((r = uint_fact(device_index(device), "memory", &total)) != NVML_SUCCESS ||
	    (r = uint_fact(device_index(device), "used", &used)) != NVML_SUCCESS ||
	    (r = uint_fact(device_index(device), "reserved", &reserved)) != NVML_SUCCESS)
		return r;
	memory->total = total;
	memory->used = used;
	memory->reserved = reserved;
	memory->free = total - used - reserved;
	return NVML_SUCCESS;
}

/* processes fills at most *count entries through put, as NVML does: more
 * processes than room is INSUFFICIENT_SIZE with the count needed. */
static nvmlReturn_t processes(nvmlDevice_t device, unsigned int *count, void (*put)(void *, unsigned int, unsigned int, unsigned long long),
			      void *infos)
{
	const char *v;
	unsigned int n = 0, pid;
	unsigned long long bytes;
	int used;
	nvmlReturn_t r = answer(device_index(device), "procs", &v);

	if (r == NVML_ERROR_NOT_SUPPORTED) {
		*count = 0;
		return NVML_SUCCESS;
	}
	if (r != NVML_SUCCESS)
		return r;
	for (const char *p = v; sscanf(p, "%u:%llu%n", &pid, &bytes, &used) == 2; p += used, n++)
		if (n < *count)
			put(infos, n, pid, bytes);
	r = n > *count ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
	*count = n;
	return r;
}

static void put_v1(void *infos, unsigned int i, unsigned int pid, unsigned long long bytes)
{
	((nvmlProcessInfo_v1_t *)infos)[i] = (nvmlProcessInfo_v1_t){.pid = pid, .usedGpuMemory = bytes};
}

static void put_v2(void *infos, unsigned int i, unsigned int pid, unsigned long long bytes)
{
	((nvmlProcessInfo_t *)infos)[i] = (nvmlProcessInfo_t){
		.pid = pid, .usedGpuMemory = bytes, .gpuInstanceId = 0xFFFFFFFF, .computeInstanceId = 0xFFFFFFFF};
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v1_t *infos)
{
	return processes(device, infoCount, put_v1, infos);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_v2_t *infos)
{
	return processes(device, infoCount, put_v2, infos);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount, nvmlProcessInfo_t *infos)
{
	return processes(device, infoCount, put_v2, infos);
}

UINT_GETTER(nvmlDeviceGetComputeMode, "computemode", nvmlComputeMode_t)
UINT_GETTER(nvmlDeviceGetCurrentClocksEventReasons, "clocks", unsigned long long)
UINT_GETTER(nvmlDeviceGetCurrentClocksThrottleReasons, "clocks", unsigned long long)

/* Links past the scenario's list are invalid, as past a GPU's last link. */
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t *isActive)
{
	const char *v;
	nvmlReturn_t r = answer(device_index(device), "nvlink", &v);
	unsigned long long state;

	if (r != NVML_SUCCESS)
		return r;
	if (field(device, "nvlink", (int)link, &state) != NVML_SUCCESS)
		return NVML_ERROR_INVALID_ARGUMENT;
	*isActive = state ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
	return NVML_SUCCESS;
}

UINT_GETTER(nvmlDeviceGetCurrPcieLinkGeneration, "pciegen", unsigned int)
UINT_GETTER(nvmlDeviceGetMaxPcieLinkGeneration, "pciemaxgen", unsigned int)
UINT_GETTER(nvmlDeviceGetGpuMaxPcieLinkGeneration, "pciegpumaxgen", unsigned int)
UINT_GETTER(nvmlDeviceGetCurrPcieLinkWidth, "pciewidth", unsigned int)
UINT_GETTER(nvmlDeviceGetMaxPcieLinkWidth, "pciemaxwidth", unsigned int)
