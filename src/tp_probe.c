/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The data path probe.  A bootstrap session proves that TCP gets through,
 * not datagrams: a qkey, a P_Key, a route or a firewall may still drop
 * every one.  So a peer the bootstrap installs (tp_peer_up) is joined,
 * not up: it is sent a WIRE_PING, which its daemon answers with a
 * WIRE_PONG echoing the ping's token, and only that answer, proof of
 * both directions, makes it up (and calls peer_up).  Unanswered after
 * TP_PROBE_TRIES pings (about 1 s), it is unreachable, with a reason in
 * words; it is pinged on, slowly, and comes up by itself once an answer
 * arrives.  A peer up is watched, all of them at one look
 * TP_PROBE_WATCH_MS after the first send since the last (tp_ring.c tells
 * of sends, and wakes us for the first): one we sent to since the last
 * look is pinged, and unreachable again (peer_failed) when three pings go
 * unanswered.  So a path that breaks later shows too, and an idle peer
 * costs nothing: a look that finds nothing sent is the last, and an idle
 * daemon has no timer of the watch armed.  Only an answer counts: a
 * peer's own datagrams reaching us say nothing of ours reaching it.
 *
 * A ping is answered only when it passed the source filter (a node the
 * bootstrap met: a stranger's is dropped as drop_unknown_src) and its
 * sender is joined here, through the AH the bootstrap made for it; one
 * answer per TP_PROBE_GAP_MS to one peer at most.
 *
 * Threads: tp_probe_start and tp_probe_stop run under p->lock on the
 * bootstrap thread (tp_peer_up, tp_peer_down), which then kicks the
 * progress thread; everything else runs there, with no engine lock held
 * but those it takes (tp_probe_take under the receive locks).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "tp_int.h"
#include "util.h"

/* Probe p from now on, as joined and not up (under p->lock; p has its
 * in-use part: it was installed). */
void tp_probe_start(struct tp *tp, struct peer *p, uint64_t now)
{
	struct peer_probe *pr = &peer_used(p)->probe;

	if (!pr->joined)
		pr->token = util_random32((uint32_t)p->idx ^ p->id);
	pr->joined = 1;
	pr->tries = 0;
	pr->at = now ? now : 1;
}

/* p's session ended: no more probes (under p->lock). */
void tp_probe_stop(struct peer *p)
{
	struct peer_use *u = peer_used(p);

	if (!u)
		return;
	u->probe.joined = 0;
	u->probe.unreachable = 0;
	u->probe.at = 0;
}

/* Have the progress thread walk the peers at once. */
void tp_probe_kick(struct tp *tp)
{
	uint64_t one = 1;

	atomic_store(&tp->probe.kick, 1);
	if (tp->prog.efd >= 0 && write(tp->prog.efd, &one, sizeof(one)) < 0)
		log_warn("probe: eventfd");
}

/* How long to wait for an answer to the tries-th ping. */
static uint64_t tp_probe_wait(int tries)
{
	if (tries > TP_PROBE_TRIES)
		return TP_PROBE_SLOW_MS;
	return (uint64_t)TP_PROBE_FIRST_MS << (tries - 1);
}

/* One probe datagram to p, joined or up; counted when it went. */
static int tp_probe_post(struct tp *tp, struct peer *p, uint8_t type,
			 uint32_t token)
{
	uint8_t dg[WIRE_PROBE_LEN];
	struct tp_dest d;
	size_t len = wire_probe_build(dg, type, tp->self_id, token);
	int rc = tp_ring_send_one(tp, p, &d, TP_ONE_NOWAIT, dg, len);

	if (rc)
		return rc;
	if (type == WIRE_PING) {
		PEER_ADD(p, probe_tx, 1);
		tp_add(&tp->totals.probe_tx, 1);
	} else {
		PEER_ADD(p, probe_answered, 1);
		tp_add(&tp->totals.probe_answered, 1);
	}
	return 0;
}

/* Give p up as unreachable (under p->lock); its words for .status. */
static void tp_probe_give_up(struct tp *tp, struct peer *p)
{
	char why[PEER_ERROR_MAX];

	peer_used(p)->probe.unreachable = 1;
	snprintf(why, sizeof(why),
		 "datagrams to %s get no answer (qkey, pkey, route or "
		 "firewall?)",
		 p->conf->name);
	peer_set_error_locked(p, ENETUNREACH, why);
}

/* What went to p that needs an answer to prove: messages, and in
 * reliable mode the datagrams sent again and the tail probes. */
static uint64_t tp_probe_sent(const struct peer_use *u)
{
	return atomic_load(&u->cnt.msgs_tx) + atomic_load(&u->cnt.rel_retrans) +
	       atomic_load(&u->cnt.rel_probes);
}

/* The next ping of p's probe goes now, and its answer is awaited for
 * wait ms (under p->lock); its token. */
static uint32_t tp_probe_arm(struct peer_probe *pr, uint64_t now, uint64_t wait)
{
	pr->sent_ms = now;
	pr->at = now + wait;
	return ++pr->token;
}

/*
 * Up peer p at now (under p->lock; look: the peers' look is due): 1 when
 * a ping is due (token set), 0 when none, -1 when its pings went
 * unanswered: p is no longer up, and tp_probe_due's rule for a peer not
 * up makes it unreachable.  At a look, sends to it since the last start
 * a ping; only an answer (probe_rx) ends them: hearing p's own datagrams
 * proves nothing of ours, when the path breaks one way.
 */
static int tp_probe_watch(struct peer *p, struct peer_use *u, uint64_t now,
			  int look, uint32_t *token)
{
	struct peer_probe *pr = &u->probe;
	uint64_t answers = atomic_load(&u->cnt.probe_rx);
	uint64_t sent = tp_probe_sent(u);

	if (p->is_local)
		return 0;
	if (pr->wtries && answers != pr->w_answers)
		pr->wtries = 0;
	if (!pr->wtries) {
		if (!look || sent == pr->w_sent)
			return 0;
		pr->w_sent = sent;
		pr->w_answers = answers;
	} else if (now < pr->at) {
		return 0;
	} else if (pr->wtries >= TP_PROBE_TRIES) {
		p->up = 0;
		u->since = time(NULL);
		pr->wtries = 0;
		pr->tries = TP_PROBE_TRIES;
		pr->at = now;
		return -1;
	}
	pr->wtries++;
	/* slower than a first probe: a peer up that answers late under load
	 * must not lose its writes; a broken path shows in about 12 s */
	*token = tp_probe_arm(pr, now,
			      (uint64_t)TP_PROBE_SLOW_MS << (pr->wtries - 1));
	return 1;
}

/*
 * p's probe at now (under p->lock): 1 when a ping is due (token set),
 * with *failed when p became unreachable by it; *next the earliest
 * deadline so far; look: the look at the peers up is due.
 */
static int tp_probe_due(struct tp *tp, struct peer *p, struct peer_use *u,
			uint64_t now, int look, uint32_t *token, int *failed,
			uint64_t *next)
{
	struct peer_probe *pr = &u->probe;
	int due;

	*failed = 0;
	if (!pr->joined || pr->held)
		return 0;
	if (p->up) {
		due = tp_probe_watch(p, u, now, look, token);
		if (due >= 0) {
			if ((due || pr->wtries) && (!*next || pr->at < *next))
				*next = pr->at;
			return due;
		}
	}
	if (!pr->at)
		return 0;
	if (now < pr->at) {
		if (!*next || pr->at < *next)
			*next = pr->at;
		return 0;
	}
	if (pr->tries >= TP_PROBE_TRIES && !pr->unreachable) {
		tp_probe_give_up(tp, p);
		*failed = 1;
	}
	if (pr->tries <= TP_PROBE_TRIES)
		pr->tries++;
	*token = tp_probe_arm(pr, now, tp_probe_wait(pr->tries));
	if (!*next || pr->at < *next)
		*next = pr->at;
	return 1;
}

/* p gave no answer: say so once (rate-limited: a peer may restart at
 * will), and let what waits for it go. */
static void tp_probe_failed(struct tp *tp, struct peer *p)
{
	static struct log_rl rl;

	log_rl_info(&rl,
		    "peer %s: datagrams to it get no answer, state unreachable "
		    "(check qkey, pkey and the route to it; man ibfs)",
		    p->conf->name);
	if (tp->ops.peer_failed)
		tp->ops.peer_failed(tp->arg, p);
}

/* A send since the watch slept, or a reliable stream busy: its first
 * look comes TP_PROBE_WATCH_MS from now. */
static void tp_probe_watch_start(struct tp *tp, uint64_t now)
{
	struct tp_probeset *ps = &tp->probe;

	if (ps->watch_at || (!atomic_load(&tp->ring.watch_on) && !ps->rel_busy))
		return;
	ps->watch_at = now + TP_PROBE_WATCH_MS;
	if (!ps->next_at || ps->watch_at < ps->next_at)
		ps->next_at = ps->watch_at;
}

/* At a look: whether a message went to a peer since the last one. */
static int tp_probe_sent_since(struct tp *tp)
{
	int sent;

	pthread_mutex_lock(&tp->ring.lock);
	sent = tp->ring.watch_sent;
	tp->ring.watch_sent = 0;
	pthread_mutex_unlock(&tp->ring.lock);
	return sent;
}

/*
 * After a look at now (ups: peers up; sent: sends since the previous
 * look): the next look, or none when there is nothing to watch and no
 * send came meanwhile.  The send that then finds the watch off wakes it
 * (tp_ring.c).
 */
static void tp_probe_watch_next(struct tp *tp, uint64_t now, int ups, int sent)
{
	int keep = ups && (sent || tp->probe.rel_busy);

	tp->probe.rel_busy = 0;
	if (!keep) {
		pthread_mutex_lock(&tp->ring.lock);
		keep = tp->ring.watch_sent;
		if (!keep)
			atomic_store(&tp->ring.watch_on, 0);
		pthread_mutex_unlock(&tp->ring.lock);
	}
	tp->probe.watch_at = keep ? now + TP_PROBE_WATCH_MS : 0;
}

/* Ping every peer due by now; ms until the next is due, -1 if none. */
int tp_probe_tick(struct tp *tp, uint64_t now)
{
	uint64_t next = 0;
	uint32_t token = 0;
	int i, due, failed, look, sent = 0, ups = 0;

	tp_probe_watch_start(tp, now);
	look = tp->probe.watch_at && now >= tp->probe.watch_at;
	if (look)
		sent = tp_probe_sent_since(tp);
	if (!atomic_exchange(&tp->probe.kick, 0) && !look) {
		if (!tp->probe.next_at)
			return -1;
		if (now < tp->probe.next_at)
			return (int)(tp->probe.next_at - now);
	}
	for (i = 0; i < tp->npeers; i++) {
		struct peer *p = &tp->peers[i];
		struct peer_use *u = peer_used(p);

		if (!u) /* never used: never probed */
			continue;
		pthread_mutex_lock(&p->lock);
		due = tp_probe_due(tp, p, u, now, look, &token, &failed, &next);
		ups += p->up && u->probe.joined && !p->is_local;
		pthread_mutex_unlock(&p->lock);
		if (failed)
			tp_probe_failed(tp, p);
		if (due)
			tp_probe_post(tp, p, WIRE_PING, token);
	}
	if (look)
		tp_probe_watch_next(tp, now, ups, sent);
	if (tp->probe.watch_at && (!next || tp->probe.watch_at < next))
		next = tp->probe.watch_at;
	tp->probe.next_at = next;
	return next ? (int)(next > now ? next - now : 0) : -1;
}

/* Note a probe datagram of the batch (under the receive locks). */
void tp_probe_take(struct tp_probes *b, struct peer *p,
		   const struct wire_hdr *h)
{
	if (b->n >= TP_POLL_BATCH)
		return;
	b->e[b->n].p = p;
	b->e[b->n].type = h->type;
	b->e[b->n].token = h->msg_id;
	b->n++;
}

/*
 * p pinged us: answer when it is joined here and not answered within
 * TP_PROBE_GAP_MS; when we probe it still, ping it now (it has just
 * installed us, so our ping may be answered at last).
 */
static void tp_probe_ping(struct tp *tp, struct peer *p, uint32_t token,
			  uint64_t now)
{
	struct peer_use *u = peer_used(p);
	struct peer_probe *pr;
	int answer, again = 0;

	if (!u) /* never used: neither joined nor up */
		return;
	pr = &u->probe;

	pthread_mutex_lock(&p->lock);
	answer = (pr->joined || p->up) && u->ah &&
		 now >= pr->answered_ms + TP_PROBE_GAP_MS;
	if (answer)
		pr->answered_ms = now;
	if (pr->joined && !p->up && !pr->held && pr->at &&
	    now >= pr->sent_ms + TP_PROBE_GAP_MS && pr->at > now) {
		pr->at = now;
		again = 1;
	}
	pthread_mutex_unlock(&p->lock);
	if (answer)
		tp_probe_post(tp, p, WIRE_PONG, token);
	if (again)
		atomic_store(&tp->probe.kick, 1);
}

/* p answered: up, if the answer is to a recent ping of ours. */
static void tp_probe_pong(struct tp *tp, struct peer *p, uint32_t token)
{
	struct peer_use *u = peer_used(p);
	struct peer_probe *pr;
	static struct log_rl rl;
	int up = 0, was_unreachable = 0;

	tp_add(&tp->totals.probe_rx, 1);
	if (!u) /* never used: not joined, so no ping of ours */
		return;
	pr = &u->probe;
	tp_add(&u->cnt.probe_rx, 1);
	pthread_mutex_lock(&p->lock);
	if (pr->joined && !p->up && !pr->held &&
	    (uint32_t)(pr->token - token) < TP_PROBE_WINDOW) {
		up = 1;
		was_unreachable = pr->unreachable;
		pr->unreachable = 0;
		pr->at = 0;
		pr->wtries = 0;
		pr->w_sent = tp_probe_sent(u);
		p->up = 1;
		u->epoch++;
		u->since = time(NULL);
		peer_set_error_locked(p, 0, NULL);
	}
	pthread_mutex_unlock(&p->lock);
	if (!up)
		return;
	atomic_store(&tp->probe.kick, 1); /* its pings are over */
	if (was_unreachable)
		log_rl_info(&rl,
			    "peer %s: datagrams get through again, state up",
			    p->conf->name);
	if (tp->ops.peer_up)
		tp->ops.peer_up(tp->arg, p);
}

/* Answer the batch's pings and take its answers (no lock held). */
void tp_probe_deliver(struct tp *tp, struct tp_probes *b, uint64_t now)
{
	int i;

	for (i = 0; i < b->n; i++) {
		if (b->e[i].type == WIRE_PING)
			tp_probe_ping(tp, b->e[i].p, b->e[i].token, now);
		else
			tp_probe_pong(tp, b->e[i].p, b->e[i].token);
	}
	b->n = 0;
}

/*
 * Our port went down (held, why its words) or came back: down, every
 * peer is down with that reason and no longer probed; back, every peer
 * joined is probed again from its first try, and up once answered.
 * Returns the count of peers (not the local node) that wait for it.
 * Down is a failure every peer carries, with its words: each gets its
 * in-use part then, as .status said "down" of every node before.
 */
int tp_probe_hold(struct tp *tp, int held, const char *why)
{
	uint64_t now = util_now_ms();
	int i, was_up, n = 0;

	tp->probe.port_down = held;
	for (i = 0; i < tp->npeers; i++) {
		struct peer *p = &tp->peers[i];
		struct peer_use *u = held ? peer_use(p) : peer_used(p);

		if (!u) /* never used (or no memory): nothing to hold */
			continue;
		pthread_mutex_lock(&p->lock);
		was_up = p->up;
		u->probe.held = held;
		if (held) {
			p->up = 0;
			peer_set_error_locked(p, ENETDOWN, why);
			if (was_up)
				u->since = time(NULL);
		} else if (p->last_err == ENETDOWN) {
			peer_set_error_locked(p, 0, NULL);
		}
		if (!held && u->probe.joined)
			tp_probe_start(tp, p, now);
		n += u->probe.joined && !p->is_local;
		pthread_mutex_unlock(&p->lock);
		if (held && was_up && tp->ops.peer_failed)
			tp->ops.peer_failed(tp->arg, p);
	}
	atomic_store(&tp->probe.kick, 1);
	return n;
}

/* A path may have changed (GID, LID, SM): probe every joined peer that
 * is not up again; those up stay up until their traffic says else. */
void tp_probe_restart(struct tp *tp)
{
	uint64_t now = util_now_ms();
	int i;

	for (i = 0; i < tp->npeers; i++) {
		struct peer *p = &tp->peers[i];
		struct peer_use *u = peer_used(p);

		if (!u)
			continue;
		pthread_mutex_lock(&p->lock);
		if (u->probe.joined && !p->up && !u->probe.held)
			tp_probe_start(tp, p, now);
		pthread_mutex_unlock(&p->lock);
	}
	atomic_store(&tp->probe.kick, 1);
}

/* The peers met before (an AH made for them), but ourselves: those a
 * change of our address, or of our QPN, must be told of. */
int tp_probe_met(struct tp *tp)
{
	int i, n = 0;

	for (i = 0; i < tp->npeers; i++) {
		struct peer_use *u = peer_used(&tp->peers[i]);

		if (!u)
			continue; /* never used: never met */
		pthread_mutex_lock(&tp->peers[i].lock);
		n += u->ah && !tp->peers[i].is_local;
		pthread_mutex_unlock(&tp->peers[i].lock);
	}
	return n;
}

/*
 * The subnet manager moved the paths (tp_event.c): every peer's AH is
 * retired through the ring, as IPoIB flushes its path records, so that
 * none is used again, the route cache's included.  A peer installed (up
 * or joined) is no longer up and no longer probed, having no AH, and is
 * put in need (tp_peer_need, with no lock held), so that whoever met it
 * resolves its path anew and installs it again; sends meanwhile wait as
 * for a peer not met.  Returns the count of AHs flushed.  Takes ring.lock,
 * then the peer's lock, one peer at a time.
 */
int tp_probe_flush(struct tp *tp, const char *why)
{
	int i, n = 0, need;

	for (i = 0; i < tp->npeers; i++) {
		struct peer *p = &tp->peers[i];
		struct peer_use *u = peer_used(p);

		if (!u) /* never used: no AH, not installed */
			continue;
		pthread_mutex_lock(&tp->ring.lock);
		pthread_mutex_lock(&p->lock);
		need = p->up || u->probe.joined;
		if (u->ah) {
			tp_ring_retire_ah(tp, u->ah);
			u->ah = NULL;
			n++;
		}
		if (need) {
			p->up = 0;
			u->since = time(NULL);
			tp_probe_stop(p);
			peer_set_error_locked(p, EHOSTUNREACH, why);
		}
		pthread_mutex_unlock(&p->lock);
		pthread_mutex_unlock(&tp->ring.lock);
		if (need)
			tp_peer_need(tp, p);
	}
	return n;
}
