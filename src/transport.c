/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verbs engine: one UD QP for every peer, the classic kernel-verbs UD
 * recipe in user space.
 *
 *   open:  device (named, or the first with an ACTIVE port) -> PD -> send
 *          and receive pools in registered memory -> a send CQ (polled by
 *          senders) and a receive CQ on a completion channel -> UD QP
 *          RESET -> INIT -> RTR -> RTS ->
 *          recv_depth receives posted -> progress thread.
 *   send:  fragments are built by wire.c straight into send-pool slots
 *          (the one copy: caller buffer -> registered memory) and posted
 *          as chains of WRs.  Slots are a ring; only some WRs are
 *          signalled, and a signalled completion frees every slot before
 *          it (a QP completes its sends in order).  Every send reaps
 *          the send CQ first.
 *   recv:  the progress thread sleeps in epoll on the completion channel,
 *          a timerfd (reassembly expiry) and an eventfd (stop); it drains
 *          the receive CQ in batches, strips the GRH, identifies the sender by
 *          src_qp + source GID, reassembles, delivers, and reposts the
 *          receive buffers as chains.
 *
 * Lock order: send lock -> peer lock; the source table (rwlock) and the
 * reassembly lock are taken alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/ip.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/timerfd.h>

#include "log.h"
#include "reliable.h"
#include "transport.h"
#include "util.h"
#include "wire.h"

#define TP_POLL_BATCH	32   /* completions per ibv_poll_cq */
#define TP_INLINE_WANT	256  /* inline data asked of the QP */
#define TP_SEND_WAIT_MS 5000 /* pool exhausted this long: -EIO */
#define TP_LOG_EVERY_MS 1000 /* rate limit of completion error lines */
#define TP_REL_TICK_MS	5    /* reliable timers and delayed acks */

/* An AH replaced or dropped while sends that use it may be in flight. */
struct tp_retired {
	struct ibv_ah *ah;
	uint64_t seq; /* free once this many sends completed */
	struct tp_retired *next;
};

/* Who may send to us: what a peer announced (qpn, GID, LID). */
struct tp_src {
	int valid;
	uint64_t linger_until; /* ms; after a down, until then still ours */
	uint32_t qpn;
	uint16_t lid;
	union ibv_gid gid;
};

/* delivery = reliable: a peer's two streams and the message held back
 * while its channel queue is full (under rel_lock). */
struct tp_rel {
	int on;
	struct rel_tx tx;
	struct rel_rx rx;
	int held;
	struct wire_msg hmsg;
	struct wire_seq seq; /* the message arriving, in order, no timeout */
	uint8_t *ahead;	     /* REL_SACK_BITS datagrams past a gap (lazy) */
	uint32_t ahead_len[REL_SACK_BITS];
	uint64_t pub_retrans, pub_dups, pub_timeouts; /* published so far */
	uint64_t pub_probes, pub_rtos;
};

/* A message completed during a poll batch, delivered after unlocking. */
struct tp_done {
	struct peer *p;
	struct wire_msg msg;
};

struct tp {
	const struct config *cfg;
	struct peer *peers;
	int npeers;
	struct tp_ops ops;
	void *arg;
	struct tp_info info;
	uint32_t self_id; /* wire id of the local node */

	struct ibv_context *ctx;
	struct ibv_device_attr dattr;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint8_t *sbuf, *rbuf;
	struct ibv_mr *smr, *rmr;
	size_t rslot; /* receive slot: GRH + mtu_bytes */
	uint32_t max_inline;
	uint32_t sig_every;

	/*
	 * Send side, under slock.  WR seq (1-based) lives in slot
	 * (seq - 1) % send_depth of swr, ssge and sbuf.  Filling a WR and
	 * ringing the doorbell are apart: a writer fills, answers its
	 * caller, then posts; whoever finds another thread posting leaves
	 * its WRs to that thread, which takes them after its own (so one
	 * doorbell carries what piled up meanwhile).
	 */
	pthread_mutex_t slock;
	uint64_t s_filled;   /* WRs filled so far */
	uint64_t s_posted;   /* WRs handed to ibv_post_send */
	uint64_t s_done;     /* WRs known complete (wr_id = seq) */
	uint64_t s_last_sig; /* seq of the last signalled WR */
	int s_posting;	     /* a thread is in ibv_post_send, slock dropped */
	int sig_next;	     /* signal the next WR (an AH waits) */
	struct tp_retired *retired;
	struct ibv_send_wr *swr; /* send_depth entries */
	struct ibv_sge *ssge;	 /* send_depth entries */
	uint64_t last_serr_ms;
	unsigned long serr_suppressed;
	int sq_error; /* a send failed: the QP may sit in SQE */

	/* Receive side: only the progress thread touches these. */
	struct ibv_recv_wr *rwr;
	struct ibv_sge *rsge;
	uint32_t *rfree; /* slots waiting to be reposted */
	uint32_t nrfree;
	uint64_t last_rerr_ms;
	unsigned long rerr_suppressed;

	pthread_rwlock_t srclock;
	struct tp_src *src; /* npeers entries */
	pthread_mutex_t rlock;
	struct wire_reasm *reasm;
	atomic_uint *msg_ids; /* next msg_id per peer */

	pthread_t thr;
	int thr_started;
	int epfd, tfd, efd;
	int timer_armed;
	atomic_int stop;

	struct peer_counters totals;

	/* Reliable delivery; lock order: srclock -> rlock -> rel_lock ->
	 * slock -> peer lock. */
	pthread_mutex_t rel_lock;
	struct tp_rel *rel; /* npeers entries */
	int any_rel;
	uint64_t rel_tick_at;	/* next reliable timer tick (progress thread) */
	uint32_t drop_permille; /* TEST HOOK: IBFS_TEST_DROP_PERMILLE */
	uint64_t drop_rng;
};

/* Add to a counter that many threads bump; exactness is all we need. */
static void tp_add(atomic_uint_fast64_t *c, uint64_t v)
{
	atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

/* Names for ibv_port_state in error messages. */
static const char *const tp_port_states[] = {
	[IBV_PORT_NOP] = "NOP",	      [IBV_PORT_DOWN] = "DOWN",
	[IBV_PORT_INIT] = "INIT",     [IBV_PORT_ARMED] = "ARMED",
	[IBV_PORT_ACTIVE] = "ACTIVE", [IBV_PORT_ACTIVE_DEFER] = "ACTIVE_DEFER",
};

/* The port state as a word, for "port 1 of rxe0 is DOWN". */
static const char *tp_port_state_str(enum ibv_port_state s)
{
	if ((unsigned)s < ARRAY_SIZE(tp_port_states) && tp_port_states[s])
		return tp_port_states[s];
	return "unknown";
}

/* Whether gid is IPv4-mapped (::ffff:a.b.c.d), as RoCE v2 IPv4 GIDs are. */
static int tp_gid_is_v4mapped(const union ibv_gid *gid)
{
	static const uint8_t pfx[12] = {0, 0, 0, 0, 0,	  0,
					0, 0, 0, 0, 0xff, 0xff};

	return !memcmp(gid->raw, pfx, sizeof(pfx));
}

/*
 * The type of GID i: ibv_query_gid_ex where the kernel supports it, else
 * the sysfs file that older kernels provide.  -errno for an empty entry.
 */
static int tp_gid_type(struct ibv_context *ctx, int port, int i,
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
static int tp_pick_gid(struct tp *tp, const struct ibv_port_attr *pa)
{
	const struct config *cfg = tp->cfg;
	const struct config_node *me = &cfg->nodes[cfg->local];
	union ibv_gid want, gid;
	int i, first = -1, want_v4 = 0;
	uint32_t type = 0;

	if (cfg->gid_index >= 0) {
		if (cfg->gid_index >= pa->gid_tbl_len) {
			log_warnx("%s: gid_index %d beyond the %d GIDs of %s "
				  "port %d",
				  __func__, cfg->gid_index, pa->gid_tbl_len,
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

			memset(&want, 0, sizeof(want));
			want.raw[10] = want.raw[11] = 0xff;
			memcpy(&want.raw[12], &sin->sin_addr, 4);
			want_v4 = 1;
		}
		for (i = 0; i < pa->gid_tbl_len; i++) {
			if (tp_gid_type(tp->ctx, tp->info.port, i, &gid, &type))
				continue;
			if (type != IBV_GID_TYPE_ROCE_V2 ||
			    !tp_gid_is_v4mapped(&gid))
				continue;
			if (want_v4 && !memcmp(&gid, &want, sizeof(gid))) {
				first = i;
				break;
			}
			if (first < 0)
				first = i;
		}
		if (first < 0) {
			log_warnx("%s: %s port %d has no RoCE v2 IPv4 GID "
				  "(is an IPv4 address on its netdev?); set "
				  "gid_index",
				  __func__, tp->info.device, tp->info.port);
			return -EADDRNOTAVAIL;
		}
		tp->info.gid_index = first;
	}
	if (ibv_query_gid(tp->ctx, tp->info.port, tp->info.gid_index,
			  &tp->info.gid)) {
		log_warn("%s: ibv_query_gid %d", __func__, tp->info.gid_index);
		return -EIO;
	}
	return 0;
}

/* Check that dev can carry UD on a usable port; open and keep it if so. */
static int tp_try_device(struct tp *tp, struct ibv_device *dev, int named,
			 struct ibv_port_attr *pa)
{
	const char *name = ibv_get_device_name(dev);
	int port = tp->cfg->port > 0 ? tp->cfg->port : 1;

	if (dev->transport_type == IBV_TRANSPORT_IWARP) {
		if (named)
			log_warnx("%s: %s is an iWARP device, which has no UD "
				  "transport",
				  __func__, name);
		return -EPROTONOSUPPORT;
	}
	tp->ctx = ibv_open_device(dev);
	if (!tp->ctx) {
		log_warn("%s: ibv_open_device %s", __func__, name);
		return -ENODEV;
	}
	if (ibv_query_port(tp->ctx, port, pa)) {
		if (named)
			log_warn("%s: ibv_query_port %s port %d", __func__,
				 name, port);
		goto fail;
	}
	if (pa->state != IBV_PORT_ACTIVE) {
		if (named)
			log_warnx("%s: port %d of %s is %s, not ACTIVE (link "
				  "down? for rxe: is its netdev up?)",
				  __func__, port, name,
				  tp_port_state_str(pa->state));
		goto fail;
	}
	snprintf(tp->info.device, sizeof(tp->info.device), "%s", name);
	tp->info.port = port;
	return 0;
fail:
	ibv_close_device(tp->ctx);
	tp->ctx = NULL;
	return -ENETDOWN;
}

/* Open the configured device, or the first one with an ACTIVE port. */
static int tp_open_device(struct tp *tp, struct ibv_port_attr *pa)
{
	const char *want = tp->cfg->device;
	struct ibv_device **list;
	int n = 0, i, rc = -ENODEV, found = 0;

	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		log_warnx("%s: no RDMA device found (load rdma_rxe or the HCA "
			  "driver; see README)",
			  __func__);
		if (list)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	for (i = 0; i < n; i++) {
		if (want[0] && strcmp(ibv_get_device_name(list[i]), want))
			continue;
		found = 1;
		rc = tp_try_device(tp, list[i], want[0] != 0, pa);
		if (!rc || want[0])
			break;
	}
	ibv_free_device_list(list);
	if (rc && want[0] && !found)
		log_warnx("%s: RDMA device %s not found", __func__, want);
	else if (rc && !want[0])
		log_warnx("%s: no RDMA device has an ACTIVE port %d that can "
			  "do UD",
			  __func__, tp->cfg->port > 0 ? tp->cfg->port : 1);
	if (rc)
		return rc == -ENETDOWN || rc == -EPROTONOSUPPORT ? rc : -ENODEV;

	if (ibv_query_device(tp->ctx, &tp->dattr)) {
		rc = -errno ? -errno : -EIO;
		log_warn("%s: ibv_query_device %s", __func__, tp->info.device);
		goto fail;
	}
	tp->info.link_layer = pa->link_layer;
	tp->info.lid = pa->lid;
	tp->info.mtu = pa->active_mtu;
	tp->info.mtu_bytes = (size_t)128 << pa->active_mtu;
	if (tp->info.mtu_bytes > pa->max_msg_sz)
		tp->info.mtu_bytes = pa->max_msg_sz;
	rc = tp_pick_gid(tp, pa);
	if (rc)
		goto fail;
	return 0;
fail:
	ibv_close_device(tp->ctx);
	tp->ctx = NULL;
	return rc;
}

/* Device limits the configured depths must respect, said up front. */
static int tp_check_limits(struct tp *tp)
{
	const struct ibv_device_attr *d = &tp->dattr;
	const struct config *cfg = tp->cfg;

	if (cfg->recv_depth < 1 || cfg->send_depth < 1)
		return -EINVAL;
	if ((int)cfg->recv_depth > d->max_qp_wr ||
	    (int)cfg->send_depth > d->max_qp_wr) {
		log_warnx("%s: recv_depth %u / send_depth %u exceed %s's "
			  "max_qp_wr %d",
			  __func__, cfg->recv_depth, cfg->send_depth,
			  tp->info.device, d->max_qp_wr);
		return -EINVAL;
	}
	if ((int)cfg->recv_depth > d->max_cqe ||
	    (int)cfg->send_depth > d->max_cqe) {
		log_warnx("%s: depths exceed %s's max_cqe %d", __func__,
			  tp->info.device, d->max_cqe);
		return -EINVAL;
	}
	return 0;
}

/* Page-aligned zeroed memory registered on the PD. */
static int tp_alloc_mr(struct tp *tp, size_t len, uint8_t **buf,
		       struct ibv_mr **mr)
{
	void *p;
	int rc;

	rc = posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), len);
	if (rc)
		return -rc;
	memset(p, 0, len);
	*mr = ibv_reg_mr(tp->pd, p, len, IBV_ACCESS_LOCAL_WRITE);
	if (!*mr) {
		rc = errno ? -errno : -ENOMEM;
		log_warn("%s: ibv_reg_mr %zu bytes (memlock limit? ulimit -l)",
			 __func__, len);
		free(p);
		return rc;
	}
	*buf = p;
	return 0;
}

/* The UD QP, with as much inline data as the device grants (maybe none). */
static int tp_create_qp(struct tp *tp)
{
	static const uint32_t inl[] = {TP_INLINE_WANT, 64, 0};
	struct ibv_qp_init_attr ia;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(inl); i++) {
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = tp->scq;
		ia.recv_cq = tp->rcq;
		ia.qp_type = IBV_QPT_UD;
		ia.sq_sig_all = 0;
		ia.cap.max_send_wr = tp->cfg->send_depth;
		ia.cap.max_recv_wr = tp->cfg->recv_depth;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		ia.cap.max_inline_data = inl[i];
		tp->qp = ibv_create_qp(tp->pd, &ia);
		if (tp->qp)
			break;
	}
	if (!tp->qp) {
		log_warn("%s: ibv_create_qp UD", __func__);
		return errno ? -errno : -EIO;
	}
	tp->max_inline = ia.cap.max_inline_data;
	return 0;
}

/* RESET -> INIT -> RTR -> RTS: a UD QP needs no remote attributes. */
static int tp_qp_to_rts(struct tp *tp)
{
	struct ibv_qp_attr a;
	uint32_t psn;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = tp->info.port;
	a.qkey = tp->cfg->qkey;
	if (ibv_modify_qp(tp->qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_QKEY)) {
		log_warn("%s: modify QP to INIT", __func__);
		return -EIO;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(tp->qp, &a, IBV_QP_STATE)) {
		log_warn("%s: modify QP to RTR", __func__);
		return -EIO;
	}
	if (getrandom(&psn, sizeof(psn), 0) != sizeof(psn))
		psn = (uint32_t)util_now_ms();
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = psn & 0xffffff;
	if (ibv_modify_qp(tp->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
		log_warn("%s: modify QP to RTS", __func__);
		return -EIO;
	}
	return 0;
}

/* Post every receive slot in rfree as one chain; keep them on failure. */
static int tp_post_recvs(struct tp *tp)
{
	struct ibv_recv_wr *bad = NULL;
	uint32_t i, slot;
	int rc;

	if (!tp->nrfree)
		return 0;
	for (i = 0; i < tp->nrfree; i++) {
		slot = tp->rfree[i];
		tp->rsge[i].addr =
			(uintptr_t)(tp->rbuf + (size_t)slot * tp->rslot);
		tp->rsge[i].length = tp->rslot;
		tp->rsge[i].lkey = tp->rmr->lkey;
		tp->rwr[i].wr_id = slot;
		tp->rwr[i].sg_list = &tp->rsge[i];
		tp->rwr[i].num_sge = 1;
		tp->rwr[i].next = i + 1 < tp->nrfree ? &tp->rwr[i + 1] : NULL;
	}
	rc = ibv_post_recv(tp->qp, tp->rwr, &bad);
	if (rc) {
		/* WRs before bad went in; keep the rest for the next try. */
		uint32_t done = bad ? (uint32_t)(bad - tp->rwr) : 0;

		memmove(tp->rfree, tp->rfree + done,
			(tp->nrfree - done) * sizeof(*tp->rfree));
		tp->nrfree -= done;
		log_warnx("%s: ibv_post_recv: %s (%u receives not posted)",
			  __func__, strerror(rc), tp->nrfree);
		return -rc;
	}
	tp->nrfree = 0;
	return 0;
}

/* Free retired AHs whose sends have all completed (under slock). */
static void tp_free_retired(struct tp *tp, int all)
{
	struct tp_retired **pp = &tp->retired, *r;

	while ((r = *pp)) {
		if (all || tp->s_done >= r->seq) {
			*pp = r->next;
			if (ibv_destroy_ah(r->ah))
				log_warn("%s: ibv_destroy_ah", __func__);
			free(r);
		} else {
			pp = &r->next;
		}
	}
}

/* Log a failed completion, at most once a second with a count. */
static void tp_log_wc(const char *what, const struct ibv_wc *wc,
		      uint64_t *last_ms, unsigned long *suppressed)
{
	uint64_t now = util_now_ms();

	if (*last_ms && now - *last_ms < TP_LOG_EVERY_MS) {
		(*suppressed)++;
		return;
	}
	log_warnx("%s completion failed: %s (status %d, vendor_err 0x%x)%s",
		  what, ibv_wc_status_str(wc->status), wc->status,
		  wc->vendor_err, *suppressed ? " (and earlier ones)" : "");
	*last_ms = now;
	*suppressed = 0;
}

/*
 * A failed send moves a UD QP to SQE, where it takes no more sends; bring
 * it back to RTS (under slock).  The flushed WRs complete with
 * IBV_WC_WR_FLUSH_ERR, which frees their slots like any completion.
 */
static void tp_sq_recover(struct tp *tp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	tp->sq_error = 0;
	if (ibv_query_qp(tp->qp, &a, IBV_QP_STATE, &ia)) {
		log_warn("%s: ibv_query_qp", __func__);
		return;
	}
	if (a.qp_state != IBV_QPS_SQE) {
		if (a.qp_state != IBV_QPS_RTS)
			log_warnx("%s: QP in state %d, not RTS; sends will "
				  "fail",
				  __func__, a.qp_state);
		return;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.cur_qp_state = IBV_QPS_SQE;
	if (ibv_modify_qp(tp->qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE))
		log_warn("%s: modify QP SQE -> RTS", __func__);
	else
		log_warnx("%s: send queue error cleared (QP back to RTS)",
			  __func__);
}

/* Reap send completions: a signalled one frees every slot up to it. */
static int tp_reap_sends(struct tp *tp)
{
	struct ibv_wc wc[TP_POLL_BATCH];
	int n, i, total = 0;

	do {
		n = ibv_poll_cq(tp->scq, TP_POLL_BATCH, wc);
		if (n < 0) {
			log_warnx("%s: ibv_poll_cq failed", __func__);
			return -EIO;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS &&
			    wc[i].status != IBV_WC_WR_FLUSH_ERR) {
				tp_add(&tp->totals.drops[DROP_MALFORMED], 1);
				tp_log_wc("send", &wc[i], &tp->last_serr_ms,
					  &tp->serr_suppressed);
				tp->sq_error = 1;
			}
			if (wc[i].wr_id > tp->s_done &&
			    wc[i].wr_id <= tp->s_posted)
				tp->s_done = wc[i].wr_id;
		}
		total += n;
	} while (n == TP_POLL_BATCH);
	if (tp->retired)
		tp_free_retired(tp, 0);
	if (tp->sq_error)
		tp_sq_recover(tp);
	return total;
}

/* Free send slots (ring of send_depth) right now. */
static uint32_t tp_free_slots(const struct tp *tp)
{
	return tp->cfg->send_depth - (uint32_t)(tp->s_filled - tp->s_done);
}

/*
 * Ring the doorbell for every WR filled and not yet posted, unless
 * another thread is posting: it takes them when its own post returns.
 * Called and returns under slock, which it drops around ibv_post_send
 * (the kernel's work under soft-RoCE) so that others can fill meanwhile.
 * A failed post is logged and its datagrams counted as dropped: the
 * writers were answered already.
 */
static void tp_push(struct tp *tp)
{
	uint32_t depth = tp->cfg->send_depth, first, k, n, sent;
	struct ibv_send_wr *bad = NULL;
	uint64_t a, b, s;
	int rc;

	while (!tp->s_posting && tp->s_posted < tp->s_filled) {
		a = tp->s_posted;
		b = tp->s_filled;
		for (s = a; s < b; s++)
			tp->swr[s % depth].next =
				s + 1 < b ? &tp->swr[(s + 1) % depth] : NULL;
		first = (uint32_t)(a % depth);
		/* Set before the post: a completion may be reaped at once. */
		tp->s_posted = b;
		tp->s_posting = 1;
		pthread_mutex_unlock(&tp->slock);
		rc = ibv_post_send(tp->qp, &tp->swr[first], &bad);
		pthread_mutex_lock(&tp->slock);
		tp->s_posting = 0;
		if (!rc)
			continue;
		n = (uint32_t)(b - a);
		sent = bad ? ((uint32_t)(bad - tp->swr) + depth - first) % depth
			   : 0;
		log_warnx("%s: ibv_post_send: %s (%u of %u WRs not posted)",
			  __func__, strerror(rc), n - sent, n);
		tp_add(&tp->totals.drops[DROP_MALFORMED], n - sent);
		if (tp->s_filled == b) {
			/* Nothing after them: their slots are free again. */
			tp->s_filled = tp->s_posted = a + sent;
			if (tp->s_last_sig > tp->s_filled)
				tp->s_last_sig = tp->s_filled;
			tp->sig_next = 1;
		} else {
			/* Filled after them: the last of those, signalled,
			 * frees their slots when it completes. */
			k = (uint32_t)((tp->s_filled - 1) % depth);
			tp->swr[k].send_flags |= IBV_SEND_SIGNALED;
			tp->s_last_sig = tp->s_filled;
		}
	}
}

/*
 * Wait until a slot frees (called and returns under slock, dropped while
 * waiting, so a caller re-reads what slock guards, such as the AH): the
 * last WR filled before the pool ran dry was signalled (pool pressure),
 * so its completion comes once it is posted.
 */
static int tp_wait_slot(struct tp *tp)
{
	uint64_t deadline = 0;

	for (;;) {
		if (tp_reap_sends(tp) < 0)
			return -EIO;
		if (tp_free_slots(tp))
			return 0;
		tp_push(tp);
		if (!deadline)
			deadline = util_now_ms() + TP_SEND_WAIT_MS;
		else if (util_now_ms() > deadline)
			break;
		pthread_mutex_unlock(&tp->slock);
		sched_yield();
		pthread_mutex_lock(&tp->slock);
	}
	log_warnx("%s: no send completion for %d ms; is the QP in error?",
		  __func__, TP_SEND_WAIT_MS);
	return -EIO;
}

/* Everything tp_send needs of a peer, read once under its lock. */
struct tp_dest {
	struct ibv_ah *ah;
	uint32_t qpn, qkey;
	size_t mtu;
	size_t max_message; /* what the peer takes (0: not said) */
};

/* Snapshot p's AH and address; -ENOTCONN when it is down. */
static int tp_dest_get(struct tp *tp, struct peer *p, struct tp_dest *d)
{
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	if (!p->up || !p->ah) {
		rc = -ENOTCONN;
	} else {
		d->ah = p->ah;
		d->qpn = p->addr.qpn;
		d->qkey = p->addr.qkey;
		d->mtu = tp->info.mtu_bytes;
		d->max_message = p->addr.max_message;
		/* Never send more than the peer's port can take. */
		if (p->addr.mtu >= IBV_MTU_256 && p->addr.mtu <= IBV_MTU_4096 &&
		    ((size_t)128 << p->addr.mtu) < d->mtu)
			d->mtu = (size_t)128 << p->addr.mtu;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

/* The registered send slot the next WR filled will use (under slock). */
static uint8_t *tp_slot(struct tp *tp)
{
	return tp->sbuf + (size_t)(tp->s_filled % tp->cfg->send_depth) *
				  tp->info.mtu_bytes;
}

/* Fill the next WR with slot sb; a free slot is the caller's to check. */
static void tp_fill_wr(struct tp *tp, const struct tp_dest *d, uint8_t *sb,
		       size_t dlen)
{
	uint32_t depth = tp->cfg->send_depth, freeafter;
	uint64_t seq = tp->s_filled + 1;
	uint32_t k = (uint32_t)(tp->s_filled % depth);
	struct ibv_send_wr *wr = &tp->swr[k];

	tp->ssge[k].addr = (uintptr_t)sb;
	tp->ssge[k].length = dlen;
	tp->ssge[k].lkey = tp->smr->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = seq;
	wr->sg_list = &tp->ssge[k];
	wr->num_sge = 1;
	wr->opcode = IBV_WR_SEND;
	wr->wr.ud.ah = d->ah;
	wr->wr.ud.remote_qpn = d->qpn;
	wr->wr.ud.remote_qkey = d->qkey;
	if (dlen <= tp->max_inline)
		wr->send_flags |= IBV_SEND_INLINE;
	freeafter = depth - (uint32_t)(seq - tp->s_done);
	if (seq - tp->s_last_sig >= tp->sig_every ||
	    freeafter < tp->sig_every || tp->sig_next) {
		wr->send_flags |= IBV_SEND_SIGNALED;
		tp->s_last_sig = seq;
		tp->sig_next = 0;
	}
	tp->s_filled = seq;
}

/* Post what is filled and not yet posted, or leave it to the thread
 * posting now; thread-safe. */
void tp_flush(struct tp *tp)
{
	pthread_mutex_lock(&tp->slock);
	tp_push(tp);
	pthread_mutex_unlock(&tp->slock);
}

/* A message tp may send: its channel name's length, or -errno. */
static int tp_msg_check(const struct tp *tp, const char *chan, const void *buf,
			size_t len)
{
	size_t chan_len = util_name_len(chan);

	if (!chan_len || (len && !buf))
		return -EINVAL;
	if (len > tp->cfg->max_message)
		return -EMSGSIZE;
	return (int)chan_len;
}

/* Fragment one message into registered slots, to go at tp_flush. */
int tp_queue(struct tp *tp, struct peer *p, const char *chan, const void *buf,
	     size_t len)
{
	struct tp_dest d;
	uint32_t cnt, idx, msg_id;
	size_t chan_len, dlen, mtu;
	uint8_t *sb;
	int rc;

	rc = tp_msg_check(tp, chan, buf, len);
	if (rc < 0)
		return rc;
	chan_len = (size_t)rc;

	pthread_mutex_lock(&tp->slock);
	rc = tp_dest_get(tp, p, &d);
	if (rc)
		goto out;
	/* The peer would drop it whole: say so to the writer instead. */
	if (d.max_message && len > d.max_message) {
		rc = -EMSGSIZE;
		goto out;
	}
	/* Always reap (a poll of a user-space ring, no system call): it is
	 * the only place send completions and errors are seen. */
	tp_reap_sends(tp);
	mtu = d.mtu; /* every fragment of a message has one geometry */
	cnt = wire_frag_count(len, mtu, chan_len);
	if (!cnt) {
		rc = -EMSGSIZE;
		goto out;
	}
	msg_id = atomic_fetch_add_explicit(&tp->msg_ids[p->idx], 1,
					   memory_order_relaxed);
	for (idx = 0; idx < cnt; idx++) {
		if (!tp_free_slots(tp)) {
			/* Drops slock: the peer may have gone meanwhile. */
			rc = tp_wait_slot(tp);
			if (!rc)
				rc = tp_dest_get(tp, p, &d);
			if (rc)
				goto out;
		}
		sb = tp_slot(tp);
		dlen = wire_frag_build(sb, mtu, tp->self_id, msg_id, chan, buf,
				       len, idx);
		if (!dlen) {
			rc = -EINVAL;
			goto out;
		}
		tp_fill_wr(tp, &d, sb, dlen);
	}
out:
	pthread_mutex_unlock(&tp->slock);
	if (!rc) {
		tp_add(&p->cnt.msgs_tx, 1);
		tp_add(&p->cnt.bytes_tx, len);
		tp_add(&tp->totals.msgs_tx, 1);
		tp_add(&tp->totals.bytes_tx, len);
	}
	return rc;
}

/* tp_queue, then the doorbell. */
int tp_send(struct tp *tp, struct peer *p, const char *chan, const void *buf,
	    size_t len)
{
	int rc = tp_queue(tp, p, chan, buf, len);

	tp_flush(tp);
	return rc;
}

/*
 * The source GID of a received datagram.  RoCE v2 over IPv4 puts the IPv4
 * header in the last 20 bytes of the GRH area (the first 20 are zero);
 * tell it from a real GRH/IPv6 header as libibverbs does.
 */
static void tp_grh_sgid(const void *grhbuf, union ibv_gid *sgid)
{
	const struct ibv_grh *grh = grhbuf;
	struct iphdr ip4;
	uint32_t vtf = be32toh(grh->version_tclass_flow);

	memcpy(&ip4,
	       (const uint8_t *)grhbuf + sizeof(struct ibv_grh) - sizeof(ip4),
	       sizeof(ip4));
	if (((vtf >> 28) & 0xf) != 6 && ip4.version == 4) {
		memset(sgid, 0, sizeof(*sgid));
		sgid->raw[10] = sgid->raw[11] = 0xff;
		memcpy(&sgid->raw[12], &ip4.saddr, 4);
		return;
	}
	*sgid = grh->sgid;
}

/* The up (or expected) peer that sent wc, or NULL (under srclock). */
static struct peer *tp_src_match(struct tp *tp, const struct ibv_wc *wc,
				 const void *grhbuf, uint64_t now)
{
	union ibv_gid sgid;
	int have_grh = !!(wc->wc_flags & IBV_WC_GRH), i;

	if (have_grh)
		tp_grh_sgid(grhbuf, &sgid);
	for (i = 0; i < tp->npeers; i++) {
		const struct tp_src *s = &tp->src[i];

		if (!s->valid || s->qpn != wc->src_qp ||
		    (s->linger_until && now >= s->linger_until))
			continue;
		if (have_grh) {
			if (memcmp(&s->gid, &sgid, sizeof(sgid)))
				continue;
		} else if (tp->info.link_layer != IBV_LINK_LAYER_ETHERNET &&
			   s->lid && s->lid != wc->slid) {
			continue;
		}
		return &tp->peers[i];
	}
	return NULL;
}

/* wire.c's reasons, in the peer counters' terms. */
static const enum peer_drop tp_wire_drops[] = {
	[WIRE_DROP_MALFORMED] = DROP_MALFORMED,
	[WIRE_DROP_DUPLICATE] = DROP_DUPLICATE,
	[WIRE_DROP_TOO_BIG] = DROP_TOO_BIG,
	[WIRE_DROP_NO_MEMORY] = DROP_QUEUE_FULL,
};

_Static_assert(REL_SACK_WORDS == WIRE_SACK_WORDS,
	       "the wire carries the whole sack bitmap");

/* ---- delivery = reliable ------------------------------------------- */

int tp_peer_reliable(const struct tp *tp, const struct peer *p)
{
	return tp->rel[p->idx].on;
}

/*
 * The ack half of a trailer: what we have taken of p's stream.  Only a
 * standalone ACK has room for the sack (room); while we hold datagrams
 * past a gap a DATA datagram carries no ack at all, since one without the
 * sack would tell the sender we hold nothing, and the ack goes alone at
 * the end of the flush instead.
 */
static void tp_rel_ack_fields(struct tp_rel *r, struct wire_rel *w, int room)
{
	rel_bits s;

	w->credit = rel_rx_credit(&r->rx);
	if (!r->rx.joined)
		return;
	s = rel_rx_sack(&r->rx);
	if (rel_bits_any(&s)) {
		if (!room) {
			if (r->rx.ack_due)
				r->rx.ack_now = 1;
			return;
		}
		memcpy(w->sack, s.w, sizeof(w->sack));
		w->rflags |= WIRE_REL_SACK;
	}
	w->ack_sess = r->rx.sess;
	w->ack = r->rx.nxt;
	w->rflags |= WIRE_REL_ACK;
	if (r->rx.nak_due)
		w->rflags |= WIRE_REL_NAK;
	rel_rx_acked(&r->rx);
}

/*
 * Fill WRs with what p's window allows, each datagram carrying our ack of
 * p's stream, then a standalone ACK if one is due: any that is due on a
 * timer tick, else only an urgent one (under rel_lock).  The caller rings
 * the doorbell (tp_flush) once it has dropped rel_lock, so the progress
 * thread can take acks meanwhile.  Nothing goes while p is down.
 */
static void tp_rel_flush(struct tp *tp, struct peer *p, uint64_t now, int tick)
{
	struct tp_rel *r = &tp->rel[p->idx];
	uint32_t depth = tp->cfg->send_depth, frag, psn;
	struct rel_msg *m;
	int go;
	struct wire_rel w;
	struct tp_dest d;
	uint8_t *sb;
	size_t dlen;

	pthread_mutex_lock(&tp->slock);
	if (tp_dest_get(tp, p, &d))
		goto out;
	if (tp_free_slots(tp) < depth / 2)
		tp_reap_sends(tp);
	for (;;) {
		/* A slot first: rel_tx_next counts what it returns as sent.
		 * The wait drops slock, so the AH is read again. */
		if (!tp_free_slots(tp) &&
		    (tp_wait_slot(tp) || tp_dest_get(tp, p, &d)))
			goto out;
		go = rel_tx_next(&r->tx, now, &m, &frag, &psn);
		if (!go)
			break;
		sb = tp_slot(tp);
		dlen = wire_frag_build(sb, m->mtu - WIRE_REL_LEN, tp->self_id,
				       m->msg_id, m->chan, m->data, m->len,
				       frag);
		if (!dlen)
			continue; /* cannot happen: checked when queued */
		memset(&w, 0, sizeof(w));
		w.sess = r->tx.sess;
		w.psn = psn;
		if (go == REL_GO_LAST)
			w.rflags = WIRE_REL_ACKREQ;
		tp_rel_ack_fields(r, &w, 0);
		dlen = wire_rel_put(sb, dlen, &w);
		tp_fill_wr(tp, &d, sb, dlen);
	}
	if (r->rx.joined &&
	    (tick ? r->rx.ack_due : rel_rx_ack_urgent(&r->rx))) {
		sb = tp_slot(tp);
		memset(&w, 0, sizeof(w));
		tp_rel_ack_fields(r, &w, 1);
		dlen = wire_ack_build(sb, tp->self_id, &w);
		tp_fill_wr(tp, &d, sb, dlen);
	}
out:
	pthread_mutex_unlock(&tp->slock);
}

/* Add what a state machine counted since last time to a peer and total. */
static void tp_rel_pub(atomic_uint_fast64_t *peer, atomic_uint_fast64_t *total,
		       uint64_t count, uint64_t *seen)
{
	tp_add(peer, count - *seen);
	tp_add(total, count - *seen);
	*seen = count;
}

/* Counters for .status (under rel_lock). */
static void tp_rel_publish(struct tp *tp, struct peer *p, struct tp_rel *r)
{
	atomic_store(&p->cnt.rel_window,
		     r->tx.window < r->tx.credit ? r->tx.window : r->tx.credit);
	atomic_store(&p->cnt.rel_inflight, rel_tx_inflight(&r->tx));
	atomic_store(&p->cnt.rel_srtt_ms, rel_tx_srtt(&r->tx));
	atomic_store(&p->cnt.rel_rto_ms, r->tx.rto_ms);
	tp_rel_pub(&p->cnt.rel_retrans, &tp->totals.rel_retrans, r->tx.retrans,
		   &r->pub_retrans);
	tp_rel_pub(&p->cnt.rel_dups, &tp->totals.rel_dups, r->rx.dups,
		   &r->pub_dups);
	tp_rel_pub(&p->cnt.rel_timeouts, &tp->totals.rel_timeouts,
		   r->tx.timeouts, &r->pub_timeouts);
	tp_rel_pub(&p->cnt.rel_probes, &tp->totals.rel_probes,
		   r->tx.tail_probes, &r->pub_probes);
	tp_rel_pub(&p->cnt.rel_rtos, &tp->totals.rel_rtos, r->tx.rtos,
		   &r->pub_rtos);
}

/* Call done for finished messages (no lock held) and free them. */
static void tp_rel_complete(struct tp *tp, struct peer *p, struct rel_msg *m)
{
	struct rel_msg *next;

	for (; m; m = next) {
		next = m->next;
		if (!m->status) {
			tp_add(&p->cnt.msgs_tx, 1);
			tp_add(&p->cnt.bytes_tx, m->len);
			tp_add(&tp->totals.msgs_tx, 1);
			tp_add(&tp->totals.bytes_tx, m->len);
		}
		if (m->done)
			m->done(m->arg, m->status, m->len);
		free(m->data);
		free(m);
	}
}

/* A whole message was taken into a channel queue. */
static void tp_count_rx(struct tp *tp, struct peer *p, size_t len)
{
	tp_add(&p->cnt.msgs_rx, 1);
	tp_add(&p->cnt.bytes_rx, len);
	tp_add(&tp->totals.msgs_rx, 1);
	tp_add(&tp->totals.bytes_rx, len);
}

/* Offer the held message again; on success the stream moves on. */
static void tp_rel_try_held(struct tp *tp, struct peer *p, struct tp_rel *r)
{
	size_t len = r->hmsg.len;

	if (!r->held)
		return;
	if (tp->ops.deliver &&
	    !tp->ops.deliver(tp->arg, p, r->hmsg.chan, r->hmsg.data, len)) {
		r->held = 0;
		r->rx.blocked = 0;
		rel_rx_advance(&r->rx);
		r->rx.ack_now = 1; /* its writer waits for this ack */
		tp_count_rx(tp, p, len);
		return;
	}
	/* alive, still blocked: credit 0 */
	r->rx.ack_due = 1;
	r->rx.ack_now = 1;
}

/* Forget the held message and the one arriving (their stream is gone). */
static void tp_rel_drop_held(struct tp_rel *r)
{
	if (r->held)
		free(r->hmsg.data);
	r->held = 0;
	r->rx.blocked = 0;
	wire_seq_reset(&r->seq);
	memset(&r->rx.ahead, 0, sizeof(r->rx.ahead));
}

/* Keep datagram psn, which came past a gap, until the gap fills. */
static void tp_rel_keep(struct tp *tp, struct tp_rel *r, uint32_t psn,
			const uint8_t *dg, size_t len)
{
	size_t slot = tp->info.mtu_bytes;

	if (!r->ahead)
		r->ahead = malloc(slot * REL_SACK_BITS);
	if (!r->ahead || len > slot) {
		rel_rx_unhold(&r->rx, psn); /* it will come again */
		return;
	}
	memcpy(r->ahead + (psn % REL_SACK_BITS) * slot, dg, len);
	r->ahead_len[psn % REL_SACK_BITS] = (uint32_t)len;
}

static void tp_rel_take(struct tp *tp, struct peer *p, struct tp_rel *r,
			const uint8_t *dg, size_t len);

/* Take the kept datagrams that are next in order now (under rel_lock). */
static void tp_rel_drain(struct tp *tp, struct peer *p, struct tp_rel *r)
{
	uint32_t k;

	while (!r->held && rel_rx_ready(&r->rx)) {
		k = r->rx.nxt % REL_SACK_BITS;
		/* taken now, whatever becomes of it: no longer held */
		rel_rx_unhold(&r->rx, r->rx.nxt);
		tp_rel_take(tp, p, r, r->ahead + k * tp->info.mtu_bytes,
			    r->ahead_len[k]);
	}
}

/*
 * A reliable datagram from p (under srclock and rlock): take its ack,
 * then its data in psn order only.  A completed message is delivered at
 * once; if the channel queue refuses it, it is held and its last psn not
 * acknowledged, so the sender keeps it (backpressure, not loss).
 */
static void tp_rel_recv(struct tp *tp, struct peer *p, const struct wire_hdr *h,
			const uint8_t *dg, size_t dlen, uint64_t now)
{
	struct tp_rel *r = &tp->rel[p->idx];
	struct wire_rel w;
	long plen = wire_rel_get(dg, dlen, &w);
	enum rel_verdict v;
	int joined;

	if (plen < 0) {
		peer_count_drop(p, &tp->totals, DROP_MALFORMED);
		return;
	}
	pthread_mutex_lock(&tp->rel_lock);
	if (w.rflags & WIRE_REL_ACK) {
		rel_bits s;

		memcpy(s.w, w.sack, sizeof(s.w));
		rel_tx_ack(&r->tx, w.ack_sess, w.ack, w.credit,
			   !!(w.rflags & WIRE_REL_NAK), s, now);
	}
	if (h->type != WIRE_DATA)
		goto out;
	v = rel_rx_check(&r->rx, w.sess, w.psn, &joined);
	if (joined)
		tp_rel_drop_held(r);
	if ((w.rflags & WIRE_REL_ACKREQ) && r->rx.joined)
		rel_rx_ask_ack(&r->rx);
	if (v == REL_AHEAD) {
		tp_rel_keep(tp, r, w.psn, dg, (size_t)plen);
		goto out;
	}
	if (v != REL_ACCEPT)
		goto out;
	if (r->held)
		tp_rel_try_held(tp, p, r);
	else
		tp_rel_take(tp, p, r, dg, (size_t)plen);
	tp_rel_drain(tp, p, r);
out:
	pthread_mutex_unlock(&tp->rel_lock);
}

/*
 * Take the datagram at the stream's nxt (under rel_lock).  Not the shared
 * reassembly table: its timeout would drop a message that heavy loss makes
 * slow, and the stream would move on past it (acked, so the writer would
 * hear "delivered").
 */
static void tp_rel_take(struct tp *tp, struct peer *p, struct tp_rel *r,
			const uint8_t *dg, size_t len)
{
	struct wire_msg msg;
	int rc;

	rc = wire_seq_feed(&r->seq, tp->cfg->max_message, p->idx, dg, len,
			   &msg);
	if (rc == 0) {
		rel_rx_advance(&r->rx);
	} else if (rc == 1) {
		r->held = 1;
		r->hmsg = msg;
		tp_rel_try_held(tp, p, r);
		if (r->held)
			r->rx.blocked = 1;
	} else if (rc == -WIRE_DROP_NO_MEMORY) {
		/* not taken: it comes again */
		peer_count_drop(p, &tp->totals, DROP_QUEUE_FULL);
	} else {
		/* malformed from a peer we trust: skip it for good */
		if (-rc < (int)ARRAY_SIZE(tp_wire_drops))
			peer_count_drop(p, &tp->totals, tp_wire_drops[-rc]);
		rel_rx_advance(&r->rx);
	}
}

/*
 * Timers, held messages, windows and acks of every reliable peer.
 * Returns nonzero while anything waits (the progress loop then wakes
 * every few ms).
 */
static int tp_rel_service(struct tp *tp, int tick)
{
	uint64_t now = util_now_ms();
	struct rel_msg *done;
	int i, busy = 0;

	for (i = 0; i < tp->npeers; i++) {
		struct tp_rel *r = &tp->rel[i];
		struct peer *p = &tp->peers[i];

		if (!r->on)
			continue;
		pthread_mutex_lock(&tp->rel_lock);
		if (tick) {
			tp_rel_try_held(tp, p, r);
			tp_rel_drain(tp, p, r);
			rel_tx_tick(&r->tx, now, r->tx.sess + 1);
		}
		tp_rel_flush(tp, p, now, tick);
		tp_rel_publish(tp, p, r);
		busy |= rel_tx_busy(&r->tx) || r->held || r->rx.ack_due;
		done = rel_tx_take_done(&r->tx);
		pthread_mutex_unlock(&tp->rel_lock);
		tp_rel_complete(tp, p, done);
	}
	tp_flush(tp);
	return busy;
}

/* Queue a message for p's reliable stream and send what may go. */
int tp_send_async(struct tp *tp, struct peer *p, const char *chan,
		  const void *buf, size_t len, int flags,
		  void (*done_fn)(void *arg, int status, size_t len), void *arg)
{
	struct tp_rel *r = &tp->rel[p->idx];
	struct rel_msg *m, *done;
	struct tp_dest d;
	size_t chan_len;
	uint64_t one = 1;
	int rc;

	if (!r->on) {
		rc = tp_send(tp, p, chan, buf, len);
		if (rc)
			return rc;
		done_fn(arg, 0, len);
		return 0;
	}
	rc = tp_msg_check(tp, chan, buf, len);
	if (rc < 0)
		return rc;
	chan_len = (size_t)rc;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->data = malloc(len ? len : 1);
	if (!m->data) {
		free(m);
		return -ENOMEM;
	}
	if (len)
		memcpy(m->data, buf, len);
	m->len = len;
	memcpy(m->chan, chan, chan_len);
	m->chan[chan_len] = '\0';
	m->done = done_fn;
	m->arg = arg;

	pthread_mutex_lock(&tp->rel_lock);
	rc = tp_dest_get(tp, p, &d);
	if (!rc && d.max_message && len > d.max_message)
		rc = -EMSGSIZE; /* the peer would refuse it, yet ack it */
	if (!rc && (flags & TP_SEND_NONBLOCK) && rel_tx_busy(&r->tx) &&
	    !r->tx.credit)
		rc = -EAGAIN;
	if (!rc) {
		m->mtu = (uint32_t)d.mtu;
		m->nfrag = wire_frag_count(len, d.mtu - WIRE_REL_LEN, chan_len);
		if (!m->nfrag)
			rc = -EMSGSIZE;
	}
	if (rc) {
		pthread_mutex_unlock(&tp->rel_lock);
		free(m->data);
		free(m);
		return rc;
	}
	m->msg_id = atomic_fetch_add_explicit(&tp->msg_ids[p->idx], 1,
					      memory_order_relaxed);
	rel_tx_queue(&r->tx, m, util_now_ms());
	tp_rel_flush(tp, p, util_now_ms(), 0);
	tp_rel_publish(tp, p, r);
	done = rel_tx_take_done(&r->tx);
	pthread_mutex_unlock(&tp->rel_lock);
	tp_rel_complete(tp, p, done);
	tp_flush(tp);
	/* Let the progress thread arm its retransmission timer. */
	if (write(tp->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("%s: eventfd", __func__);
	return 0;
}

/* p restarted, went down or is gone: its writers get err (new session). */
static void tp_rel_reset(struct tp *tp, struct peer *p, int err, int rx_too)
{
	struct tp_rel *r = &tp->rel[p->idx];
	struct rel_msg *done;

	if (!r->on)
		return;
	pthread_mutex_lock(&tp->rel_lock);
	rel_tx_reset(&r->tx, err, r->tx.sess + 1);
	if (rx_too) {
		rel_rx_forget(&r->rx);
		tp_rel_drop_held(r);
	}
	tp_rel_publish(tp, p, r);
	done = rel_tx_take_done(&r->tx);
	pthread_mutex_unlock(&tp->rel_lock);
	tp_rel_complete(tp, p, done);
}

/* One receive completion: check, identify, reassemble (under the locks). */
static int tp_recv_one(struct tp *tp, const struct ibv_wc *wc, uint64_t now,
		       struct tp_done *done)
{
	const size_t grhlen = sizeof(struct ibv_grh);
	uint8_t *slot;
	struct wire_hdr h;
	struct peer *p;
	size_t dlen;
	int rc;

	if (wc->wr_id >= tp->cfg->recv_depth)
		return 0; /* not ours: nothing to repost */
	tp->rfree[tp->nrfree++] = (uint32_t)wc->wr_id;
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR) {
			peer_count_drop(NULL, &tp->totals, DROP_MALFORMED);
			tp_log_wc("receive", wc, &tp->last_rerr_ms,
				  &tp->rerr_suppressed);
		}
		return 0;
	}
	slot = tp->rbuf + (size_t)wc->wr_id * tp->rslot;
	p = tp_src_match(tp, wc, slot, now);
	if (!p) {
		peer_count_drop(NULL, &tp->totals, DROP_UNKNOWN_SRC);
		return 0;
	}
	if (wc->byte_len < grhlen + WIRE_HDR_LEN || wc->byte_len > tp->rslot) {
		peer_count_drop(p, &tp->totals, DROP_MALFORMED);
		return 0;
	}
	dlen = wc->byte_len - grhlen;
	if (wire_hdr_decode(&h, slot + grhlen, dlen) || h.src != p->id) {
		peer_count_drop(p, &tp->totals, DROP_MALFORMED);
		return 0;
	}
	if (tp->rel[p->idx].on) {
		/* TEST HOOK: lose datagrams on purpose (see tp_open). */
		if (tp->drop_permille) {
			tp->drop_rng ^= tp->drop_rng << 13;
			tp->drop_rng ^= tp->drop_rng >> 7;
			tp->drop_rng ^= tp->drop_rng << 17;
			if (tp->drop_rng % 1000 < tp->drop_permille)
				return 0;
		}
		tp_rel_recv(tp, p, &h, slot + grhlen, dlen, now);
		return 0;
	}
	rc = wire_reasm_feed(tp->reasm, p->idx, slot + grhlen, dlen, now,
			     &done->msg);
	if (rc == 1) {
		done->p = p;
		return 1;
	}
	if (rc < 0 && -rc < (int)ARRAY_SIZE(tp_wire_drops))
		peer_count_drop(p, &tp->totals, tp_wire_drops[-rc]);
	return 0;
}

/* Hand a whole message to the file system; its refusal is a drop. */
static void tp_deliver(struct tp *tp, struct tp_done *d)
{
	struct peer *p = d->p;
	size_t len = d->msg.len;
	int rc = -ENOSPC;

	if (tp->ops.deliver)
		rc = tp->ops.deliver(tp->arg, p, d->msg.chan, d->msg.data, len);
	if (rc) {
		free(d->msg.data);
		peer_count_drop(p, &tp->totals, DROP_QUEUE_FULL);
		return;
	}
	tp_add(&p->cnt.msgs_rx, 1);
	tp_add(&p->cnt.bytes_rx, len);
	tp_add(&tp->totals.msgs_rx, 1);
	tp_add(&tp->totals.bytes_rx, len);
}

/* Wake the readers deliver left (after the acks went). */
static void tp_announce(struct tp *tp)
{
	if (tp->ops.announce)
		tp->ops.announce(tp->arg);
}

/* Drain the receive CQ in batches; repost each batch as one chain. */
static int tp_drain_recvs(struct tp *tp)
{
	struct ibv_wc wc[TP_POLL_BATCH];
	struct tp_done done[TP_POLL_BATCH];
	int n, i, nd, total = 0;
	uint64_t now;

	do {
		n = ibv_poll_cq(tp->rcq, TP_POLL_BATCH, wc);
		if (n <= 0) {
			if (n < 0)
				log_warnx("%s: ibv_poll_cq failed", __func__);
			break;
		}
		now = util_now_ms();
		nd = 0;
		pthread_rwlock_rdlock(&tp->srclock);
		pthread_mutex_lock(&tp->rlock);
		for (i = 0; i < n; i++)
			nd += tp_recv_one(tp, &wc[i], now, &done[nd]);
		pthread_mutex_unlock(&tp->rlock);
		pthread_rwlock_unlock(&tp->srclock);
		tp_post_recvs(tp);
		for (i = 0; i < nd; i++)
			tp_deliver(tp, &done[i]);
		/* acks of this batch in one go, windows reopened; then
		 * the readers deliver left are woken */
		if (tp->any_rel)
			tp_rel_service(tp, 0);
		tp_announce(tp);
		total += n;
	} while (n == TP_POLL_BATCH);
	return total;
}

/* Count one message that never completed against the peer that sent it. */
static void tp_count_expired(void *arg, int peer)
{
	struct tp *tp = arg;

	peer_count_drop(peer >= 0 && peer < tp->npeers ? &tp->peers[peer]
						       : NULL,
			&tp->totals, DROP_REASM_TIMEOUT);
}

/* Drop partial messages past their time and arm the timer for the next. */
static void tp_expire(struct tp *tp)
{
	struct itimerspec its;
	uint64_t now = util_now_ms();
	int next;

	pthread_mutex_lock(&tp->rlock);
	wire_reasm_expire_each(tp->reasm, now, tp_count_expired, tp);
	next = wire_reasm_next_timeout(tp->reasm, now);
	pthread_mutex_unlock(&tp->rlock);
	if (next < 0 || tp->timer_armed || tp->tfd < 0)
		return;
	/* A little slack so one expiry pass covers several messages. */
	next += 10;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = next / 1000;
	its.it_value.tv_nsec = (long)(next % 1000) * 1000000;
	if (!timerfd_settime(tp->tfd, 0, &its, NULL))
		tp->timer_armed = 1;
}

/*
 * Completion channel readable: drain, then take the event, re-arm and
 * drain again.  The two system calls of taking and re-arming come after
 * the batch is delivered, off a waiting reader's path (under TCG they
 * were 195 us of every wake-up); a completion that lands between the
 * first drain and the re-arm raises no event, so the second drain (a
 * poll of a user-space ring) takes it.  Only the receive CQ has the
 * channel; epoll is level-triggered, so a second event brings us back.
 */
static void tp_chan_event(struct tp *tp)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	tp_drain_recvs(tp);
	if (ibv_get_cq_event(tp->chan, &cq, &cq_ctx)) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			log_warn("%s: ibv_get_cq_event", __func__);
		return;
	}
	ibv_ack_cq_events(cq, 1);
	if (ibv_req_notify_cq(cq, 0))
		log_warn("%s: ibv_req_notify_cq", __func__);
	tp_drain_recvs(tp);
}

/* busy_poll = 1: spin on both CQs instead of sleeping on events. */
static int tp_rel_service(struct tp *tp, int tick);

static void tp_busy_loop(struct tp *tp)
{
	uint64_t next_expire = 0, now;

	while (!atomic_load(&tp->stop)) {
		tp_drain_recvs(tp);
		if (!pthread_mutex_trylock(&tp->slock)) {
			tp_reap_sends(tp);
			tp_push(tp);
			pthread_mutex_unlock(&tp->slock);
		}
		now = util_now_ms();
		if (now >= next_expire) {
			tp->timer_armed = 1; /* no timerfd in this mode */
			tp_expire(tp);
			next_expire = now + 50;
		}
		if (tp->any_rel) {
			tp_rel_service(tp, 1);
			tp_announce(tp);
		}
	}
}

/*
 * Reliable timers, every TP_REL_TICK_MS while anything waits: timeouts,
 * held messages, and the acks not worth a datagram of their own before.
 * Between ticks only urgent acks go.  Returns the epoll timeout.
 */
static int tp_rel_tick(struct tp *tp)
{
	uint64_t now = util_now_ms();
	int tick = now >= tp->rel_tick_at, busy;

	if (tick)
		tp->rel_tick_at = now + TP_REL_TICK_MS;
	busy = tp_rel_service(tp, tick);
	tp_announce(tp); /* a held message may have gone in */
	if (!busy)
		return -1;
	return tp->rel_tick_at > now ? (int)(tp->rel_tick_at - now) : 1;
}

/* The progress thread: sleeps until a completion, a timer or stop. */
static void *tp_progress(void *arg)
{
	struct tp *tp = arg;
	struct epoll_event ev[4];
	uint64_t v;
	int n, i, wait_ms = -1;

	if (tp->cfg->busy_poll) {
		tp_busy_loop(tp);
		return NULL;
	}
	while (!atomic_load(&tp->stop)) {
		n = epoll_wait(tp->epfd, ev, 4, wait_ms);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_warn("%s: epoll_wait", __func__);
			break;
		}
		for (i = 0; i < n; i++) {
			int fd = ev[i].data.fd;

			if (fd == tp->chan->fd) {
				tp_chan_event(tp);
			} else if (fd == tp->tfd) {
				if (read(tp->tfd, &v, sizeof(v)) < 0 &&
				    errno != EAGAIN)
					log_warn("%s: timerfd", __func__);
				tp->timer_armed = 0;
			} else if (fd == tp->efd) {
				/* a reliable send woke us to arm its timers */
				if (read(tp->efd, &v, sizeof(v)) < 0 &&
				    errno != EAGAIN)
					log_warn("%s: eventfd", __func__);
			}
		}
		tp_expire(tp);
		if (tp->any_rel)
			wait_ms = tp_rel_tick(tp);
	}
	return NULL;
}

/* Make fd non-blocking, as the epoll loop needs. */
static int tp_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* epoll over the completion channel, the expiry timer and the stop fd. */
static int tp_setup_poll(struct tp *tp)
{
	int fds[3], i;
	struct epoll_event ev;

	tp->epfd = epoll_create1(EPOLL_CLOEXEC);
	tp->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	tp->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (tp->epfd < 0 || tp->tfd < 0 || tp->efd < 0)
		return -errno;
	if (tp_nonblock(tp->chan->fd))
		return -errno;
	fds[0] = tp->chan->fd;
	fds[1] = tp->tfd;
	fds[2] = tp->efd;
	for (i = 0; i < 3; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.fd = fds[i];
		if (epoll_ctl(tp->epfd, EPOLL_CTL_ADD, fds[i], &ev))
			return -errno;
	}
	return 0;
}

/* Buffers and arrays the engine keeps beside the verbs objects. */
static int tp_alloc_tables(struct tp *tp)
{
	uint32_t i, rd = tp->cfg->recv_depth;

	tp->rwr = calloc(rd, sizeof(*tp->rwr));
	tp->rsge = calloc(rd, sizeof(*tp->rsge));
	tp->rfree = calloc(rd, sizeof(*tp->rfree));
	tp->src = calloc(tp->npeers, sizeof(*tp->src));
	tp->msg_ids = calloc(tp->npeers, sizeof(*tp->msg_ids));
	tp->rel = calloc(tp->npeers, sizeof(*tp->rel));
	tp->swr = calloc(tp->cfg->send_depth, sizeof(*tp->swr));
	tp->ssge = calloc(tp->cfg->send_depth, sizeof(*tp->ssge));
	if (!tp->rwr || !tp->rsge || !tp->rfree || !tp->src || !tp->msg_ids ||
	    !tp->rel || !tp->swr || !tp->ssge)
		return -ENOMEM;
	for (i = 0; i < (uint32_t)tp->npeers; i++) {
		struct tp_rel *r = &tp->rel[i];
		uint32_t sess;

		if (getrandom(&sess, sizeof(sess), GRND_NONBLOCK) !=
		    sizeof(sess))
			sess = (uint32_t)util_now_ms() * 2654435761u + i;
		r->on = tp->peers[i].conf->delivery == DELIVERY_RELIABLE;
		tp->any_rel |= r->on;
		rel_tx_init(&r->tx, sess, REL_WINDOW_DEFAULT,
			    (uint32_t)tp->cfg->peer_timeout_ms);
		rel_rx_init(&r->rx, REL_WINDOW_DEFAULT);
	}
	for (i = 0; i < (uint32_t)tp->npeers; i++) {
		unsigned r;

		/* A random start: a restarted sender reuses no recent ids. */
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (unsigned)util_now_ms() * 2654435761u + i;
		atomic_init(&tp->msg_ids[i], r);
	}
	return 0;
}

/* Release the plain-memory tables (tolerates a partial tp_alloc_tables). */
static void tp_free_tables(struct tp *tp)
{
	int i;

	for (i = 0; tp->rel && i < tp->npeers; i++) {
		tp_rel_drop_held(&tp->rel[i]);
		free(tp->rel[i].ahead);
	}
	free(tp->rwr);
	free(tp->rsge);
	free(tp->rfree);
	free(tp->swr);
	free(tp->ssge);
	free(tp->src);
	free((void *)tp->msg_ids);
	free(tp->rel);
}

/* Open the engine; on failure undo in reverse order, as ud_pingpong does. */
int tp_open(struct tp **out, const struct config *cfg, struct peer *peers,
	    const struct tp_ops *ops, void *arg)
{
	struct ibv_port_attr pa;
	struct tp *tp;
	size_t mem_limit;
	uint32_t i;
	int rc;

	if (cfg->local < 0 || cfg->local >= cfg->nnodes)
		return -EINVAL;
	tp = calloc(1, sizeof(*tp));
	if (!tp)
		return -ENOMEM;
	tp->cfg = cfg;
	tp->peers = peers;
	tp->npeers = cfg->nnodes;
	if (ops)
		tp->ops = *ops;
	tp->arg = arg;
	tp->self_id = wire_node_id(cfg->nodes[cfg->local].name);
	tp->epfd = tp->tfd = tp->efd = -1;
	tp->sig_every = cfg->send_depth / 4 ? cfg->send_depth / 4 : 1;
	if (tp->sig_every > 64)
		tp->sig_every = 64;
	pthread_mutex_init(&tp->slock, NULL);
	pthread_mutex_init(&tp->rlock, NULL);
	pthread_mutex_init(&tp->rel_lock, NULL);
	pthread_rwlock_init(&tp->srclock, NULL);
	{
		/* TEST HOOK: drop this many per mille of received datagrams
		 * from reliable peers, to test recovery without a lossy
		 * wire.  Never set it in production. */
		const char *e = getenv("IBFS_TEST_DROP_PERMILLE");

		if (e && *e) {
			tp->drop_permille = (uint32_t)strtoul(e, NULL, 10);
			if (tp->drop_permille > 1000)
				tp->drop_permille = 1000;
			tp->drop_rng = util_now_ms() | 1;
			log_warnx("TEST HOOK IBFS_TEST_DROP_PERMILLE=%u: "
				  "dropping received reliable datagrams on "
				  "purpose",
				  tp->drop_permille);
		}
	}

	rc = tp_alloc_tables(tp);
	if (rc)
		goto err_tables;
	mem_limit = cfg->max_message * 16;
	if (mem_limit < ((size_t)64 << 20))
		mem_limit = (size_t)64 << 20;
	tp->reasm = wire_reasm_new(cfg->max_message, mem_limit,
				   cfg->reassembly_timeout_ms);
	if (!tp->reasm) {
		rc = -ENOMEM;
		goto err_tables;
	}

	rc = tp_open_device(tp, &pa);
	if (rc)
		goto err_reasm;
	rc = tp_check_limits(tp);
	if (rc)
		goto err_dev;
	tp->pd = ibv_alloc_pd(tp->ctx);
	if (!tp->pd) {
		log_warn("%s: ibv_alloc_pd", __func__);
		rc = -EIO;
		goto err_dev;
	}
	rc = tp_alloc_mr(tp, (size_t)cfg->send_depth * tp->info.mtu_bytes,
			 &tp->sbuf, &tp->smr);
	if (rc)
		goto err_pd;
	tp->rslot = tp->info.mtu_bytes + sizeof(struct ibv_grh);
	rc = tp_alloc_mr(tp, (size_t)cfg->recv_depth * tp->rslot, &tp->rbuf,
			 &tp->rmr);
	if (rc)
		goto err_smr;
	tp->chan = ibv_create_comp_channel(tp->ctx);
	if (!tp->chan) {
		log_warn("%s: ibv_create_comp_channel", __func__);
		rc = -EIO;
		goto err_rmr;
	}
	/* No channel for sends: senders reap them as they post, so a send
	 * completion never wakes the progress thread. */
	tp->scq = ibv_create_cq(tp->ctx, cfg->send_depth, tp, NULL, 0);
	if (!tp->scq) {
		log_warn("%s: ibv_create_cq (send)", __func__);
		rc = -EIO;
		goto err_chan;
	}
	tp->rcq = ibv_create_cq(tp->ctx, cfg->recv_depth, tp, tp->chan, 0);
	if (!tp->rcq) {
		log_warn("%s: ibv_create_cq (recv)", __func__);
		rc = -EIO;
		goto err_scq;
	}
	rc = tp_create_qp(tp);
	if (rc)
		goto err_rcq;
	rc = tp_qp_to_rts(tp);
	if (rc)
		goto err_qp;
	for (i = 0; i < cfg->recv_depth; i++)
		tp->rfree[i] = i;
	tp->nrfree = cfg->recv_depth;
	rc = tp_post_recvs(tp);
	if (rc)
		goto err_qp;
	if (ibv_req_notify_cq(tp->rcq, 0)) {
		log_warn("%s: ibv_req_notify_cq", __func__);
		rc = -EIO;
		goto err_qp;
	}
	rc = tp_setup_poll(tp);
	if (rc) {
		log_warnx("%s: epoll/timerfd/eventfd: %s", __func__,
			  strerror(-rc));
		goto err_poll;
	}

	tp->info.qpn = tp->qp->qp_num;
	tp->info.qkey = cfg->qkey;
	tp->info.recv_depth = cfg->recv_depth;
	tp->info.send_depth = cfg->send_depth;

	rc = pthread_create(&tp->thr, NULL, tp_progress, tp);
	if (rc) {
		rc = -rc;
		goto err_poll;
	}
	tp->thr_started = 1;
	log_info("%s: %s port %d (%s) gid index %d, qpn 0x%06x, mtu %zu, "
		 "inline %u, recv %u, send %u",
		 __func__, tp->info.device, tp->info.port,
		 tp->info.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB",
		 tp->info.gid_index, tp->info.qpn, tp->info.mtu_bytes,
		 tp->max_inline, cfg->recv_depth, cfg->send_depth);
	*out = tp;
	return 0;

err_poll:
	if (tp->epfd >= 0)
		close(tp->epfd);
	if (tp->tfd >= 0)
		close(tp->tfd);
	if (tp->efd >= 0)
		close(tp->efd);
err_qp:
	ibv_destroy_qp(tp->qp);
err_rcq:
	ibv_destroy_cq(tp->rcq);
err_scq:
	ibv_destroy_cq(tp->scq);
err_chan:
	ibv_destroy_comp_channel(tp->chan);
err_rmr:
	ibv_dereg_mr(tp->rmr);
	free(tp->rbuf);
err_smr:
	ibv_dereg_mr(tp->smr);
	free(tp->sbuf);
err_pd:
	ibv_dealloc_pd(tp->pd);
err_dev:
	ibv_close_device(tp->ctx);
err_reasm:
	wire_reasm_free(tp->reasm);
err_tables:
	tp_free_tables(tp);
	pthread_rwlock_destroy(&tp->srclock);
	pthread_mutex_destroy(&tp->rlock);
	pthread_mutex_destroy(&tp->slock);
	free(tp);
	return rc;
}

/* Give signalled sends a moment to leave before the QP goes away. */
static void tp_drain_sends(struct tp *tp)
{
	uint64_t deadline = util_now_ms() + 1000;
	int done;

	for (;;) {
		pthread_mutex_lock(&tp->slock);
		tp_push(tp);
		tp_reap_sends(tp);
		done = tp->s_done >= tp->s_last_sig;
		pthread_mutex_unlock(&tp->slock);
		if (done || util_now_ms() > deadline)
			return;
		usleep(1000);
	}
}

/* Stop the thread, then release everything in the reverse of tp_open. */
void tp_close(struct tp *tp)
{
	uint64_t one = 1;
	int i;

	if (!tp)
		return;
	tp_drain_sends(tp);
	atomic_store(&tp->stop, 1);
	if (tp->thr_started) {
		if (write(tp->efd, &one, sizeof(one)) < 0)
			log_warn("%s: eventfd", __func__);
		pthread_join(tp->thr, NULL);
	}
	for (i = 0; i < tp->npeers; i++) {
		tp_rel_reset(tp, &tp->peers[i], -ENOTCONN, 1);
	}
	close(tp->epfd);
	close(tp->tfd);
	close(tp->efd);
	/* No send is in flight once the QP is gone: every AH may go. */
	ibv_destroy_qp(tp->qp);
	for (i = 0; i < tp->npeers; i++) {
		struct peer *p = &tp->peers[i];

		pthread_mutex_lock(&p->lock);
		if (p->ah)
			ibv_destroy_ah(p->ah);
		p->ah = NULL;
		p->up = 0;
		pthread_mutex_unlock(&p->lock);
	}
	tp_free_retired(tp, 1);
	ibv_destroy_cq(tp->rcq);
	ibv_destroy_cq(tp->scq);
	ibv_destroy_comp_channel(tp->chan);
	ibv_dereg_mr(tp->rmr);
	free(tp->rbuf);
	ibv_dereg_mr(tp->smr);
	free(tp->sbuf);
	ibv_dealloc_pd(tp->pd);
	ibv_close_device(tp->ctx);
	wire_reasm_free(tp->reasm);
	tp_free_tables(tp);
	pthread_rwlock_destroy(&tp->srclock);
	pthread_mutex_destroy(&tp->rel_lock);
	pthread_mutex_destroy(&tp->rlock);
	pthread_mutex_destroy(&tp->slock);
	free(tp);
}

/* What this node is, for the hello and for .status. */
const struct tp_info *tp_info(const struct tp *tp)
{
	return &tp->info;
}

/* The device context route.c queries GIDs on. */
struct ibv_context *tp_context(const struct tp *tp)
{
	return tp->ctx;
}

/* The PD every AH must be made on. */
struct ibv_pd *tp_pd(const struct tp *tp)
{
	return tp->pd;
}

/* Counters over all peers plus drops that matched none. */
struct peer_counters *tp_totals(struct tp *tp)
{
	return &tp->totals;
}

/*
 * Put an AH aside until the sends posted so far have completed; the next
 * WR is signalled so that its completion tells us (under slock).
 */
static void tp_retire_ah(struct tp *tp, struct ibv_ah *ah)
{
	struct tp_retired *r;

	tp_reap_sends(tp);
	if (tp->s_done >= tp->s_filled) {
		if (ibv_destroy_ah(ah))
			log_warn("%s: ibv_destroy_ah", __func__);
		return;
	}
	r = malloc(sizeof(*r));
	if (!r) {
		/* Leak rather than free an AH a WQE may still use. */
		log_warnx("%s: out of memory; keeping an AH", __func__);
		return;
	}
	r->ah = ah;
	r->seq = tp->s_filled;
	r->next = tp->retired;
	tp->retired = r;
	tp->sig_next = 1;
}

/* Set who may send to us as p; a new address forgets its partials. */
static void tp_src_set(struct tp *tp, struct peer *p,
		       const struct peer_addr *addr)
{
	struct tp_src *s = &tp->src[p->idx];
	int changed;

	pthread_rwlock_wrlock(&tp->srclock);
	changed = !s->valid || s->qpn != addr->qpn ||
		  memcmp(&s->gid, &addr->gid, sizeof(s->gid));
	s->valid = 1;
	s->linger_until = 0;
	s->qpn = addr->qpn;
	s->lid = addr->lid;
	s->gid = addr->gid;
	pthread_rwlock_unlock(&tp->srclock);
	if (changed) {
		pthread_mutex_lock(&tp->rlock);
		wire_reasm_forget_peer(tp->reasm, p->idx);
		pthread_mutex_lock(&tp->rel_lock);
		rel_rx_forget(&tp->rel[p->idx].rx);
		tp_rel_drop_held(&tp->rel[p->idx]);
		pthread_mutex_unlock(&tp->rel_lock);
		pthread_mutex_unlock(&tp->rlock);
	}
}

/* Accept p's datagrams before it is up (handshake, first half). */
void tp_peer_expect(struct tp *tp, struct peer *p, const struct peer_addr *addr)
{
	tp_src_set(tp, p, addr);
}

/* Install a freshly resolved AH; the old one retires once unused. */
void tp_peer_up(struct tp *tp, struct peer *p, const struct peer_addr *addr,
		struct ibv_ah *ah, enum config_route route)
{
	struct ibv_ah *old;
	int changed;

	pthread_mutex_lock(&p->lock);
	changed = p->addr.qpn != addr->qpn ||
		  memcmp(&p->addr.gid, &addr->gid, sizeof(addr->gid));
	pthread_mutex_unlock(&p->lock);
	/* A new incarnation: what was pending for the old one fails. */
	if (changed)
		tp_rel_reset(tp, p, -ENOTCONN, 0);
	tp_src_set(tp, p, addr);
	pthread_mutex_lock(&tp->slock);
	pthread_mutex_lock(&p->lock);
	old = p->ah;
	p->ah = ah;
	p->addr = *addr;
	p->route_used = route;
	p->up = 1;
	p->epoch++;
	p->since = time(NULL);
	pthread_mutex_unlock(&p->lock);
	if (old && old != ah)
		tp_retire_ah(tp, old);
	pthread_mutex_unlock(&tp->slock);
	tp_add(&p->cnt.ah_resolutions, 1);
	tp_add(&tp->totals.ah_resolutions, 1);
}

/*
 * Refuse sends to p.  Its datagrams are still accepted for a while: the
 * session often ends (the peer finished and exited) while what it sent
 * last still waits in our CQ.  Its partial messages expire on their own,
 * or go at once when a new address is installed.
 */
void tp_peer_down(struct tp *tp, struct peer *p)
{
	struct ibv_ah *old;
	int was_up;

	pthread_mutex_lock(&tp->slock);
	pthread_mutex_lock(&p->lock);
	was_up = p->up;
	old = p->ah;
	p->ah = NULL;
	p->up = 0;
	if (was_up)
		p->since = time(NULL);
	pthread_mutex_unlock(&p->lock);
	if (old)
		tp_retire_ah(tp, old);
	pthread_mutex_unlock(&tp->slock);

	tp_rel_reset(tp, p, -ENOTCONN, 0);

	pthread_rwlock_wrlock(&tp->srclock);
	if (tp->src[p->idx].valid && !tp->src[p->idx].linger_until)
		tp->src[p->idx].linger_until =
			util_now_ms() + tp->cfg->reassembly_timeout_ms;
	pthread_rwlock_unlock(&tp->srclock);
}
