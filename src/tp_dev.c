/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Device and QP bring-up, steps 1 and 2 of the classic UD recipe: query
 * the device and port (the configured device, or the first with an
 * ACTIVE port that can do UD), choose the source GID and the P_Key index
 * (the configured pkey's), then PD -> send and
 * receive pools in registered memory -> a send CQ (polled by senders) and
 * a receive CQ on a completion channel -> UD QP RESET -> INIT -> RTR ->
 * RTS.  Main thread only (tp_open, tp_close).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/random.h>

#include "log.h"
#include "tp_int.h"
#include "util.h"

/* Names for ibv_port_state in error messages. */
static const char *const tp_dev_port_states[] = {
	[IBV_PORT_NOP] = "NOP",	      [IBV_PORT_DOWN] = "DOWN",
	[IBV_PORT_INIT] = "INIT",     [IBV_PORT_ARMED] = "ARMED",
	[IBV_PORT_ACTIVE] = "ACTIVE", [IBV_PORT_ACTIVE_DEFER] = "ACTIVE_DEFER",
};

/* The port state as a word, for "port 1 of rxe0 is DOWN". */
static const char *tp_dev_port_state(enum ibv_port_state s)
{
	if ((unsigned)s < ARRAY_SIZE(tp_dev_port_states) &&
	    tp_dev_port_states[s])
		return tp_dev_port_states[s];
	return "unknown";
}

/*
 * The type of GID i: ibv_query_gid_ex where the kernel supports it, else
 * the sysfs file that older kernels provide.  -errno for an empty entry.
 */
static int tp_dev_gid_type(struct ibv_context *ctx, int port, int i,
			   union ibv_gid *gid, uint32_t *type)
{
	struct ibv_gid_entry e;
	char path[256], buf[64];
	FILE *f;

	if (!ibv_query_gid_ex(ctx, port, i, &e, 0)) {
		*gid = e.gid;
		*type = e.gid_type;
		return 0;
	}
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -errno;
	if (ibv_query_gid(ctx, port, i, gid))
		return -errno;
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d",
		 ibv_get_device_name(ctx->device), port, i);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	if (!strncmp(buf, "RoCE v2", 7))
		*type = IBV_GID_TYPE_ROCE_V2;
	else if (!strncmp(buf, "IB/RoCE v1", 10))
		*type = IBV_GID_TYPE_ROCE_V1;
	else
		*type = IBV_GID_TYPE_IB;
	return 0;
}

/*
 * Choose the source GID: cfg->gid_index when set; on Ethernet the RoCE v2
 * IPv4-mapped GID of the local node's address (else the first such GID);
 * on InfiniBand index 0.
 */
static int tp_dev_pick_gid(struct tp *tp, const struct ibv_port_attr *pa)
{
	const struct config *cfg = tp->cfg;
	const struct config_node *me = &cfg->nodes[cfg->local];
	union ibv_gid want, gid;
	int i, first = -1, want_v4 = 0;
	uint32_t type = 0;

	if (cfg->gid_index >= 0) {
		if (cfg->gid_index >= pa->gid_tbl_len) {
			log_warnx(
				"device: gid_index %d beyond the %d GIDs of %s "
				"port %d",
				cfg->gid_index, pa->gid_tbl_len,
				tp->info.device, tp->info.port);
			return -EINVAL;
		}
		tp->info.gid_index = cfg->gid_index;
	} else if (pa->link_layer != IBV_LINK_LAYER_ETHERNET) {
		tp->info.gid_index = 0;
	} else {
		if (me->addr_sa.ss_family == AF_INET) {
			const struct sockaddr_in *sin =
				(const struct sockaddr_in *)&me->addr_sa;

			util_v4mapped(want.raw, &sin->sin_addr);
			want_v4 = 1;
		}
		for (i = 0; i < pa->gid_tbl_len; i++) {
			if (tp_dev_gid_type(tp->dev.ctx, tp->info.port, i, &gid,
					    &type))
				continue;
			if (type != IBV_GID_TYPE_ROCE_V2 ||
			    !util_is_v4mapped(gid.raw))
				continue;
			if (want_v4 && !memcmp(&gid, &want, sizeof(gid))) {
				first = i;
				break;
			}
			if (first < 0)
				first = i;
		}
		if (first < 0) {
			log_warnx("device: %s port %d has no RoCE v2 IPv4 GID "
				  "(is an IPv4 address on its netdev?); set "
				  "gid_index (man ibfs.conf)",
				  tp->info.device, tp->info.port);
			return -EADDRNOTAVAIL;
		}
		tp->info.gid_index = first;
	}
	if (ibv_query_gid(tp->dev.ctx, tp->info.port, tp->info.gid_index,
			  &tp->info.gid)) {
		log_warn("device: ibv_query_gid %d", tp->info.gid_index);
		return -EIO;
	}
	return 0;
}

/*
 * The QP's partition: cfg->pkey's index in the port's P_Key table (as
 * perftest's --pkey_index), or index 0, today's default, when unset.  A
 * P_Key the table lacks means the SM did not put this port in that
 * partition: a fabric setting, so say which key and port.
 */
static int tp_dev_pick_pkey(struct tp *tp)
{
	const struct config *cfg = tp->cfg;
	__be16 pk;
	int i;

	if (cfg->pkey < 0) {
		if (ibv_query_pkey(tp->dev.ctx, tp->info.port, 0, &pk)) {
			log_warn("P_Key table of %s port %d", tp->info.device,
				 tp->info.port);
			return -EIO;
		}
		tp->info.pkey = be16toh(pk);
		tp->info.pkey_index = 0;
		return 0;
	}
	i = ibv_get_pkey_index(tp->dev.ctx, tp->info.port,
			       htobe16((uint16_t)cfg->pkey));
	if (i < 0) {
		log_warnx("pkey 0x%04x is not in the P_Key table of %s port "
			  "%d; see man ibfs.conf",
			  cfg->pkey, tp->info.device, tp->info.port);
		return -ENOENT;
	}
	tp->info.pkey = (uint16_t)cfg->pkey;
	tp->info.pkey_index = (uint16_t)i;
	return 0;
}

/* Check that dev can carry UD on a usable port; open and keep it if so. */
static int tp_dev_try(struct tp *tp, struct ibv_device *dev, int named,
		      struct ibv_port_attr *pa)
{
	const char *name = ibv_get_device_name(dev);
	int port = tp->cfg->port > 0 ? tp->cfg->port : 1;

	if (dev->transport_type == IBV_TRANSPORT_IWARP) {
		if (named)
			log_warnx("device: %s is an iWARP device, which has no "
				  "UD "
				  "transport",
				  name);
		return -EPROTONOSUPPORT;
	}
	tp->dev.ctx = ibv_open_device(dev);
	if (!tp->dev.ctx) {
		log_warn("device: ibv_open_device %s", name);
		return -ENODEV;
	}
	if (ibv_query_port(tp->dev.ctx, port, pa)) {
		if (named)
			log_warn("device: ibv_query_port %s port %d", name,
				 port);
		goto fail;
	}
	if (pa->state != IBV_PORT_ACTIVE) {
		if (named)
			log_warnx(
				"device: port %d of %s is %s, not ACTIVE (link "
				"down? for rxe: is its netdev up?)",
				port, name, tp_dev_port_state(pa->state));
		goto fail;
	}
	snprintf(tp->info.device, sizeof(tp->info.device), "%s", name);
	tp->info.port = port;
	return 0;
fail:
	ibv_close_device(tp->dev.ctx);
	tp->dev.ctx = NULL;
	return -ENETDOWN;
}

/* Open the configured device, or the first one with an ACTIVE port. */
static int tp_dev_find(struct tp *tp, struct ibv_port_attr *pa)
{
	const char *want = tp->cfg->device;
	struct ibv_device **list;
	int n = 0, i, rc = -ENODEV, found = 0;

	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		log_warnx(
			"device: no RDMA device found (load the HCA's driver, "
			"or rdma_rxe for Soft-RoCE: man ibfs)");
		if (list)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	for (i = 0; i < n; i++) {
		if (want[0] && strcmp(ibv_get_device_name(list[i]), want))
			continue;
		found = 1;
		rc = tp_dev_try(tp, list[i], want[0] != 0, pa);
		if (!rc || want[0])
			break;
	}
	ibv_free_device_list(list);
	if (rc && want[0] && !found)
		log_warnx("device: RDMA device %s not found", want);
	else if (rc && !want[0])
		log_warnx(
			"device: no RDMA device has an ACTIVE port %d that can "
			"do UD",
			tp->cfg->port > 0 ? tp->cfg->port : 1);
	if (rc)
		return rc == -ENETDOWN || rc == -EPROTONOSUPPORT ? rc : -ENODEV;
	return 0;
}

/* Device limits the configured depths must respect, said up front. */
static int tp_dev_check_limits(struct tp *tp)
{
	const struct ibv_device_attr *d = &tp->dev.attr;
	const struct config *cfg = tp->cfg;

	if (cfg->recv_depth < 1 || cfg->send_depth < 1)
		return -EINVAL;
	if ((int)cfg->recv_depth > d->max_qp_wr ||
	    (int)cfg->send_depth > d->max_qp_wr) {
		log_warnx("device: recv_depth %u / send_depth %u exceed %s's "
			  "max_qp_wr %d",
			  cfg->recv_depth, cfg->send_depth, tp->info.device,
			  d->max_qp_wr);
		return -EINVAL;
	}
	if ((int)cfg->recv_depth > d->max_cqe ||
	    (int)cfg->send_depth > d->max_cqe) {
		log_warnx("device: depths exceed %s's max_cqe %d",
			  tp->info.device, d->max_cqe);
		return -EINVAL;
	}
	return 0;
}

/* Page-aligned zeroed memory registered on the PD. */
static int tp_dev_alloc_mr(struct tp *tp, size_t len, uint8_t **buf,
			   struct ibv_mr **mr)
{
	void *p;
	int rc;

	rc = posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), len);
	if (rc)
		return -rc;
	memset(p, 0, len);
	*mr = ibv_reg_mr(tp->dev.pd, p, len, IBV_ACCESS_LOCAL_WRITE);
	if (!*mr) {
		rc = errno ? -errno : -ENOMEM;
		log_warn("device: ibv_reg_mr %zu bytes (memlock limit? ulimit "
			 "-l)",
			 len);
		free(p);
		return rc;
	}
	*buf = p;
	return 0;
}

/* The UD QP, with as much inline data as the device grants (maybe none). */
static int tp_dev_create_qp(struct tp *tp)
{
	static const uint32_t inl[] = {TP_INLINE_WANT, 64, 0};
	struct ibv_qp_init_attr ia;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(inl); i++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = tp->dev.scq;
		ia.recv_cq = tp->dev.rcq;
		ia.qp_type = IBV_QPT_UD;
		ia.sq_sig_all = 0;
		ia.cap.max_send_wr = tp->cfg->send_depth;
		ia.cap.max_recv_wr = tp->cfg->recv_depth;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		ia.cap.max_inline_data = inl[i];
		tp->dev.qp = ibv_create_qp(tp->dev.pd, &ia);
		if (tp->dev.qp)
			break;
	}
	if (!tp->dev.qp) {
		log_warn("device: ibv_create_qp UD");
		return errno ? -errno : -EIO;
	}
	tp->dev.max_inline = ia.cap.max_inline_data;
	return 0;
}

/* RESET -> INIT -> RTR -> RTS: a UD QP needs no remote attributes. */
static int tp_dev_to_rts(struct tp *tp)
{
	struct ibv_qp_attr a;
	uint32_t psn;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = tp->info.pkey_index;
	a.port_num = tp->info.port;
	a.qkey = tp->cfg->qkey;
	if (ibv_modify_qp(tp->dev.qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_QKEY)) {
		log_warn("device: modify QP to INIT");
		return -EIO;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(tp->dev.qp, &a, IBV_QP_STATE)) {
		log_warn("device: modify QP to RTR");
		return -EIO;
	}
	if (getrandom(&psn, sizeof(psn), 0) != sizeof(psn))
		psn = (uint32_t)util_now_ms();
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = psn & 0xffffff;
	if (ibv_modify_qp(tp->dev.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
		log_warn("device: modify QP to RTS");
		return -EIO;
	}
	return 0;
}
/* Find the device, then the port's geometry and GID, as the hello and
 * .status tell them, and the limits the depths must respect. */
static int tp_dev_port(struct tp *tp)
{
	struct ibv_port_attr pa;
	int rc;

	rc = tp_dev_find(tp, &pa);
	if (rc)
		return rc;
	if (ibv_query_device(tp->dev.ctx, &tp->dev.attr)) {
		rc = errno ? -errno : -EIO;
		log_warn("device: ibv_query_device %s", tp->info.device);
		goto fail;
	}
	tp->info.link_layer = pa.link_layer;
	tp->info.lid = pa.lid;
	tp->info.mtu = pa.active_mtu;
	tp->info.mtu_bytes = (size_t)128 << pa.active_mtu;
	if (tp->info.mtu_bytes > pa.max_msg_sz)
		tp->info.mtu_bytes = pa.max_msg_sz;
	rc = tp_dev_pick_gid(tp, &pa);
	if (!rc)
		rc = tp_dev_pick_pkey(tp);
	if (!rc)
		rc = tp_dev_check_limits(tp);
	if (!rc)
		return 0;
fail:
	ibv_close_device(tp->dev.ctx);
	tp->dev.ctx = NULL;
	return rc;
}

/* Close the device tp_dev_port opened. */
static void tp_dev_unport(struct tp *tp)
{
	ibv_close_device(tp->dev.ctx);
	tp->dev.ctx = NULL;
}

/* The protection domain every MR and AH is made on. */
static int tp_dev_alloc_pd(struct tp *tp)
{
	tp->dev.pd = ibv_alloc_pd(tp->dev.ctx);
	if (!tp->dev.pd) {
		log_warn("device: ibv_alloc_pd");
		return -EIO;
	}
	return 0;
}

/* Release the protection domain. */
static void tp_dev_free_pd(struct tp *tp)
{
	ibv_dealloc_pd(tp->dev.pd);
}

/* Both pools: send slots of one datagram, receive slots with GRH room. */
static int tp_dev_alloc_pools(struct tp *tp)
{
	const struct config *cfg = tp->cfg;
	int rc;

	rc = tp_dev_alloc_mr(tp, (size_t)cfg->send_depth * tp->info.mtu_bytes,
			     &tp->ring.buf, &tp->ring.mr);
	if (rc)
		return rc;
	tp->rx.slot = tp->info.mtu_bytes + sizeof(struct ibv_grh);
	rc = tp_dev_alloc_mr(tp, (size_t)cfg->recv_depth * tp->rx.slot,
			     &tp->rx.buf, &tp->rx.mr);
	if (rc) {
		ibv_dereg_mr(tp->ring.mr);
		free(tp->ring.buf);
	}
	return rc;
}

/* Release both pools (the reverse of tp_dev_alloc_pools). */
static void tp_dev_free_pools(struct tp *tp)
{
	ibv_dereg_mr(tp->rx.mr);
	free(tp->rx.buf);
	ibv_dereg_mr(tp->ring.mr);
	free(tp->ring.buf);
}

/* The receive CQ's completion channel, which the progress thread sleeps
 * on. */
static int tp_dev_create_chan(struct tp *tp)
{
	tp->dev.chan = ibv_create_comp_channel(tp->dev.ctx);
	if (!tp->dev.chan)
		log_warn("device: ibv_create_comp_channel");
	return tp->dev.chan ? 0 : -EIO;
}

/* Destroy the completion channel. */
static void tp_dev_destroy_chan(struct tp *tp)
{
	ibv_destroy_comp_channel(tp->dev.chan);
}

/* A CQ of depth entries on chan (or none); NULL, logged, on failure. */
static struct ibv_cq *tp_dev_cq(struct tp *tp, uint32_t depth,
				struct ibv_comp_channel *chan, const char *what)
{
	struct ibv_cq *cq = ibv_create_cq(tp->dev.ctx, (int)depth, tp, chan, 0);

	if (!cq)
		log_warn("device: ibv_create_cq (%s)", what);
	return cq;
}

/*
 * Both CQs.  No channel for sends: senders reap them as they post, so a
 * send completion never wakes the progress thread.
 */
static int tp_dev_create_cqs(struct tp *tp)
{
	tp->dev.scq = tp_dev_cq(tp, tp->cfg->send_depth, NULL, "send");
	if (!tp->dev.scq)
		return -EIO;
	tp->dev.rcq = tp_dev_cq(tp, tp->cfg->recv_depth, tp->dev.chan, "recv");
	if (tp->dev.rcq)
		return 0;
	ibv_destroy_cq(tp->dev.scq);
	return -EIO;
}

/* Destroy both CQs, the receive one first. */
static void tp_dev_destroy_cqs(struct tp *tp)
{
	ibv_destroy_cq(tp->dev.rcq);
	ibv_destroy_cq(tp->dev.scq);
}

/* The QP's address for the hello, once it is RTS. */
static int tp_dev_publish(struct tp *tp)
{
	tp->info.qpn = tp->dev.qp->qp_num;
	tp->info.qkey = tp->cfg->qkey;
	tp->info.recv_depth = tp->cfg->recv_depth;
	tp->info.send_depth = tp->cfg->send_depth;
	/* this incarnation: it names our reliable streams (reliable.h) */
	while (!tp->info.boot)
		tp->info.boot = util_random32(tp->info.qpn);
	tp_dev_show(tp);
	return 0;
}

/* tp->info as it is now, for the other threads (tp_info_get): after each
 * change is whole, never during one. */
void tp_dev_show(struct tp *tp)
{
	pthread_mutex_lock(&tp->info_lock);
	tp->shown = tp->info;
	pthread_mutex_unlock(&tp->info_lock);
}

/* Steps 1 and 2 of the recipe, in order. */
static const struct tp_step tp_dev_steps[] = {
	{tp_dev_port, tp_dev_unport},
	{tp_dev_alloc_pd, tp_dev_free_pd},
	{tp_dev_alloc_pools, tp_dev_free_pools},
	{tp_dev_create_chan, tp_dev_destroy_chan},
	{tp_dev_create_cqs, tp_dev_destroy_cqs},
	{tp_dev_create_qp, tp_dev_stop},
	{tp_dev_to_rts, NULL},
	{tp_dev_publish, NULL},
};

/* Every verbs object in order; on failure undo in reverse, as
 * ud_pingpong's pp_init_ctx does. */
int tp_dev_open(struct tp *tp)
{
	return tp_steps_open(tp, tp_dev_steps, ARRAY_SIZE(tp_dev_steps));
}

/* Destroy the QP first: once it is gone no send is in flight, so the
 * caller may destroy every AH before the rest goes. */
void tp_dev_stop(struct tp *tp)
{
	if (tp->dev.qp)
		ibv_destroy_qp(tp->dev.qp);
	tp->dev.qp = NULL;
}

/* Everything tp_dev_open made, in reverse. */
void tp_dev_close(struct tp *tp)
{
	if (tp->dev.ctx)
		tp_steps_close(tp, tp_dev_steps, ARRAY_SIZE(tp_dev_steps));
}
