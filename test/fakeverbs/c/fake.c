/*
 * A fake libibverbs.so.1 for gpu-preflight's tests, compiled by the tests
 * from the probe's own declarations (cmd/gpu-preflight-nvml/verbs.h). It
 * defines exactly the entry points the RDMA active tier resolves, at
 * IBVERBS_1.1 as the real library exports them (version.map), and answers
 * from the scenario file FAKE_VERBS_SCENARIO names:
 *
 *   init ok | <ERRNO>        ibv_get_device_list: the list, or NULL and errno
 *   <i> name mlx5_0          device i's name
 *   <i> open ok|<ERRNO>|hang ibv_open_device
 *   <i> port <state> <layer> ibv_query_port on every port (enum values)
 *   <i> pd ok|<ERRNO>        ibv_alloc_pd
 *   <i> reg ok|<ERRNO>|hang  ibv_reg_mr
 *   ledger <path>            after every call that takes or gives back a
 *                            context, protection domain or memory region,
 *                            rewrite <path> with how many are held
 *
 * ERRNO is a name: EPERM ENOENT ENXIO ENOMEM EINVAL ENOSYS EFAULT. As
 * libibverbs does, a failing call returns NULL with errno set, or returns
 * the errno value. When FAKE_VERBS_LOADED names a file, loading the
 * library appends a line to it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenario.h"
#include "verbs.h"

#define MAX_DEVICES 64

struct ibv_device {
	int index;
};
struct ibv_context {
	int index;
};
struct ibv_pd {
	int index;
};
struct ibv_mr {
	int index;
};

static struct ibv_device devices[MAX_DEVICES];
static struct ibv_device *list[MAX_DEVICES + 1];
static int held;

__attribute__((constructor)) static void loaded(void)
{
	const char *p = getenv("FAKE_VERBS_LOADED");
	FILE *f;

	if (p != NULL && *p != '\0' && (f = fopen(p, "a")) != NULL) {
		fprintf(f, "loaded\n");
		fclose(f);
	}
}

static const char *lookup(int dev, const char *key) { return scenario_lookup(dev, key); }

static void ledger(int change)
{
	const char *p = lookup(-1, "ledger");
	FILE *f;

	held += change;
	if (p != NULL && (f = fopen(p, "w")) != NULL) {
		fprintf(f, "%d\n", held);
		fclose(f);
	}
}

static int errno_of(const char *name)
{
	static const struct {
		const char *name;
		int value;
	} names[] = {{"EPERM", EPERM}, {"ENOENT", ENOENT}, {"ENXIO", ENXIO}, {"ENOMEM", ENOMEM},
		     {"EINVAL", EINVAL}, {"ENOSYS", ENOSYS}, {"EFAULT", EFAULT}};

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(name, names[i].name) == 0)
			return names[i].value;
	return EIO;
}

/* answer reads key of device i: 0 to go on, else the errno to fail with;
 * "hang" never returns. */
static int answer(int i, const char *key)
{
	const char *v = lookup(i, key);

	if (v == NULL || strcmp(v, "ok") == 0)
		return 0;
	if (strcmp(v, "hang") == 0)
		for (;;)
			pause();
	return errno_of(v);
}

struct ibv_device **ibv_get_device_list(int *num_devices)
{
	int n = 0, e;

	if (scenario_load("FAKE_VERBS_SCENARIO", "fake libibverbs") != 0) {
		errno = EIO;
		return NULL;
	}
	if ((e = answer(-1, "init")) != 0) {
		errno = e;
		return NULL;
	}
	while (n < MAX_DEVICES && lookup(n, "name") != NULL) {
		devices[n].index = n;
		list[n] = &devices[n];
		n++;
	}
	list[n] = NULL;
	ledger(0);
	if (num_devices != NULL)
		*num_devices = n;
	return list;
}

void ibv_free_device_list(struct ibv_device **l) { (void)l; }

const char *ibv_get_device_name(struct ibv_device *device) { return lookup(device->index, "name"); }

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct ibv_context *ctx;
	int e = answer(device->index, "open");

	if (e != 0) {
		errno = e;
		return NULL;
	}
	ctx = malloc(sizeof *ctx);
	ctx->index = device->index;
	ledger(1);
	return ctx;
}

int ibv_close_device(struct ibv_context *context)
{
	free(context);
	ledger(-1);
	return 0;
}

int ibv_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr)
{
	const char *v = lookup(context->index, "port");
	int state = 4, layer = 1;

	if (port_num == 0)
		return EINVAL;
	if (v != NULL && sscanf(v, "%d %d", &state, &layer) != 2)
		return EINVAL;
	port_attr->state = state;
	port_attr->link_layer = (uint8_t)layer;
	return 0;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct ibv_pd *pd;
	int e = answer(context->index, "pd");

	if (e != 0) {
		errno = e;
		return NULL;
	}
	pd = malloc(sizeof *pd);
	pd->index = context->index;
	ledger(1);
	return pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	free(pd);
	ledger(-1);
	return 0;
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	struct ibv_mr *mr;
	int want = PV_ACCESS_LOCAL_WRITE | PV_ACCESS_REMOTE_WRITE | PV_ACCESS_REMOTE_READ;
	int e = answer(pd->index, "reg");

	if (addr == NULL || length != 1 << 20 || access != want)
		e = EINVAL;
	if (e != 0) {
		errno = e;
		return NULL;
	}
	/* Touch every page: the real registration pins them. */
	memset(addr, 0x5a, length);
	mr = malloc(sizeof *mr);
	mr->index = pd->index;
	ledger(1);
	return mr;
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	free(mr);
	ledger(-1);
	return 0;
}
