/*
 * Thin calls into the image's libibverbs through pointers resolved with
 * dlvsym, so the probe links against nothing from rdma-core and runs the
 * library, and the providers it loads, that NCCL would.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "verbs.h"

static __typeof__(ibv_get_device_list) *p_get_device_list;
static __typeof__(ibv_free_device_list) *p_free_device_list;
static __typeof__(ibv_get_device_name) *p_get_device_name;
static __typeof__(ibv_open_device) *p_open_device;
static __typeof__(ibv_close_device) *p_close_device;
static __typeof__(ibv_query_port) *p_query_port;
static __typeof__(ibv_alloc_pd) *p_alloc_pd;
static __typeof__(ibv_dealloc_pd) *p_dealloc_pd;
static __typeof__(ibv_reg_mr) *p_reg_mr;
static __typeof__(ibv_dereg_mr) *p_dereg_mr;

#define VSYM(name) {"ibv_" #name, (void **)&p_##name}

static const struct {
	const char *name;
	void **slot;
} symbols[] = {
	VSYM(get_device_list),
	VSYM(free_device_list),
	VSYM(get_device_name),
	VSYM(open_device),
	VSYM(close_device),
	VSYM(query_port),
	VSYM(alloc_pd),
	VSYM(dealloc_pd),
	VSYM(reg_mr),
	VSYM(dereg_mr),
};

int pv_open(const char *path, char *err, size_t errlen)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	const char *e;

	if (lib == NULL) {
		e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "dlopen failed");
		return PV_OPEN_NOT_LOADED;
	}
	for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
		*symbols[i].slot = dlvsym(lib, symbols[i].name, PV_VERBS_VERSION);
		if (*symbols[i].slot == NULL) {
			snprintf(err, errlen, "%s has no symbol %s@%s", path, symbols[i].name, PV_VERBS_VERSION);
			return PV_OPEN_SYMBOL_MISSING;
		}
	}
	return PV_OPEN_OK;
}

struct ibv_device **pv_get_device_list(int *num) { return p_get_device_list(num); }
void pv_free_device_list(struct ibv_device **list) { p_free_device_list(list); }
const char *pv_device_name(struct ibv_device **list, int i) { return p_get_device_name(list[i]); }
struct ibv_context *pv_open_device(struct ibv_device **list, int i) { return p_open_device(list[i]); }
int pv_close_device(struct ibv_context *ctx) { return p_close_device(ctx); }

int pv_query_port(struct ibv_context *ctx, int port, int *state, int *link_layer)
{
	struct ibv_port_attr attr;
	int r;

	memset(&attr, 0, sizeof attr);
	r = p_query_port(ctx, (uint8_t)port, &attr);
	*state = attr.state;
	*link_layer = attr.link_layer;
	return r;
}

struct ibv_pd *pv_alloc_pd(struct ibv_context *ctx) { return p_alloc_pd(ctx); }
int pv_dealloc_pd(struct ibv_pd *pd) { return p_dealloc_pd(pd); }

struct ibv_mr *pv_reg_mr(struct ibv_pd *pd, void *buf, size_t len)
{
	return p_reg_mr(pd, buf, len, PV_ACCESS_LOCAL_WRITE | PV_ACCESS_REMOTE_WRITE | PV_ACCESS_REMOTE_READ);
}

int pv_dereg_mr(struct ibv_mr *mr) { return p_dereg_mr(mr); }
