/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The announce thread of bootstrap = multicast (announce.h): it announces
 * us on the group ANN_STARTUP_MAX times at start and after a retell, and
 * never again; it takes what the progress thread queued (ann_on_msg),
 * remembers the nodes it hears, and installs one (route resolution
 * blocks, so here and never on the progress thread) only when it is in
 * use: a write wants it, it restarted while up here, or it installed us
 * (its MEET).  A write that wants a node (the need hook) puts it in the
 * seek list: installed from what was heard of it, else asked for on the
 * group (ANN_QUERY, one for every node when several are wanted at once),
 * and given up at peer_timeout.  Liveness is the data path's (the
 * probe): nothing here times the nodes up, and with no write waiting and
 * no challenge pending the thread has no timer armed.
 *
 * A node's announce says nothing that a forged one could not (without a
 * secret there is no proof), but the transport kept only announces whose
 * hello names the QP and GID they came from: to announce a QP one must
 * send from it, as one must to send it data.  With a secret or a ca, an
 * incarnation is trusted only once proven (announce_trust.c).
 *
 * Locks: a->lock guards the inbox, need and wake fields, taken by the
 * hooks (progress thread, senders) and by this thread to take them; it
 * is a leaf, and no upcall runs under it.  Everything else is this
 * thread's alone.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/eventfd.h>
#include <sys/queue.h>

#include "announce_int.h"
#include "log.h"
#include "util.h"

/* Wake the thread (any thread; the eventfd never blocks). */
static void ann_wake(struct announce *a)
{
	uint64_t one = 1;

	if (write(a->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("announce: eventfd");
}

/* m into the inbox, its certificate copied beside it (m->der points
 * into a receive slot, reposted once the hook returns); 0 when full.
 * Under a->lock. */
static int ann_queue(struct announce *a, const struct ann_msg *m)
{
	struct ann_msg *q;

	if (a->nin == ANN_INBOX ||
	    (m->der && a->nder + m->derlen > ANN_INBOX_DER))
		return 0;
	q = &a->inbox[a->nin++];
	*q = *m;
	if (m->der) {
		memcpy(a->inder + a->nder, m->der, m->derlen);
		q->der = a->inder + a->nder;
		a->nder += m->derlen;
	}
	return 1;
}

/* tp's announce hook, on the progress thread: queue, never block. */
static void ann_on_msg(void *arg, const struct ann_msg *m)
{
	struct announce *a = arg;
	int wake = 0, i = ann_admit(a->cfg, m);
	int full;

	/* a name the config lacks, or a node's from an address surely not
	 * its own, never takes a slot (a hash lookup, a compare); the
	 * latter is the thread's to say (ann_misplaced) */
	if (i < 0) {
		peer_count_drop(NULL, tp_totals(a->tp), DROP_ANN_REFUSED);
		if (i == -EPERM) {
			pthread_mutex_lock(&a->lock);
			a->misplaced++;
			a->misplaced_h = m->h;
			pthread_mutex_unlock(&a->lock);
		}
		return;
	}
	pthread_mutex_lock(&a->lock);
	full = !ann_queue(a, m);
	wake = !full && a->nin == 1;
	pthread_mutex_unlock(&a->lock);
	if (full)
		peer_count_drop(NULL, tp_totals(a->tp), DROP_QUEUE_FULL);
	if (wake)
		ann_wake(a);
}

/*
 * tp's need hook, on a sender's thread: a write waits for p, which is
 * not up.  p is queued once for the thread (ann_want), which meets it or
 * asks the group for it; a write retrying meanwhile costs a flag test.
 */
static void ann_on_need(void *arg, struct peer *p)
{
	struct announce *a = arg;
	int i = (int)(p - a->peers), wake = 0;

	if (i < 0 || i >= a->cfg->nnodes)
		return;
	pthread_mutex_lock(&a->lock);
	if (!a->needs[i]) {
		a->needs[i] = 1;
		a->needq[a->nneed++] = i;
		wake = a->nneed == 1;
	}
	pthread_mutex_unlock(&a->lock);
	if (wake)
		ann_wake(a);
}

static void ann_stranger(struct announce *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The heal hook's half (announce.h). */
void ann_retell(struct announce *a)
{
	pthread_mutex_lock(&a->lock);
	a->retell = 1;
	pthread_mutex_unlock(&a->lock);
	ann_wake(a);
}

/* SIGHUP's half (announce.h): ann_take sees the new generation. */
void ann_reload(struct announce *a)
{
	if (a)
		ann_wake(a);
}

/* A line about a stranger's announce, at most one a second. */
static void ann_stranger(struct announce *a, const char *fmt, ...)
{
	uint64_t now = util_now_ms();
	char msg[256];
	va_list ap;

	if (a->stranger_ms && now - a->stranger_ms < ANN_STRANGER_LOG_MS) {
		a->stranger_quiet++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warnx("announce: %s%s", msg,
		  a->stranger_quiet ? " (and others like it)" : "");
	a->stranger_ms = now;
	a->stranger_quiet = 0;
}

/* m to the group (or to p, installed), as ann_tx counts it. */
static void ann_send(struct announce *a, struct peer *p,
		     const struct ann_msg *m)
{
	int rc = tp_ann_send(a->tp, p, m);

	if (rc)
		log_debug("announce: to %s: %s",
			  p ? p->conf->name : "the group", strerror(-rc));
}

/* p is down: gone elsewhere unreachably.  Sends stop, and whatever
 * waits for p learns it. */
static void ann_down(struct announce *a, int i, int err, const char *why)
{
	struct ann_peer *ap = &a->ap[i];
	struct peer *p = &a->peers[i];

	ap->k.up = 0;
	tp_peer_down(a->tp, p);
	log_info("peer %s down (%s)", p->conf->name, why);
	peer_set_error(p, err, why);
	tp_peer_failed(a->tp, p);
}

/*
 * Bring node i up at h's address: the AH a challenge made for it, the
 * cached one, or a fresh resolution; then, with tell, send it our MEET,
 * on which it installs us (unless it installed us first: its MEET, or
 * its answer to our query, brought it here).
 */
static void ann_install(struct announce *a, int i, const struct hello *h,
			enum ann_verdict v, int tell)
{
	struct ibv_ah *ah = ann_take_ah(a, i, &h->addr);
	static struct log_rl rl_restart;
	struct ann_peer *ap = &a->ap[i];
	struct peer *p = &a->peers[i];
	char why[96];
	int rc = 1;

	/* a new boot at the same QPN and GID is a new incarnation all the
	 * same: what was pending for the old one fails */
	if (v == ANN_RESTART && ap->k.up)
		tp_peer_down(a->tp, p);
	if (ah)
		tp_peer_up(a->tp, p, &h->addr, ah, a->cfg->route);
	else
		rc = bootstrap_peer_up(a->tp, a->rt, p, &h->addr,
				       a->cfg->route);
	if (rc < 0) {
		snprintf(why, sizeof(why), "route resolution failed: %s",
			 strerror(-rc));
		if (ap->k.up)
			ann_down(a, i, EHOSTUNREACH, why);
		else
			bootstrap_note(a->tp, p, EHOSTUNREACH,
				       "announce:", why);
		return;
	}
	/* without a secret anyone at a node's address can restart it at
	 * will, one line each: those lines are rate-limited */
	if (v == ANN_RESTART)
		log_rl_info(&rl_restart, "peer %s restarted (qpn 0x%06x%s)",
			    p->conf->name, h->addr.qpn,
			    rc ? "" : ", address handle cached");
	else
		log_info("peer %s up (qpn 0x%06x%s)", p->conf->name,
			 h->addr.qpn, rc ? "" : ", address handle cached");
	bootstrap_recovered(p);
	ap->k.up = 1;
	ap->k.known = 1;
	ap->k.boot = h->addr.boot;
	ap->k.addr = h->addr;
	if (tell)
		ann_send(a, p, &a->meet);
}

/* A CHALLENGE, ANSWER, PROOF or CONFIRM of node i: its exchange
 * (announce_trust.c), and node i up once it proved itself to us as D. */
void ann_exchange_in(struct announce *a, int i, const struct ann_msg *m,
		     int64_t now)
{
	struct hello who;
	enum ann_verdict v = ann_exchange(a, i, m, now, &who);

	if (v != ANN_SAME)
		ann_install(a, i, &who, v, 1);
}

/* The config node an announce names, or -1 (logged): not in the config,
 * or ourselves (our own copy from the group is dropped quietly). */
static int ann_who(struct announce *a, const struct ann_msg *m)
{
	int i = config_node_index(a->cfg, m->h.name);

	if (i == a->cfg->local && m->h.addr.qpn == a->mine.h.addr.qpn &&
	    m->h.addr.boot == a->mine.h.addr.boot)
		return -1;
	if (i < 0 || i == a->cfg->local) {
		peer_count_drop(NULL, tp_totals(a->tp), DROP_ANN_REFUSED);
		ann_stranger(a, "%s announces itself (qpn 0x%06x), %s",
			     m->h.name, m->h.addr.qpn,
			     i < 0 ? "which is not in the config"
				   : "but that is our name");
		return -1;
	}
	return i;
}

/* Why node i's announce h cannot be taken, in config words; NULL when
 * it can. */
static const char *ann_refusal(struct announce *a, int i, const struct hello *h,
			       char *buf, size_t len)
{
	const struct config_node *n = &a->cfg->nodes[i];

	if (hello_refusal(h, n->delivery, a->cfg->qkey, buf, len))
		return buf;
	if (!(h->flags & HELLO_F_AUTH) != !a->cfg->secret[0])
		return a->cfg->secret[0] ? "authentication failed: it has no "
					   "secret, we have one"
					 : "authentication failed: it has a "
					   "secret, we have none";
	if (!(h->flags & HELLO_F_CERT) != !a->key.cert)
		return a->key.cert ? "authentication failed: it has no "
				     "certificate, we have a ca"
				   : "authentication failed: it has a ca, we "
				     "have none";
	return NULL;
}

/*
 * Remember h's address for node i while it is not up here: a write that
 * wants it installs it from there.  An address surely the node's
 * (ann_addr_fits) is not replaced by one that is not, so that a stranger
 * announcing under its name does not take its place in what we know.
 */
static void ann_know(struct announce *a, int i, const struct hello *h)
{
	struct ann_known *k = &a->ap[i].k;
	const struct config_node *n = &a->cfg->nodes[i];

	if (k->up)
		return;
	if (k->known && ann_addr_fits(n, &k->addr) == ANN_ADDR_YES &&
	    ann_addr_fits(n, &h->addr) != ANN_ADDR_YES)
		return;
	k->known = 1;
	k->boot = h->addr.boot;
	k->addr = h->addr;
}

/*
 * An ANNOUNCE, QUERY or MEET of node i: remembered, and acted on as
 * ann_decide says; with a secret or a ca, an incarnation not proven yet
 * is challenged instead of installed.  A MEET answers one node's queries
 * at most every ANN_RTO_MIN.
 */
static void ann_heard(struct announce *a, int i, const struct ann_msg *m,
		      int64_t now)
{
	struct ann_peer *ap = &a->ap[i];
	enum ann_do d = ann_decide(&ap->k, ap->wanted, m, a->self_id);

	ann_know(a, i, &m->h);
	if (d == ANN_DO_KNOW)
		return;
	if (d == ANN_DO_MEET) {
		if (!ap->met || now - ap->met >= ANN_RTO_MIN) {
			ap->met = now;
			ann_send(a, &a->peers[i], &a->meet);
		}
		return;
	}
	peer_attempt(&a->peers[i]);
	if (ann_proves(a) && !ann_trusted(a, i, &m->h)) {
		ann_challenge(a, i, &m->h, now);
		return;
	}
	ann_install(a, i, &m->h, ann_judge(&ap->k, &m->h), d == ANN_DO_INSTALL);
}

/*
 * A node's announce from an address the config says is not its own:
 * the progress thread dropped it (ann_admit), before it took a place in
 * the inbox or was challenged or answered, so a stranger learns no proof
 * to guess at offline; here it is said, rate-limited (n of them since
 * the last look, h the last).  strict_source = no (NAT, a node with
 * several addresses) takes any.
 */
static void ann_misplaced(struct announce *a, const struct hello *h,
			  unsigned long n)
{
	const uint8_t *gid = h->addr.gid.raw;
	char from[INET6_ADDRSTRLEN];
	int i = config_node_index(a->cfg, h->name);

	if (!n || i < 0)
		return;
	if (!(util_is_v4mapped(gid)
		      ? inet_ntop(AF_INET, gid + 12, from, sizeof(from))
		      : inet_ntop(AF_INET6, gid, from, sizeof(from))))
		snprintf(from, sizeof(from), "?");
	a->stranger_quiet += n - 1;
	ann_stranger(a,
		     "%s announces itself from %s (qpn 0x%06x), not from "
		     "its addr %s",
		     h->name, from, h->addr.qpn, a->cfg->nodes[i].addr);
}

/* One message taken: whose, counted, refused or handled by its kind. */
static void ann_in(struct announce *a, const struct ann_msg *m, int64_t now)
{
	struct peer *p;
	const char *why;
	char buf[PEER_ERROR_MAX];
	int i = ann_who(a, m);

	if (i < 0)
		return;
	p = &a->peers[i];
	/* a node not in use here costs no per-peer memory for being heard */
	if (peer_used(p))
		PEER_ADD(p, ann_rx, 1);
	atomic_fetch_add_explicit(&tp_totals(a->tp)->ann_rx, 1,
				  memory_order_relaxed);
	why = ann_refusal(a, i, &m->h, buf, sizeof(buf));
	if (why) {
		peer_count_drop(p, tp_totals(a->tp), DROP_ANN_REFUSED);
		/* an up node keeps its state: anyone may send this */
		if (!a->ap[i].k.up)
			bootstrap_note(a->tp, p, EPROTO, "peer", why);
		return;
	}
	if (m->kind == ANN_ANNOUNCE || m->kind == ANN_QUERY ||
	    m->kind == ANN_MEET) {
		ann_heard(a, i, m, now);
	} else {
		/* a challenger's address, too, is where a write to it goes:
		 * it then challenges it directly, as D */
		ann_know(a, i, &m->h);
		ann_exchange_in(a, i, m, now);
	}
}

/* Our query for node i, or with i < 0 for every node, to the group. */
static void ann_query(struct announce *a, int i)
{
	struct ann_msg q = a->meet;

	q.kind = ANN_QUERY;
	q.target = i < 0 ? 0 : wire_node_id(a->cfg->nodes[i].name);
	ann_send(a, NULL, &q);
}

/* A write wants node i, not up: into the seek list, its first step now. */
static void ann_want(struct announce *a, int i, int64_t now)
{
	struct ann_peer *ap = &a->ap[i];

	if (ap->wanted || i == a->cfg->local)
		return;
	ap->wanted = 1;
	ap->asked = 0;
	ap->rto = ANN_RTO_MIN;
	ap->next = now;
	ap->until = now + a->cfg->peer_timeout_ms;
	TAILQ_INSERT_TAIL(&a->seek, ap, slink);
}

/* Node i is up, or given up: out of the seek list. */
static void ann_unwant(struct announce *a, struct ann_peer *ap)
{
	TAILQ_REMOVE(&a->seek, ap, slink);
	ap->wanted = 0;
}

/* Install wanted node i from what was heard of it (one resolution); with
 * a secret or a ca, challenge that incarnation unless it proved itself. */
static void ann_from_known(struct announce *a, int i, int64_t now)
{
	struct ann_peer *ap = &a->ap[i];
	struct hello h;

	memset(&h, 0, sizeof(h));
	snprintf(h.name, sizeof(h.name), "%s", a->cfg->nodes[i].name);
	h.addr = ap->k.addr;
	peer_attempt(&a->peers[i]);
	if (ann_proves(a) && !ann_trusted(a, i, &h))
		ann_challenge(a, i, &h, now);
	else
		ann_install(a, i, &h, ann_judge(&ap->k, &h), 1);
}

/* No answer for peer_timeout: what waits for node i fails, with why,
 * unless it was refused (EACCES, EPROTO): a refusal says more than
 * silence, and is logged once, not in turn with it. */
static void ann_seek_failed(struct announce *a, int i)
{
	struct peer *p = &a->peers[i];
	char why[96];
	int refused;

	pthread_mutex_lock(&p->lock);
	refused = p->last_err == EACCES || p->last_err == EPROTO;
	pthread_mutex_unlock(&p->lock);
	if (refused) {
		tp_peer_failed(a->tp, p);
		return;
	}

	if (a->ap[i].asked)
		snprintf(why, sizeof(why),
			 "no answer on mcast_group to our query in %d ms",
			 a->cfg->peer_timeout_ms);
	else
		snprintf(why, sizeof(why),
			 "no answer at the address it announced in %d ms",
			 a->cfg->peer_timeout_ms);
	bootstrap_note(a->tp, &a->peers[i], EHOSTUNREACH, "announce:", why);
}

/* One step for wanted node ap, due now; 1 when it may join a query for
 * every node (ann_seek sends it). */
static int ann_seek_one(struct announce *a, struct ann_peer *ap, int64_t now)
{
	enum ann_step step = ann_seek_step(&ap->k, ap->asked);
	int i = (int)(ap - a->ap);

	if (step == ANN_STEP_INSTALL) {
		ann_from_known(a, i, now);
		ap->next = now + ANN_RTO_MAX; /* its probe's first second */
		return 0;
	}
	if (step == ANN_STEP_QUERY)
		ann_query(a, i);
	ap->asked = 1;
	ap->next = now + ap->rto;
	ap->rto = ap->rto * 2 > ANN_RTO_MAX ? ANN_RTO_MAX : ap->rto * 2;
	return step == ANN_STEP_ANY;
}

/*
 * The nodes writes want: up by now (out), given up at peer_timeout, or
 * their next step if due.  Those asked for the first time in one pass
 * go in one query for every node when they are a good part of the
 * config (ann_query_all), so that the first write to all/ of a cold
 * cluster costs one datagram to the group, not one per node, and by
 * name otherwise, so that a few wanted do not make every node install
 * us; a resend names its node alone (one that has us up already
 * ignores a query for every node).  When the next step is due.
 */
static int64_t ann_seek(struct announce *a, int64_t now, int64_t wake)
{
	struct ann_peer *ap, *tmp;
	int any = 0, all;

	for (ap = TAILQ_FIRST(&a->seek); ap; ap = tmp) {
		tmp = TAILQ_NEXT(ap, slink);
		if (peer_is_up(&a->peers[ap - a->ap])) {
			ann_unwant(a, ap);
			continue;
		}
		if (now >= ap->until) {
			ann_unwant(a, ap);
			ann_seek_failed(a, (int)(ap - a->ap));
			continue;
		}
		ap->fresh = now >= ap->next && ann_seek_one(a, ap, now);
		any += ap->fresh;
		wake = ap->next < wake ? ap->next : wake;
		wake = ap->until < wake ? ap->until : wake;
	}
	all = ann_query_all(any, a->cfg->nnodes);
	if (all)
		ann_query(a, -1);
	TAILQ_FOREACH (ap, &a->seek, slink) {
		if (ap->fresh && !all)
			ann_query(a, (int)(ap - a->ap));
		ap->fresh = 0;
	}
	return wake;
}

/*
 * Node i, which a write wants, was installed here (or is the local one)
 * and a fabric event flushed its AH (tp_peer_flushed): its path resolved
 * again, installed again at the address it had; 1 when so.
 */
static int ann_reroute(struct announce *a, int i)
{
	const struct peer_addr *addr;
	int rc;

	if (!tp_peer_flushed(a->tp, &a->peers[i]))
		return 0;
	if (i == a->cfg->local)
		addr = &a->mine.h.addr;
	else if (a->ap[i].k.up)
		addr = &a->ap[i].k.addr;
	else
		return 0;
	rc = bootstrap_peer_up(a->tp, a->rt, &a->peers[i], addr, a->cfg->route);
	if (rc < 0)
		log_info("peer %s: resolving its path again: %s",
			 a->peers[i].conf->name, strerror(-rc));
	return 1;
}

static void ann_make(struct announce *a);

/* Our announce made again, for the transport's new QPN; the local node
 * up at it (the old AH went with the device). */
static void ann_remake(struct announce *a)
{
	struct peer *me = &a->peers[a->cfg->local];
	int rc;

	ann_make(a);
	rc = bootstrap_peer_up(a->tp, a->rt, me, &a->mine.h.addr,
			       a->cfg->route);
	if (rc < 0)
		log_warnx("announce: cannot resolve the local node %s: %s",
			  me->conf->name, strerror(-rc));
}

/* Take what the hooks queued, then deal with it without the lock. */
static void ann_take(struct announce *a, int64_t now)
{
	unsigned long misplaced;
	struct ann_msg *batch;
	uint8_t *der;
	struct hello mh;
	uint64_t gen;
	int n, nneed, *needq, i, retell;

	pthread_mutex_lock(&a->lock);
	batch = a->inbox;
	n = a->nin;
	a->inbox = a->work;
	a->work = batch;
	a->nin = 0;
	der = a->inder;
	a->inder = a->workder;
	a->workder = der;
	a->nder = 0;
	misplaced = a->misplaced;
	a->misplaced = 0;
	mh = a->misplaced_h;
	needq = a->needq;
	nneed = a->nneed;
	a->needq = a->workq;
	a->workq = needq;
	a->nneed = 0;
	for (i = 0; i < nneed; i++)
		a->needs[needq[i]] = 0;
	retell = a->retell;
	a->retell = 0;
	pthread_mutex_unlock(&a->lock);
	if (retell) {
		ann_remake(a);
		a->nann = 0;
		a->next_ann = now;
	}
	ann_misplaced(a, &mh, misplaced);
	gen = a->der_gen;
	if (!ann_cert_fresh(a) && gen && a->der_gen != gen)
		ann_reprove(a, now);
	for (i = 0; i < n; i++)
		ann_in(a, &batch[i], now);
	for (i = 0; i < nneed; i++)
		if (!ann_reroute(a, needq[i]))
			ann_want(a, needq[i], now);
}

/* The thread: take what arrived, announce at start (and retell), seek
 * what writes want; with nothing to time, it sleeps (poll -1). */
static void *ann_thread(void *arg)
{
	struct announce *a = arg;
	struct pollfd pfd = {.fd = a->efd, .events = POLLIN};
	int64_t now, wake;
	uint64_t v;

	pthread_setname_np(pthread_self(), "ibfs-announce");
	while (!atomic_load(&a->stop)) {
		now = (int64_t)util_now_ms();
		ann_take(a, now);
		if (now >= a->next_ann) {
			ann_send(a, NULL, &a->mine);
			a->next_ann = ann_startup_next(
				now, ++a->nann, a->cfg->announce_interval_ms,
				(uint32_t)rand_r(&a->seed));
		}
		wake = ann_seek(a, now, a->next_ann);
		wake = ann_pending(a, now, wake);
		if (poll(&pfd, 1, util_wait_ms(now, wake)) > 0 &&
		    read(a->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			log_warn("announce: eventfd");
	}
	return NULL;
}

/* Our announce: our hello, with the transport's boot id (it names our
 * reliable streams too, so no other may go here), encoded once. */
static void ann_make(struct announce *a)
{
	struct tp_info ti;

	tp_info_get(a->tp, &ti); /* one device's address, whole */
	memset(&a->mine, 0, sizeof(a->mine));
	a->mine.kind = ANN_ANNOUNCE;
	hello_make(&a->mine.h, a->cfg, &ti);
	if (a->cfg->secret[0])
		a->mine.h.flags |= HELLO_F_AUTH;
	if (a->key.cert)
		a->mine.h.flags |= HELLO_F_CERT;
	hello_encode(&a->mine.h, a->mine.hello);
	a->meet = a->mine;
	a->meet.kind = ANN_MEET;
}

/* Release what ann_new made; tolerates a partial one. */
static void ann_free(struct announce *a)
{
	int i;

	for (i = 0; a->ap && i < a->cfg->nnodes; i++) {
		if (a->ap[i].k.up || i == a->cfg->local)
			tp_peer_down(a->tp, &a->peers[i]);
		ann_trust_free(a, i);
	}
	if (a->efd >= 0)
		close(a->efd);
	pthread_mutex_destroy(&a->lock);
	free(a->ap);
	free(a->needs);
	free(a->needq);
	free(a->workq);
	free(a->inbox);
	free(a->work);
	free(a->inder);
	free(a->workder);
	free(a);
}

/* An announce with its tables and nothing started. */
static int ann_new(struct announce **out, const struct config *cfg,
		   struct peer *peers, struct cert *cert, struct tp *tp,
		   struct route *rt)
{
	struct announce *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->cfg = cfg;
	a->peers = peers;
	a->tp = tp;
	a->rt = rt;
	a->efd = -1;
	TAILQ_INIT(&a->seek);
	TAILQ_INIT(&a->pend);
	a->key.secret = cfg->secret;
	a->key.len = strlen(cfg->secret);
	a->key.cert = cert;
	pthread_mutex_init(&a->lock, NULL);
	a->seed = util_random32((uint32_t)getpid());
	a->self_id = wire_node_id(cfg->nodes[cfg->local].name);
	*out = a;
	a->ap = calloc(cfg->nnodes, sizeof(*a->ap));
	a->needs = calloc(cfg->nnodes, 1);
	a->needq = calloc(cfg->nnodes, sizeof(*a->needq));
	a->workq = calloc(cfg->nnodes, sizeof(*a->workq));
	a->inbox = calloc(ANN_INBOX, sizeof(*a->inbox));
	a->work = calloc(ANN_INBOX, sizeof(*a->work));
	a->inder = malloc(ANN_INBOX_DER);
	a->workder = malloc(ANN_INBOX_DER);
	a->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!a->ap || !a->needs || !a->needq || !a->workq || !a->inbox ||
	    !a->work || !a->inder || !a->workder)
		return -ENOMEM;
	return a->efd < 0 ? -errno : 0;
}

/* The local peer first (sends to ourselves loop through the HCA), then
 * the thread, then the hooks. */
int ann_open(struct announce **out, const struct config *cfg,
	     struct peer *peers, struct cert *cert, struct tp *tp,
	     struct route *rt)
{
	struct announce *a = NULL;
	struct peer *me = &peers[cfg->local];
	int rc;

	rc = ann_new(&a, cfg, peers, cert, tp, rt);
	if (rc)
		goto fail;
	rc = ann_cert_fresh(a);
	if (rc)
		goto fail;
	if (cert)
		log_info("announce: nodes prove who they are with certificates "
			 "of the cluster CA (%zu bytes a proof)",
			 (size_t)ANN_CERT_DGRAM(a->key.derlen));
	ann_make(a);
	rc = bootstrap_peer_up(tp, rt, me, &a->mine.h.addr, cfg->route);
	if (rc < 0) {
		log_warnx("announce: cannot resolve the local node %s: %s",
			  me->conf->name, strerror(-rc));
		goto fail;
	}
	log_info("peer %s up (qpn 0x%06x, local); announcing on mcast_group "
		 "%s %d times from now, within %d ms (boot 0x%08x)",
		 me->conf->name, a->mine.h.addr.qpn, cfg->mcast_group,
		 ANN_STARTUP_MAX, cfg->announce_interval_ms * 3 / 2,
		 a->mine.h.addr.boot);
	rc = -pthread_create(&a->thr, NULL, ann_thread, a);
	if (rc)
		goto fail;
	a->thr_started = 1;
	tp_set_announce(tp, ann_on_msg, a);
	tp_set_need(tp, ann_on_need, a);
	*out = a;
	return 0;
fail:
	if (a)
		ann_free(a);
	return rc;
}

/* The hooks first, so nothing queues for a thread that is gone. */
void ann_close(struct announce *a)
{
	if (!a)
		return;
	tp_set_need(a->tp, NULL, NULL);
	tp_set_announce(a->tp, NULL, NULL);
	if (a->thr_started) {
		atomic_store(&a->stop, 1);
		ann_wake(a);
		pthread_join(a->thr, NULL);
	}
	ann_free(a);
}
