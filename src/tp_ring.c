/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The send ring: registered slots, one WR each, shared by datagram and
 * reliable sends.  Fragments are built by wire.c straight into the slots
 * (the one copy: caller buffer -> registered memory) and posted as chains
 * of WRs; every send reaps the send CQ first, so no thread waits for send
 * completions.  An AH that is replaced or dropped retires here until the
 * sends that use it have completed.  Any sender thread, under ring.lock.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "tp_int.h"
#include "util.h"

/* Set up the ring's WR tables and lock (slots come with tp_dev_open). */
int tp_ring_open(struct tp *tp)
{
	uint32_t depth = tp->cfg->send_depth;

	tp->ring.sig_every = depth / 4 ? depth / 4 : 1;
	if (tp->ring.sig_every > 64)
		tp->ring.sig_every = 64;
	tp->ring.wr = calloc(depth, sizeof(*tp->ring.wr));
	tp->ring.sge = calloc(depth, sizeof(*tp->ring.sge));
	if (!tp->ring.wr || !tp->ring.sge) {
		free(tp->ring.wr);
		free(tp->ring.sge);
		return -ENOMEM;
	}
	pthread_mutex_init(&tp->ring.lock, NULL);
	return 0;
}

/* Free what tp_ring_open made (retired AHs went with the QP: tp_close). */
void tp_ring_close(struct tp *tp)
{
	pthread_mutex_destroy(&tp->ring.lock);
	free(tp->ring.wr);
	free(tp->ring.sge);
}

/* Free retired AHs whose sends have all completed (under ring.lock). */
void tp_ring_free_retired(struct tp *tp, int all)
{
	struct tp_retired **pp = &tp->ring.retired, *r;

	while ((r = *pp)) {
		if (all || tp->ring.done >= r->seq) {
			*pp = r->next;
			if (ibv_destroy_ah(r->ah))
				log_warn("transport: ibv_destroy_ah");
			free(r);
		} else {
			pp = &r->next;
		}
	}
}

/* Log a failed completion, at most once a second with a count. */
void tp_log_wc(const char *what, const struct ibv_wc *wc, uint64_t *last_ms,
	       unsigned long *suppressed)
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
 * it back to RTS (under ring.lock).  The flushed WRs complete with
 * IBV_WC_WR_FLUSH_ERR, which frees their slots like any completion.
 */
static void tp_ring_recover(struct tp *tp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	tp->ring.sq_error = 0;
	if (ibv_query_qp(tp->dev.qp, &a, IBV_QP_STATE, &ia)) {
		log_warn("transport: ibv_query_qp");
		return;
	}
	if (a.qp_state != IBV_QPS_SQE) {
		if (a.qp_state != IBV_QPS_RTS)
			log_warnx("transport: QP in state %d, not RTS; sends "
				  "will "
				  "fail",
				  a.qp_state);
		return;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.cur_qp_state = IBV_QPS_SQE;
	if (ibv_modify_qp(tp->dev.qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE))
		log_warn("transport: modify QP SQE -> RTS");
	else
		log_warnx(
			"transport: send queue error cleared (QP back to RTS)");
}

/* Reap send completions: a signalled one frees every slot up to it. */
int tp_ring_reap(struct tp *tp)
{
	struct ibv_wc wc[TP_POLL_BATCH];
	int n, i, total = 0;

	if (!tp->dev.scq) /* the device is gone (tp_heal.c) */
		return 0;
	do {
		n = ibv_poll_cq(tp->dev.scq, TP_POLL_BATCH, wc);
		if (n < 0) {
			log_warnx("transport: ibv_poll_cq failed");
			return -EIO;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS &&
			    wc[i].status != IBV_WC_WR_FLUSH_ERR) {
				tp_add(&tp->totals.drops[DROP_MALFORMED], 1);
				tp_log_wc("send", &wc[i], &tp->ring.last_err_ms,
					  &tp->ring.err_suppressed);
				tp->ring.sq_error = 1;
			}
			if (wc[i].wr_id > tp->ring.done &&
			    wc[i].wr_id <= tp->ring.posted)
				tp->ring.done = wc[i].wr_id;
		}
		total += n;
	} while (n == TP_POLL_BATCH);
	if (tp->ring.retired)
		tp_ring_free_retired(tp, 0);
	if (tp->ring.sq_error)
		tp_ring_recover(tp);
	return total;
}

/* Free send slots (ring of send_depth) right now. */
uint32_t tp_ring_free(const struct tp *tp)
{
	return tp->cfg->send_depth -
	       (uint32_t)(tp->ring.filled - tp->ring.done);
}

/*
 * Ring the doorbell for every WR filled and not yet posted, unless
 * another thread is posting: it takes them when its own post returns.
 * Called and returns under ring.lock, which it drops around ibv_post_send
 * (the kernel's work under soft-RoCE) so that others can fill meanwhile.
 * A failed post is logged and its datagrams counted as dropped: the
 * writers were answered already.
 */
void tp_ring_push(struct tp *tp)
{
	uint32_t depth = tp->cfg->send_depth, first, k, n, sent;
	struct ibv_send_wr *bad = NULL;
	uint64_t a, b, s;
	int rc;

	if (!tp->dev.qp) { /* the device is gone (tp_heal.c): none goes */
		tp_add(&tp->totals.drops[DROP_MALFORMED],
		       tp->ring.filled - tp->ring.posted);
		tp->ring.done = tp->ring.posted = tp->ring.filled;
		return;
	}
	while (!tp->ring.posting && tp->ring.posted < tp->ring.filled) {
		a = tp->ring.posted;
		b = tp->ring.filled;
		for (s = a; s < b; s++)
			tp->ring.wr[s % depth].next =
				s + 1 < b ? &tp->ring.wr[(s + 1) % depth]
					  : NULL;
		first = (uint32_t)(a % depth);
		/* Set before the post: a completion may be reaped at once. */
		tp->ring.posted = b;
		tp->ring.posting = 1;
		pthread_mutex_unlock(&tp->ring.lock);
		rc = ibv_post_send(tp->dev.qp, &tp->ring.wr[first], &bad);
		pthread_mutex_lock(&tp->ring.lock);
		tp->ring.posting = 0;
		if (!rc)
			continue;
		n = (uint32_t)(b - a);
		sent = bad ? ((uint32_t)(bad - tp->ring.wr) + depth - first) %
				       depth
			   : 0;
		log_warnx("transport: ibv_post_send: %s (%u of %u WRs not "
			  "posted)",
			  strerror(rc), n - sent, n);
		tp_add(&tp->totals.drops[DROP_MALFORMED], n - sent);
		if (tp->ring.filled == b) {
			/* Nothing after them: their slots are free again. */
			tp->ring.filled = tp->ring.posted = a + sent;
			if (tp->ring.last_sig > tp->ring.filled)
				tp->ring.last_sig = tp->ring.filled;
			tp->ring.sig_next = 1;
		} else {
			/* Filled after them: the last of those, signalled,
			 * frees their slots when it completes. */
			k = (uint32_t)((tp->ring.filled - 1) % depth);
			tp->ring.wr[k].send_flags |= IBV_SEND_SIGNALED;
			tp->ring.last_sig = tp->ring.filled;
		}
	}
}

/*
 * Wait until a slot frees (called and returns under ring.lock, dropped while
 * waiting, so a caller re-reads what ring.lock guards, such as the AH): the
 * last WR filled before the pool ran dry was signalled (pool pressure),
 * so its completion comes once it is posted.
 */
int tp_ring_wait(struct tp *tp)
{
	uint64_t deadline = 0;

	for (;;) {
		if (tp_ring_reap(tp) < 0)
			return -EIO;
		if (tp_ring_free(tp))
			return 0;
		tp_ring_push(tp);
		if (!deadline)
			deadline = util_now_ms() + TP_SEND_WAIT_MS;
		else if (util_now_ms() > deadline)
			break;
		pthread_mutex_unlock(&tp->ring.lock);
		sched_yield();
		pthread_mutex_lock(&tp->ring.lock);
	}
	log_warnx("transport: no send completion for %d ms; is the QP in "
		  "error?",
		  TP_SEND_WAIT_MS);
	return -EIO;
}

/*
 * A free slot for the next WR (under ring.lock), waiting for one if the
 * ring is full: the wait drops the lock, so the peer (or the group, p
 * NULL) may have gone meanwhile and d is read again.  0, or -EIO /
 * -ENOTCONN.
 */
int tp_ring_next(struct tp *tp, struct peer *p, struct tp_dest *d)
{
	int rc;

	if (tp_ring_free(tp))
		return 0;
	rc = tp_ring_wait(tp);
	if (!rc)
		rc = tp_dest_get(tp, p, d, 0);
	return rc;
}

/* The group's AH (under ring.lock); -ENOTCONN when not joined. */
static int tp_dest_group(struct tp *tp, struct tp_dest *d)
{
	if (tp->mcast.state != TP_MCAST_JOINED || !tp->mcast.ah)
		return -ENOTCONN;
	d->ah = tp->mcast.ah;
	d->qpn = TP_MCAST_QPN;
	/* every node's QP has the config's qkey: the group's is unused */
	d->qkey = tp->cfg->qkey;
	d->mtu = tp->info.mtu_bytes;
	/* one stream serves every member: what the smallest one takes */
	if (tp->mcast.mtu_cap && tp->mcast.mtu_cap < d->mtu)
		d->mtu = tp->mcast.mtu_cap;
	d->max_message = tp->mcast.max_cap;
	return 0;
}

/* Snapshot p's AH and address (the group's for p NULL); -ENOTCONN when
 * it is not up (data needs it up), or, joined_ok (announces, probes),
 * when no session stands either. */
int tp_dest_get(struct tp *tp, struct peer *p, struct tp_dest *d, int joined_ok)
{
	struct peer_use *u;
	int rc = 0;

	if (!p)
		return tp_dest_group(tp, d);
	u = peer_used(p);
	if (!u) /* never used: never met */
		return -ENOTCONN;
	pthread_mutex_lock(&p->lock);
	if (!(p->up || (joined_ok && u->probe.joined)) || !u->ah) {
		rc = -ENOTCONN;
	} else {
		d->ah = u->ah;
		d->qpn = u->addr.qpn;
		d->qkey = u->addr.qkey;
		d->mtu = tp->info.mtu_bytes;
		d->max_message = u->addr.max_message;
		/* Never send more than the peer's port can take. */
		if (tp_addr_mtu(&u->addr) && tp_addr_mtu(&u->addr) < d->mtu)
			d->mtu = tp_addr_mtu(&u->addr);
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

/*
 * One prebuilt datagram dg[0..len) posted at once, for what is rare
 * (announces, probes): to p joined or up, to the group (p NULL), or to
 * d as given (TP_ONE_FIXED).  TP_ONE_NOWAIT: -EAGAIN when the ring is
 * full rather than wait (the progress thread's).  0, -ENOTCONN, -EIO,
 * or -EMSGSIZE when len is more than d's MTU (an announce with a
 * certificate may be).
 */
int tp_ring_send_one(struct tp *tp, struct peer *p, struct tp_dest *d,
		     int flags, const void *dg, size_t len)
{
	uint8_t *sb;
	int rc;

	pthread_mutex_lock(&tp->ring.lock);
	tp_ring_reap(tp);
	if (tp_ring_free(tp))
		rc = 0;
	else
		rc = (flags & TP_ONE_NOWAIT) ? -EAGAIN : tp_ring_wait(tp);
	if (!rc && !(flags & TP_ONE_FIXED))
		rc = tp_dest_get(tp, p, d, 1);
	if (!rc && len > d->mtu)
		rc = -EMSGSIZE;
	if (!rc) {
		sb = tp_ring_slot(tp);
		memcpy(sb, dg, len);
		tp_ring_fill(tp, d, sb, len);
		tp_ring_push(tp);
	}
	pthread_mutex_unlock(&tp->ring.lock);
	return rc;
}

/* The registered send slot the next WR filled will use (under ring.lock). */
uint8_t *tp_ring_slot(const struct tp *tp)
{
	return tp->ring.buf + (size_t)(tp->ring.filled % tp->cfg->send_depth) *
				      tp->info.mtu_bytes;
}

/* Fill the next WR with slot sb; a free slot is the caller's to check. */
void tp_ring_fill(struct tp *tp, const struct tp_dest *d, uint8_t *sb,
		  size_t dlen)
{
	uint32_t depth = tp->cfg->send_depth, freeafter;
	uint64_t seq = tp->ring.filled + 1;
	uint32_t k = (uint32_t)(tp->ring.filled % depth);
	struct ibv_send_wr *wr = &tp->ring.wr[k];

	tp->ring.sge[k].addr = (uintptr_t)sb;
	tp->ring.sge[k].length = dlen;
	tp->ring.sge[k].lkey = tp->ring.mr->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = seq;
	wr->sg_list = &tp->ring.sge[k];
	wr->num_sge = 1;
	wr->opcode = IBV_WR_SEND;
	wr->wr.ud.ah = d->ah;
	wr->wr.ud.remote_qpn = d->qpn;
	wr->wr.ud.remote_qkey = d->qkey;
	if (dlen <= tp->dev.max_inline)
		wr->send_flags |= IBV_SEND_INLINE;
	freeafter = depth - (uint32_t)(seq - tp->ring.done);
	if (seq - tp->ring.last_sig >= tp->ring.sig_every ||
	    freeafter < tp->ring.sig_every || tp->ring.sig_next) {
		wr->send_flags |= IBV_SEND_SIGNALED;
		tp->ring.last_sig = seq;
		tp->ring.sig_next = 0;
	}
	tp->ring.filled = seq;
}

/* Post what is filled and not yet posted, or leave it to the thread
 * posting now; thread-safe. */
void tp_flush(struct tp *tp)
{
	pthread_mutex_lock(&tp->ring.lock);
	tp_ring_push(tp);
	pthread_mutex_unlock(&tp->ring.lock);
}

/* A message tp may send: its channel name's length, or -errno. */
int tp_msg_check(const struct tp *tp, const char *chan, const void *buf,
		 size_t len)
{
	size_t chan_len = util_name_len(chan);

	if (!chan_len || (len && !buf))
		return -EINVAL;
	if (len > tp->cfg->max_message)
		return -EMSGSIZE;
	return (int)chan_len;
}

/*
 * A message went to remote peer p (under ring.lock): the probe watch
 * (tp_probe.c) looks at it within TP_PROBE_WATCH_MS.  1 when the watch
 * sleeps and must be woken, which only the first send after a quiet
 * look does: an idle daemon has no look to come.
 */
static int tp_ring_watch(struct tp *tp, const struct peer *p)
{
	if (p->is_local)
		return 0;
	tp->ring.watch_sent = 1;
	if (atomic_load_explicit(&tp->ring.watch_on, memory_order_relaxed))
		return 0;
	atomic_store(&tp->ring.watch_on, 1);
	return 1;
}

/* Count a message queued to p, or to the group of nfrags datagrams. */
static void tp_ring_count(struct tp *tp, struct peer *p, size_t len,
			  uint32_t nfrags)
{
	if (p) {
		PEER_ADD(p, msgs_tx, 1);
		PEER_ADD(p, bytes_tx, len);
	} else {
		tp_add(&tp->totals.mcast_tx, nfrags);
	}
	tp_add(&tp->totals.msgs_tx, 1);
	tp_add(&tp->totals.bytes_tx, len);
}

/* Set (or, with need NULL, clear) who meets peers on demand. */
void tp_set_need(struct tp *tp, void (*need)(void *arg, struct peer *p),
		 void *arg)
{
	pthread_mutex_lock(&tp->need_lock);
	tp->need = need;
	tp->need_arg = arg;
	pthread_mutex_unlock(&tp->need_lock);
}

/* A send found p not up: have it met.  Here, beside the sends (tp_queue,
 * tp_send_async) that find it, so that they call nothing above them. */
void tp_peer_need(struct tp *tp, struct peer *p)
{
	pthread_mutex_lock(&tp->need_lock);
	if (tp->need)
		tp->need(tp->need_arg, p);
	pthread_mutex_unlock(&tp->need_lock);
}

/*
 * Fragment one message to p, or to the group (p NULL, its own msg_ids
 * and WIRE_FLAG_MCAST), into registered slots, to go at tp_flush.
 */
int tp_queue(struct tp *tp, struct peer *p, const char *chan, const void *buf,
	     size_t len)
{
	atomic_uint *ids = p ? &tp->msg_ids[p->idx] : &tp->mcast.msg_id;
	struct tp_dest d;
	uint32_t cnt = 0, idx, msg_id;
	size_t chan_len, dlen, mtu;
	uint64_t one = 1;
	uint8_t *sb;
	int rc, wake = 0;

	rc = tp_msg_check(tp, chan, buf, len);
	if (rc < 0)
		return rc;
	chan_len = (size_t)rc;

	pthread_mutex_lock(&tp->ring.lock);
	rc = tp_dest_get(tp, p, &d, 0);
	if (rc)
		goto out;
	/* The peer would drop it whole: say so to the writer instead. */
	if (d.max_message && len > d.max_message) {
		rc = -EMSGSIZE;
		goto out;
	}
	/* Always reap (a poll of a user-space ring, no system call): it is
	 * the only place send completions and errors are seen. */
	tp_ring_reap(tp);
	mtu = d.mtu; /* every fragment of a message has one geometry */
	cnt = wire_frag_count(len, mtu, chan_len);
	if (!cnt) {
		rc = -EMSGSIZE;
		goto out;
	}
	msg_id = atomic_fetch_add_explicit(ids, 1, memory_order_relaxed);
	for (idx = 0; idx < cnt; idx++) {
		rc = tp_ring_next(tp, p, &d);
		if (rc)
			goto out;
		sb = tp_ring_slot(tp);
		dlen = wire_frag_put(sb, mtu, tp->self_id, msg_id, chan,
				     chan_len, buf, len, idx);
		if (!dlen) {
			rc = -EINVAL;
			goto out;
		}
		if (!p)
			wire_set_flag(sb, WIRE_FLAG_MCAST);
		tp_ring_fill(tp, &d, sb, dlen);
	}
	wake = p && tp_ring_watch(tp, p);
out:
	pthread_mutex_unlock(&tp->ring.lock);
	if (rc == -ENOTCONN && p)
		tp_peer_need(tp, p);
	if (!rc)
		tp_ring_count(tp, p, len, cnt);
	if (wake && tp->prog.efd >= 0 &&
	    write(tp->prog.efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("transport: eventfd");
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
 * Put an AH aside until the sends posted so far have completed; the next
 * WR is signalled so that its completion tells us (under ring.lock).
 */
void tp_ring_retire_ah(struct tp *tp, struct ibv_ah *ah)
{
	struct tp_retired *r;

	tp_ring_reap(tp);
	if (tp->ring.done >= tp->ring.filled) {
		if (ibv_destroy_ah(ah))
			log_warn("transport: ibv_destroy_ah");
		return;
	}
	r = malloc(sizeof(*r));
	if (!r) {
		/* Leak rather than free an AH a WQE may still use. */
		log_warnx("transport: out of memory; keeping an AH");
		return;
	}
	r->ah = ah;
	r->seq = tp->ring.filled;
	r->next = tp->ring.retired;
	tp->ring.retired = r;
	tp->ring.sig_next = 1;
}

/* Give signalled sends a moment to leave before the QP goes away. */
void tp_ring_drain(struct tp *tp)
{
	uint64_t deadline = util_now_ms() + 1000;
	int done;

	for (;;) {
		pthread_mutex_lock(&tp->ring.lock);
		tp_ring_push(tp);
		tp_ring_reap(tp);
		done = tp->ring.done >= tp->ring.last_sig;
		pthread_mutex_unlock(&tp->ring.lock);
		if (done || util_now_ms() > deadline)
			return;
		usleep(1000);
	}
}
