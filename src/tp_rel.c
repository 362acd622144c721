/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * delivery = reliable on the send ring: reliable.h's per-peer streams
 * (psn order, acks, credit, selective acks, timers) wired to datagrams.
 * Every datagram of a stream carries a trailer (wire_rel_put) with its psn
 * and our ack of the peer's stream; a whole message is offered to deliver
 * only once every lock is dropped (tp_rel_offer).  One its channel queue
 * refuses is not held: the stream moves on and the refusal goes back in
 * the acks (tp_rel_refuse.c), so the sender fails its writer or, for a
 * full queue, keeps it and tries again later (backpressure, not loss; a
 * full channel holds up no other).  The state machines are touched only
 * Both streams of a peer are named when the bootstrap meets it
 * (tp_rel_attach: the sessions of the two boot ids, reliable.h), never by
 * what a datagram says; one of any other session is dropped as
 * drop_rel_session.  The state machines are touched only
 * through reliable.h's functions, under rel.lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "log.h"
#include "tp_int.h"
#include "util.h"

_Static_assert(REL_SACK_WORDS == WIRE_SACK_WORDS,
	       "the wire carries the whole sack bitmap");

/* TEST HOOK: IBFS_TEST_DROP_PERMILLE loses received reliable datagrams on
 * purpose, to test recovery without a lossy wire.  Never in production. */
static void tp_rel_test_hook(struct tp *tp)
{
	const char *e = getenv("IBFS_TEST_DROP_PERMILLE");

	if (!e || !*e)
		return;
	tp->rel.drop_permille = (uint32_t)strtoul(e, NULL, 10);
	if (tp->rel.drop_permille > 1000)
		tp->rel.drop_permille = 1000;
	tp->rel.drop_rng = util_now_ms() | 1;
	log_warnx("TEST HOOK IBFS_TEST_DROP_PERMILLE=%u: dropping received "
		  "reliable datagrams on purpose",
		  tp->rel.drop_permille);
}

/* The table of streams: empty, each made when its peer is met. */
int tp_rel_open(struct tp *tp)
{
	struct tp_relset *rs = &tp->rel;
	int i;

	rs->peer = calloc(tp->npeers, sizeof(*rs->peer));
	rs->offer = calloc(tp->npeers, sizeof(*rs->offer));
	rs->active = calloc(tp->npeers, sizeof(*rs->active));
	if (!rs->peer || !rs->offer || !rs->active) {
		free(rs->peer);
		free(rs->offer);
		free(rs->active);
		return -ENOMEM;
	}
	for (i = 0; i < tp->npeers; i++)
		rs->any |= tp_peer_reliable(tp, &tp->peers[i]);
	pthread_mutex_init(&rs->lock, NULL);
	tp_rel_test_hook(tp);
	return 0;
}

/* Forget the held message and the one arriving (their stream is gone). */
static void tp_rel_drop_held(struct tp_rel *r)
{
	if (r->held)
		free(r->hmsg.data);
	r->held = 0;
	r->gen++;
	rel_rx_drop(&r->rx);
	wire_seq_reset(&r->seq);
	tp_rel_full_clear(r);
}

/*
 * The session of the stream from the node booted as from to the one
 * booted as to (reliable.h): both ends compute it from the boot ids the
 * bootstrap exchanged.  Under the secret, an HMAC, so that nobody without
 * it can name a stream; without one, anyone who can forge a datagram can
 * forge a hello too, and a mix of the two ids will do.
 */
static uint32_t tp_rel_sess(const struct tp *tp, uint32_t from, uint32_t to)
{
	static const char label[] = "ibfs stream v1";
	uint8_t msg[sizeof(label) - 1 + 8], mac[EVP_MAX_MD_SIZE];
	const char *k = tp->cfg->secret;
	unsigned int n = 0;

	memcpy(msg, label, sizeof(label) - 1);
	util_put32(msg + sizeof(label) - 1, from);
	util_put32(msg + sizeof(label) + 3, to);
	if (k[0] &&
	    HMAC(EVP_sha256(), k, (int)strlen(k), msg, sizeof(msg), mac, &n) &&
	    n >= 4)
		return util_get32(mac);
	return util_fnv1a(msg, sizeof(msg), 2166136261u);
}

/* Both streams afresh in the sessions of our boot id and addr's: ours at
 * psn 0 (what waited for the old one fails), p's followed from psn 0. */
static void tp_rel_restart(struct tp *tp, struct tp_rel *r,
			   const struct peer_addr *addr)
{
	r->boot = addr->boot;
	rel_tx_reset(&r->tx, -ENOTCONN,
		     tp_rel_sess(tp, tp->info.boot, addr->boot));
	rel_rx_join(&r->rx, tp_rel_sess(tp, addr->boot, tp->info.boot));
	tp_rel_drop_held(r);
}

/*
 * r, just made for p met at addr: where p's streams were let go after an
 * idle session, when the same two incarnations meet again, they go on in
 * their sessions from there (the peer may have kept its own, and would
 * take psn 0 for an old duplicate); else afresh.
 */
static void tp_rel_make(struct tp *tp, struct peer *p, struct tp_rel *r,
			const struct peer_addr *addr)
{
	struct peer_use *u = peer_used(p);
	uint32_t pt = (uint32_t)tp->cfg->peer_timeout_ms;

	rel_tx_init(&r->tx, 0, REL_WINDOW_DEFAULT, pt);
	rel_rx_init(&r->rx, REL_WINDOW_DEFAULT);
	if (!u || !u->rel_mark.kept || u->rel_mark.boot != addr->boot ||
	    u->rel_mark.self != tp->info.boot) {
		tp_rel_restart(tp, r, addr);
		return;
	}
	r->boot = addr->boot;
	rel_tx_resume(&r->tx, tp_rel_sess(tp, tp->info.boot, addr->boot),
		      u->rel_mark.tx, REL_WINDOW_DEFAULT, pt);
	rel_rx_resume(&r->rx, tp_rel_sess(tp, addr->boot, tp->info.boot),
		      u->rel_mark.rx, REL_WINDOW_DEFAULT);
}

/*
 * p (delivery = reliable) is being met at addr: give it its streams
 * unless it has them, and when addr is another incarnation of p (its boot
 * id), start both afresh in the sessions the two boot ids name: ours at
 * psn 0 (what waited for the old one fails), and p's followed from psn 0.
 * Bootstrap thread, before p's datagrams are accepted (tp_peer_expect,
 * tp_peer_up) and sends to it can succeed, so every other user finds them
 * made.  Without memory that is logged, and sends to p fail ENOTCONN.
 */
void tp_rel_attach(struct tp *tp, struct peer *p, const struct peer_addr *addr)
{
	struct tp_relset *rs = &tp->rel;
	struct tp_rel *r, *fresh = NULL;
	struct rel_msg *done;

	if (!tp_peer_reliable(tp, p))
		return;
	pthread_mutex_lock(&rs->lock);
	/* made here alone (this thread), let go by the progress thread's
	 * sweep, which may run between a look and the lock: look again */
	while (!rs->peer[p->idx] && !fresh) {
		pthread_mutex_unlock(&rs->lock);
		fresh = calloc(1, sizeof(*fresh));
		if (!fresh) {
			log_warnx("transport: no memory for %s's streams",
				  p->conf->name);
			return;
		}
		pthread_mutex_lock(&rs->lock);
	}
	r = rs->peer[p->idx];
	if (r) {
		free(fresh); /* cannot be: one thread makes them */
		fresh = NULL;
	} else {
		r = rs->peer[p->idx] = fresh;
		rs->active[rs->nactive++] = p->idx;
	}
	if (r->retire) { /* met again before the sweep let it go */
		r->retire = 0;
		rs->nretire--;
	}
	if (fresh)
		tp_rel_make(tp, p, r, addr);
	else if (r->boot != addr->boot)
		tp_rel_restart(tp, r, addr);
	done = rel_tx_take_done(&r->tx);
	pthread_mutex_unlock(&rs->lock);
	tp_up_done(tp, p, done);
}

/* Free r (its peer's entry is cleared by the caller). */
static void tp_rel_free(struct tp_rel *r)
{
	tp_rel_drop_held(r);
	free(r->ahead);
	free(r);
}

/* Free what tp_rel_open made (after tp_rel_reset of every peer). */
void tp_rel_close(struct tp *tp)
{
	int i;

	for (i = 0; i < tp->rel.nactive; i++)
		tp_rel_free(tp->rel.peer[tp->rel.active[i]]);
	pthread_mutex_destroy(&tp->rel.lock);
	free(tp->rel.offer);
	free(tp->rel.active);
	free(tp->rel.peer);
}

/* Whether messages to p go with delivery = reliable. */
int tp_peer_reliable(const struct tp *tp, const struct peer *p)
{
	return p->conf->delivery == DELIVERY_RELIABLE;
}

/* The ack half of a trailer: what we have taken of p's stream. */
static void tp_rel_ack_fields(struct tp_rel *r, struct wire_rel *w, int room)
{
	struct rel_ack a;

	rel_rx_ack_take(&r->rx, room, &a);
	w->credit = a.credit;
	if (!a.ack)
		return;
	if (a.sack) {
		memcpy(w->sack, a.bits.w, sizeof(w->sack));
		w->rflags |= WIRE_REL_SACK;
	}
	if (a.refuse) {
		memcpy(w->codes, a.codes.plane, sizeof(w->codes));
		w->rflags |= WIRE_REL_CODES;
	}
	w->ack_sess = a.sess;
	w->ack = a.nxt;
	w->rflags |= WIRE_REL_ACK;
	if (a.nak)
		w->rflags |= WIRE_REL_NAK;
}

/* A standalone ACK with everything: the codes, then the sack. */
#define TP_REL_ACK_MAX                                                         \
	(WIRE_HDR_LEN + WIRE_REL_CODES_LEN + WIRE_REL_SACK_LEN + WIRE_REL_LEN)

/* The refusals must go; at the smallest MTU the sack may not fit with
 * them, and goes only as a cost: the sender resends what it held. */
static void tp_rel_ack_fit(struct wire_rel *w, size_t mtu)
{
	if ((w->rflags & WIRE_REL_CODES) && TP_REL_ACK_MAX > mtu)
		w->rflags &= ~WIRE_REL_SACK;
}

/* One DATA datagram of m (fragment frag, psn) in slot sb; its length. */
static size_t tp_rel_build(struct tp *tp, struct tp_rel *r, uint8_t *sb,
			   const struct rel_msg *m, uint32_t frag, uint32_t psn,
			   int last)
{
	struct wire_rel w;
	size_t dlen;

	dlen = wire_frag_build(sb, m->mtu - WIRE_REL_LEN, tp->self_id,
			       m->msg_id, m->chan, m->data, m->len, frag);
	if (!dlen)
		return 0; /* cannot happen: checked when queued */
	memset(&w, 0, sizeof(w));
	w.sess = rel_tx_sess(&r->tx);
	w.psn = psn;
	if (last)
		w.rflags = WIRE_REL_ACKREQ;
	if (m->retry)
		w.rflags |= WIRE_REL_RETRY;
	if (rel_tx_fwd(&r->tx, psn))
		w.rflags |= WIRE_REL_FWD;
	tp_rel_ack_fields(r, &w, 0);
	return wire_rel_put(sb, dlen, &w);
}

/*
 * Fill WRs with what p's window allows, each datagram carrying our ack of
 * p's stream, then a standalone ACK if one is due: any that is due on a
 * timer tick, else only an urgent one (under rel.lock).  The caller rings
 * the doorbell (tp_flush) once it has dropped rel.lock, so the progress
 * thread can take acks meanwhile.  Nothing goes while p is down.
 */
static void tp_rel_flush(struct tp *tp, struct peer *p, uint64_t now, int tick)
{
	struct tp_rel *r = tp->rel.peer[p->idx];
	uint32_t frag, psn;
	struct rel_msg *m;
	struct wire_rel w;
	struct tp_dest d;
	uint8_t *sb;
	size_t dlen;
	int go;

	pthread_mutex_lock(&tp->ring.lock);
	if (tp_dest_get(tp, p, &d, 0))
		goto out;
	if (tp_ring_free(tp) < tp->cfg->send_depth / 2)
		tp_ring_reap(tp);
	/* A slot first: rel_tx_next counts what it returns as sent. */
	while (!tp_ring_next(tp, p, &d)) {
		go = rel_tx_next(&r->tx, now, &m, &frag, &psn);
		if (!go) {
			if (!rel_rx_ack_wanted(&r->rx, tick))
				break;
			sb = tp_ring_slot(tp);
			memset(&w, 0, sizeof(w));
			tp_rel_ack_fields(r, &w, 1);
			tp_rel_ack_fit(&w, d.mtu);
			dlen = wire_ack_build(sb, tp->self_id, &w);
			tp_ring_fill(tp, &d, sb, dlen);
			break;
		}
		sb = tp_ring_slot(tp);
		dlen = tp_rel_build(tp, r, sb, m, frag, psn, go == REL_GO_LAST);
		if (dlen)
			tp_ring_fill(tp, &d, sb, dlen);
	}
out:
	pthread_mutex_unlock(&tp->ring.lock);
}

/* Add what a state machine counted since last time to a peer and total. */
static void tp_rel_pub(atomic_uint_fast64_t *peer, atomic_uint_fast64_t *total,
		       uint64_t count, uint64_t *seen)
{
	tp_add(peer, count - *seen);
	tp_add(total, count - *seen);
	*seen = count;
}

/* Counters for .status (under rel.lock). */
static void tp_rel_publish(struct tp *tp, struct peer *p, struct tp_rel *r)
{
	struct peer_use *u = peer_use(p);
	struct peer_counters *c, *t = &tp->totals;
	struct rel_stats s;

	if (!u)
		return;
	c = &u->cnt;
	rel_stats_get(&r->tx, &r->rx, &s);
	atomic_store(&c->rel_window, s.window);
	atomic_store(&c->rel_inflight, s.inflight);
	atomic_store(&c->rel_srtt_ms, s.srtt_ms);
	atomic_store(&c->rel_rto_ms, s.rto_ms);
	tp_rel_pub(&c->rel_retrans, &t->rel_retrans, s.retrans,
		   &r->pub.retrans);
	tp_rel_pub(&c->rel_dups, &t->rel_dups, s.dups, &r->pub.dups);
	tp_rel_pub(&c->rel_timeouts, &t->rel_timeouts, s.timeouts,
		   &r->pub.timeouts);
	tp_rel_pub(&c->rel_probes, &t->rel_probes, s.probes, &r->pub.probes);
	tp_rel_pub(&c->rel_rtos, &t->rel_rtos, s.rtos, &r->pub.rtos);
	tp_rel_pub(&c->rel_refused, &t->rel_refused, s.refused,
		   &r->pub.refused);
	atomic_store(&c->rel_waiting, s.waiting);
}

/* Offer peer i's held message at the next tp_rel_offer (under rel.lock). */
static void tp_rel_queue(struct tp *tp, int i)
{
	struct tp_rel *r = tp->rel.peer[i];

	if (r->queued || !r->held)
		return;
	r->queued = 1;
	tp->rel.offer[tp->rel.noffer++] = i;
}

/* Keep datagram psn, which came past a gap, until the gap fills (and
 * whether it came flagged retry). */
static void tp_rel_keep(struct tp *tp, struct tp_rel *r, uint32_t psn,
			const uint8_t *dg, size_t len, int retry)
{
	size_t slot = tp->info.mtu_bytes;

	if (!r->ahead)
		r->ahead = malloc(slot * REL_SACK_BITS);
	if (!r->ahead || len > slot) {
		rel_rx_unhold(&r->rx, psn); /* it will come again */
		return;
	}
	memcpy(r->ahead + (psn % REL_SACK_BITS) * slot, dg, len);
	r->ahead_len[psn % REL_SACK_BITS] =
		(uint32_t)len | (retry ? TP_REL_AHEAD_RETRY : 0);
}

/*
 * Take the datagram at the stream's nxt (under rel.lock).  Not the shared
 * reassembly table: its timeout would drop a message that heavy loss makes
 * slow, and the stream would move on past it (acked, so the writer would
 * hear "delivered").  A whole message waits, blocking the stream, until
 * tp_rel_offer hands it over with no lock held (tp_rel_complete).  One
 * that cannot be put together is refused for good: its writer hears.
 */
static void tp_rel_take(struct tp *tp, struct peer *p, struct tp_rel *r,
			const uint8_t *dg, size_t len, int retry)
{
	struct wire_msg msg;
	int rc;

	rc = wire_seq_feed(&r->seq, tp->cfg->max_message, p->idx, dg, len,
			   &msg);
	if (rc == 0) {
		rel_rx_advance(&r->rx);
	} else if (rc == 1) {
		if (tp_rel_complete(r, &msg, retry))
			tp_rel_queue(tp, p->idx);
	} else if (rc == -WIRE_DROP_NO_MEMORY) {
		/* not taken: it comes again */
		peer_count_drop(p, &tp->totals, DROP_QUEUE_FULL);
	} else {
		/* a name we refuse, beyond max_message, malformed: skip it
		 * for good, and say so */
		tp_up_count_wire(tp, p, rc);
		rel_rx_refuse(&r->rx, rc == -WIRE_DROP_TOO_BIG
					      ? REL_CODE_MSGSIZE
					      : REL_CODE_INVAL);
	}
}

/* Take the kept datagrams that are next in order now (under rel.lock). */
static void tp_rel_drain(struct tp *tp, struct peer *p, struct tp_rel *r)
{
	uint32_t nxt, k, len;

	while (!r->held && rel_rx_ready(&r->rx)) {
		nxt = rel_rx_next(&r->rx);
		k = nxt % REL_SACK_BITS;
		len = r->ahead_len[k];
		/* taken now, whatever becomes of it: no longer held */
		rel_rx_unhold(&r->rx, nxt);
		tp_rel_take(tp, p, r, r->ahead + k * tp->info.mtu_bytes,
			    len & ~TP_REL_AHEAD_RETRY,
			    !!(len & TP_REL_AHEAD_RETRY));
	}
}

/* TEST HOOK: whether to lose this datagram (progress thread). */
int tp_rel_lose(struct tp *tp)
{
	struct tp_relset *rs = &tp->rel;

	rs->drop_rng ^= rs->drop_rng << 13;
	rs->drop_rng ^= rs->drop_rng >> 7;
	rs->drop_rng ^= rs->drop_rng << 17;
	return rs->drop_rng % 1000 < rs->drop_permille;
}

/*
 * A reliable datagram from p (under rx.srclock and rx.rlock): take its
 * ack, then its data in psn order only.
 */
void tp_rel_recv(struct tp *tp, struct peer *p, const struct wire_hdr *h,
		 const uint8_t *dg, size_t dlen, uint64_t now)
{
	struct tp_rel *r;
	struct wire_rel w;
	long plen = wire_rel_get(dg, dlen, &w);
	enum rel_verdict v;
	rel_codes codes;
	rel_bits s;

	if (plen < 0) {
		peer_count_drop(p, &tp->totals, DROP_MALFORMED);
		return;
	}
	pthread_mutex_lock(&tp->rel.lock);
	r = tp->rel.peer[p->idx];
	if (!r) /* cannot be: the source filter admits met peers only */
		goto out;
	if (w.rflags & WIRE_REL_ACK) {
		memcpy(s.w, w.sack, sizeof(s.w));
		memcpy(codes.plane, w.codes, sizeof(codes.plane));
		rel_tx_ack(&r->tx, w.ack_sess, w.ack, w.credit,
			   !!(w.rflags & WIRE_REL_NAK), s,
			   w.rflags & WIRE_REL_CODES ? &codes : NULL, now);
	}
	if (h->type != WIRE_DATA)
		goto out;
	if ((w.rflags & WIRE_REL_FWD) && rel_rx_forward(&r->rx, w.sess, w.psn))
		tp_rel_drop_held(r); /* what it held, its sender failed */
	v = rel_rx_check(&r->rx, w.sess, w.psn);
	if (v == REL_FOREIGN) {
		peer_count_drop(p, &tp->totals, DROP_REL_SESSION);
		goto out;
	}
	if (w.rflags & WIRE_REL_ACKREQ)
		rel_rx_ask_ack(&r->rx);
	if (v == REL_AHEAD)
		tp_rel_keep(tp, r, w.psn, dg, (size_t)plen,
			    !!(w.rflags & WIRE_REL_RETRY));
	if (v != REL_ACCEPT)
		goto out;
	if (r->held)
		tp_rel_queue(tp, p->idx); /* its sender asks again */
	else
		tp_rel_take(tp, p, r, dg, (size_t)plen,
			    !!(w.rflags & WIRE_REL_RETRY));
	tp_rel_drain(tp, p, r);
out:
	pthread_mutex_unlock(&tp->rel.lock);
}

/*
 * p's idle session ended (the bootstrap thread): its streams are let go
 * by the progress thread, which alone holds them outside rel.lock, at
 * its next sweep, if quiet by then; else they stay, as for a peer that
 * went down.
 */
void tp_rel_idle(struct tp *tp, struct peer *p)
{
	struct tp_rel *r;
	uint64_t one = 1;

	pthread_mutex_lock(&tp->rel.lock);
	r = tp->rel.peer[p->idx];
	if (r && !r->retire) {
		r->retire = 1;
		tp->rel.nretire++;
	}
	pthread_mutex_unlock(&tp->rel.lock);
	if (r && write(tp->prog.efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("transport: eventfd");
}

/* Whether r may be let go: nothing of it waits anywhere but in the
 * sequence numbers (rel_tx_quiet, rel_rx_quiet). */
static int tp_rel_quiet(const struct tp_rel *r)
{
	return !r->held && !r->queued && !r->seq.buf && !r->nfull &&
	       !r->full_all && rel_tx_quiet(&r->tx) && rel_rx_quiet(&r->rx);
}

/*
 * Let go of the streams of peers that idled out (tp_rel_idle) where they
 * are quiet, keeping where they stood in the peer's in-use part; a
 * stream that is not quiet stays, its mark dropped.  Progress thread,
 * under rel.lock, before it takes any stream outside the lock.
 */
static void tp_rel_sweep(struct tp *tp)
{
	struct tp_relset *rs = &tp->rel;
	struct peer_use *u;
	struct tp_rel *r;
	int i = 0, k;

	while (rs->nretire && i < rs->nactive) {
		k = rs->active[i];
		r = rs->peer[k];
		if (!r->retire) {
			i++;
			continue;
		}
		r->retire = 0;
		rs->nretire--;
		u = peer_use(&tp->peers[k]);
		if (!u || !tp_rel_quiet(r)) {
			i++;
			continue;
		}
		tp_rel_publish(tp, &tp->peers[k], r);
		u->rel_mark.kept = 1;
		u->rel_mark.boot = r->boot;
		u->rel_mark.self = tp->info.boot;
		u->rel_mark.tx = r->tx.nxt;
		u->rel_mark.rx = r->rx.nxt;
		rs->peer[k] = NULL;
		rs->active[i] = rs->active[--rs->nactive];
		tp_rel_free(r);
	}
}

/*
 * Offer each queued held message to deliver, with no lock held, then
 * settle its stream (tp_rel_settle): taken or refused, the stream moves
 * on, and its writer hears at once.  A stream reset meanwhile (gen)
 * keeps its new state.  Progress thread only.
 */
void tp_rel_offer(struct tp *tp)
{
	struct tp_relset *rs = &tp->rel;
	struct wire_msg m;
	struct tp_rel *r;
	uint64_t gen;
	int i, rc, retry;

	pthread_mutex_lock(&rs->lock);
	while (rs->noffer) {
		i = rs->offer[--rs->noffer];
		r = rs->peer[i];
		r->queued = 0;
		if (!r->held)
			continue;
		m = r->hmsg;
		retry = r->hretry;
		gen = r->gen;
		r->held = 0; /* ours while offered: a reset does not free it */
		pthread_mutex_unlock(&rs->lock);
		rc = tp_up_offer(tp, &tp->peers[i], &m);
		pthread_mutex_lock(&rs->lock);
		if (r->gen != gen) {
			if (rc)
				free(m.data);
		} else {
			tp_rel_settle(tp, &tp->peers[i], r, &m, retry, rc);
			tp_rel_drain(tp, &tp->peers[i], r);
		}
	}
	pthread_mutex_unlock(&rs->lock);
}

/* Queue every held message for another offer (a timer tick). */
static void tp_rel_queue_held(struct tp *tp)
{
	int i;

	pthread_mutex_lock(&tp->rel.lock);
	for (i = 0; i < tp->rel.nactive; i++)
		tp_rel_queue(tp, tp->rel.active[i]);
	pthread_mutex_unlock(&tp->rel.lock);
}

/*
 * Held messages, timers, windows and acks of every reliable peer, then
 * the doorbell; done runs for what finished, with no lock held.  Returns
 * nonzero while anything waits (the progress loop then wakes every few
 * ms).  Progress thread only.
 */
int tp_rel_service(struct tp *tp, int tick)
{
	uint64_t now = util_now_ms();
	struct rel_msg *done;
	int i, n, busy = 0;

	pthread_mutex_lock(&tp->rel.lock);
	tp_rel_sweep(tp);
	pthread_mutex_unlock(&tp->rel.lock);
	if (tick)
		tp_rel_queue_held(tp);
	tp_rel_offer(tp);
	/* Only streams made, never the whole config: only this thread's
	 * sweep takes entries out of active[], and others only append. */
	pthread_mutex_lock(&tp->rel.lock);
	n = tp->rel.nactive;
	pthread_mutex_unlock(&tp->rel.lock);
	for (i = 0; i < n; i++) {
		int k = tp->rel.active[i];
		struct tp_rel *r = tp->rel.peer[k];
		struct peer *p = &tp->peers[k];

		pthread_mutex_lock(&tp->rel.lock);
		if (tick) {
			tp_rel_drain(tp, p, r);
			rel_tx_tick(&r->tx, now);
		}
		tp_rel_flush(tp, p, now, tick);
		tp_rel_publish(tp, p, r);
		busy |= rel_tx_busy(&r->tx) || r->held ||
			rel_rx_ack_pending(&r->rx);
		done = rel_tx_take_done(&r->tx);
		pthread_mutex_unlock(&tp->rel.lock);
		tp_up_done(tp, p, done);
	}
	tp_flush(tp);
	return busy;
}

/*
 * Reliable timers, every TP_REL_TICK_MS while anything waits: timeouts,
 * held messages, and the acks not worth a datagram of their own before.
 * Between ticks only urgent acks go.  Returns the epoll timeout.
 */
int tp_rel_tick(struct tp *tp)
{
	uint64_t now = util_now_ms();
	int tick = now >= tp->rel.tick_at, busy;

	if (tick)
		tp->rel.tick_at = now + TP_REL_TICK_MS;
	busy = tp_rel_service(tp, tick);
	tp_up_announce(tp); /* a held message may have gone in */
	if (!busy)
		return -1;
	return tp->rel.tick_at > now ? (int)(tp->rel.tick_at - now) : 1;
}

/* The sender's own copy of a message, for its stream; NULL without
 * memory. */
static struct rel_msg *tp_rel_msg_new(const char *chan, size_t chan_len,
				      const void *buf, size_t len,
				      void (*done)(void *, int, size_t),
				      void *arg)
{
	struct rel_msg *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->data = malloc(len ? len : 1);
	if (!m->data) {
		free(m);
		return NULL;
	}
	if (len)
		memcpy(m->data, buf, len);
	m->len = len;
	memcpy(m->chan, chan, chan_len);
	m->chan[chan_len] = '\0';
	m->done = done;
	m->arg = arg;
	return m;
}

/* Whether m may join p's stream now (under rel.lock); sets its geometry. */
static int tp_rel_admit(struct tp *tp, struct peer *p, struct rel_msg *m,
			size_t chan_len, int flags)
{
	struct tp_rel *r = tp->rel.peer[p->idx];
	struct tp_dest d;
	int rc;

	rc = tp_dest_get(tp, p, &d, 0);
	if (rc)
		return rc;
	if (!r)
		return -ENOTCONN; /* up, yet never met: cannot be */
	if (d.max_message && m->len > d.max_message)
		return -EMSGSIZE; /* the peer would refuse it, yet ack it */
	if ((flags & TP_SEND_NONBLOCK) && rel_tx_would_block(&r->tx, m->chan))
		return -EAGAIN;
	m->mtu = (uint32_t)d.mtu;
	m->nfrag = wire_frag_count(m->len, d.mtu - WIRE_REL_LEN, chan_len);
	return m->nfrag ? 0 : -EMSGSIZE;
}

/* Queue a message for p's reliable stream and send what may go. */
int tp_send_async(struct tp *tp, struct peer *p, const char *chan,
		  const void *buf, size_t len, int flags,
		  void (*done_fn)(void *arg, int status, size_t len), void *arg)
{
	struct tp_rel *r;
	struct rel_msg *m, *done;
	uint64_t one = 1;
	size_t chan_len;
	int rc;

	if (!tp_peer_reliable(tp, p)) {
		rc = tp_send(tp, p, chan, buf, len);
		if (!rc)
			done_fn(arg, 0, len);
		return rc;
	}
	rc = tp_msg_check(tp, chan, buf, len);
	if (rc < 0)
		return rc;
	chan_len = (size_t)rc;
	m = tp_rel_msg_new(chan, chan_len, buf, len, done_fn, arg);
	if (!m)
		return -ENOMEM;
	pthread_mutex_lock(&tp->rel.lock);
	rc = tp_rel_admit(tp, p, m, chan_len, flags);
	if (rc) {
		pthread_mutex_unlock(&tp->rel.lock);
		free(m->data);
		free(m);
		if (rc == -ENOTCONN)
			tp_peer_need(tp, p);
		return rc;
	}
	r = tp->rel.peer[p->idx]; /* tp_rel_admit found it */
	m->msg_id = atomic_fetch_add_explicit(&tp->msg_ids[p->idx], 1,
					      memory_order_relaxed);
	rel_tx_queue(&r->tx, m, util_now_ms());
	tp_rel_flush(tp, p, util_now_ms(), 0);
	tp_rel_publish(tp, p, r);
	done = rel_tx_take_done(&r->tx);
	pthread_mutex_unlock(&tp->rel.lock);
	tp_up_done(tp, p, done);
	tp_flush(tp);
	/* Let the progress thread arm its retransmission timer. */
	if (write(tp->prog.efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("transport: eventfd");
	return 0;
}

/*
 * p went down or is gone: its writers get err, and the stream goes on in
 * its session past what they wrote (rel_tx_abandon); with rx_too (the
 * transport closes) p's stream to us is forgotten too.
 */
void tp_rel_reset(struct tp *tp, struct peer *p, int err, int rx_too)
{
	struct tp_rel *r;
	struct rel_msg *done;

	pthread_mutex_lock(&tp->rel.lock);
	r = tp->rel.peer[p->idx];
	if (!r) {
		pthread_mutex_unlock(&tp->rel.lock);
		return;
	}
	rel_tx_abandon(&r->tx, err);
	if (rx_too) {
		rel_rx_forget(&r->rx);
		tp_rel_drop_held(r);
	}
	tp_rel_publish(tp, p, r);
	done = rel_tx_take_done(&r->tx);
	pthread_mutex_unlock(&tp->rel.lock);
	tp_up_done(tp, p, done);
}

/*
 * Our QP went with the device (tp_heal.c), and our boot id with it: every
 * stream is forgotten, so that the next meeting of each peer starts both
 * afresh in the sessions our new boot id names, as after a restart.
 */
void tp_rel_unboot(struct tp *tp)
{
	int i;

	pthread_mutex_lock(&tp->rel.lock);
	for (i = 0; i < tp->rel.nactive; i++)
		tp->rel.peer[tp->rel.active[i]]->boot = 0;
	pthread_mutex_unlock(&tp->rel.lock);
}
