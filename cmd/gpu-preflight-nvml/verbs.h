/*
 * The libibverbs entry points the RDMA active tier calls, declared here from
 * rdma-core's libibverbs/verbs.h (docs/transport.md) rather than included:
 * the probe builds without rdma-core's headers, and the prototypes below are
 * exactly those it resolves. Each is taken with dlvsym at IBVERBS_1.1, as
 * NCCL takes them (src/misc/ibvsymbols.cc): verbs.h's inline
 * ___ibv_query_port and __ibv_reg_mr end in these exported symbols.
 */
#ifndef GPU_PREFLIGHT_VERBS_H
#define GPU_PREFLIGHT_VERBS_H

#include <stddef.h>
#include <stdint.h>

#define PV_VERBS_VERSION "IBVERBS_1.1"

struct ibv_device;
struct ibv_context;
struct ibv_pd;
struct ibv_mr;

/* verbs.h's struct ibv_port_attr; the enums are ints. */
struct ibv_port_attr {
	int state;
	int max_mtu;
	int active_mtu;
	int gid_tbl_len;
	uint32_t port_cap_flags;
	uint32_t max_msg_sz;
	uint32_t bad_pkey_cntr;
	uint32_t qkey_viol_cntr;
	uint16_t pkey_tbl_len;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t max_vl_num;
	uint8_t sm_sl;
	uint8_t subnet_timeout;
	uint8_t init_type_reply;
	uint8_t active_width;
	uint8_t active_speed;
	uint8_t phys_state;
	uint8_t link_layer;
	uint8_t flags;
	uint16_t port_cap_flags2;
};

/* enum ibv_access_flags: what NCCL registers its buffers with. */
#define PV_ACCESS_LOCAL_WRITE 1
#define PV_ACCESS_REMOTE_WRITE (1 << 1)
#define PV_ACCESS_REMOTE_READ (1 << 2)

struct ibv_device **ibv_get_device_list(int *num_devices);
void ibv_free_device_list(struct ibv_device **list);
const char *ibv_get_device_name(struct ibv_device *device);
struct ibv_context *ibv_open_device(struct ibv_device *device);
int ibv_close_device(struct ibv_context *context);
int ibv_query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr);
struct ibv_pd *ibv_alloc_pd(struct ibv_context *context);
int ibv_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access);
int ibv_dereg_mr(struct ibv_mr *mr);

/* pv_open's answers. */
#define PV_OPEN_OK 0
#define PV_OPEN_NOT_LOADED 1
#define PV_OPEN_SYMBOL_MISSING 2

int pv_open(const char *path, char *err, size_t errlen);
struct ibv_device **pv_get_device_list(int *num);
void pv_free_device_list(struct ibv_device **list);
const char *pv_device_name(struct ibv_device **list, int i);
struct ibv_context *pv_open_device(struct ibv_device **list, int i);
int pv_close_device(struct ibv_context *ctx);
int pv_query_port(struct ibv_context *ctx, int port, int *state, int *link_layer);
struct ibv_pd *pv_alloc_pd(struct ibv_context *ctx);
int pv_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *pv_reg_mr(struct ibv_pd *pd, void *buf, size_t len);
int pv_dereg_mr(struct ibv_mr *mr);

#endif
