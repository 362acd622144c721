/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The announce thread of bootstrap = multicast (announce.h): it announces
 * us on the group on a jittered timer, and at once (rate-limited) when a
 * write waits for a node not heard yet; it takes what the progress
 * thread queued (ann_on_msg), installs the nodes it hears (route
 * resolution blocks, so here and never on the progress thread), and
 * takes down those silent for peer_timeout.  The up nodes sit in a list
 * in the order they were last heard, so the silence check looks at its
 * head only, never at the whole config.
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
	int wake = 0, full, i = ann_admit(a->cfg, m);

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
	if (!full) {
		wake = a->nin == 1;
	} else {
		a->overflow_ms = (int64_t)util_now_ms();
	}
	pthread_mutex_unlock(&a->lock);
	if (full)
		peer_count_drop(NULL, tp_totals(a->tp), DROP_QUEUE_FULL);
	if (wake)
		ann_wake(a);
}

/*
 * tp's need hook, on a sender's thread: a write waits for p, which we
 * have not heard.  Announce now (rate-limited): a p that has not heard
 * us either installs us and answers with its announce by unicast, which
 * brings p up here and sends the write.
 */
static void ann_on_need(void *arg, struct peer *p)
{
	struct announce *a = arg;
	int wake;

	pthread_mutex_lock(&a->lock);
	wake = !a->need;
	a->need = 1;
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

/* Our announce to the group (or to p), as ann_tx counts it. */
static void ann_send(struct announce *a, struct peer *p, int64_t now)
{
	int rc = tp_ann_send(a->tp, p, &a->mine);

	if (rc)
		log_debug("announce: to %s: %s",
			  p ? p->conf->name : "the group", strerror(-rc));
	if (!p)
		a->last_ann = now;
}

/* p is down: silent, or gone elsewhere unreachably.  Sends stop, and
 * whatever waits for p learns it. */
static void ann_down(struct announce *a, int i, int err, const char *why)
{
	struct ann_peer *ap = &a->ap[i];
	struct peer *p = &a->peers[i];

	TAILQ_REMOVE(&a->live, ap, link);
	ap->k.up = 0;
	tp_peer_down(a->tp, p);
	log_info("peer %s down (%s)", p->conf->name, why);
	peer_set_error(p, err, why);
	tp_peer_failed(a->tp, p);
}

/*
 * Bring node i up at h's address: the AH a challenge made for it, the
 * cached one, or a fresh resolution; then tell it we are here.
 */
static void ann_install(struct announce *a, int i, const struct hello *h,
			enum ann_verdict v, int64_t now)
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
	if (ap->k.up)
		TAILQ_REMOVE(&a->live, ap, link);
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
	ap->k.boot = h->addr.boot;
	ap->k.addr = h->addr;
	ap->k.heard_ms = now;
	TAILQ_INSERT_TAIL(&a->live, ap, link);
	ann_send(a, p, now);
}

/* A CHALLENGE, ANSWER, PROOF or CONFIRM of node i: its exchange
 * (announce_trust.c), and node i up once it proved itself to us as D. */
void ann_exchange_in(struct announce *a, int i, const struct ann_msg *m,
		     int64_t now)
{
	struct hello who;
	enum ann_verdict v = ann_exchange(a, i, m, now, &who);

	if (v != ANN_SAME)
		ann_install(a, i, &who, v, now);
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

/* An announce of node i: alive, new or restarted; with a secret or a
 * ca, one of an incarnation not proven yet is challenged first. */
static void ann_heard(struct announce *a, int i, const struct ann_msg *m,
		      int64_t now)
{
	struct ann_peer *ap = &a->ap[i];
	enum ann_verdict v;

	if (ann_proves(a) && !ann_trusted(a, i, &m->h)) {
		ann_challenge(a, i, &m->h, now);
		return;
	}
	v = ann_judge(&ap->k, &m->h);
	if (v != ANN_SAME) {
		ann_install(a, i, &m->h, v, now);
		return;
	}
	ap->k.heard_ms = now;
	TAILQ_REMOVE(&a->live, ap, link);
	TAILQ_INSERT_TAIL(&a->live, ap, link);
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
	if (!a->ap[i].k.up)
		peer_attempt(p);
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
	if (m->kind == ANN_ANNOUNCE)
		ann_heard(a, i, m, now);
	else
		ann_exchange_in(a, i, m, now);
}

/* Take down the nodes silent for peer_timeout (the oldest heard come
 * first); when the next one would be due. */
static int64_t ann_silence(struct announce *a, int64_t now, int64_t wake)
{
	int timeout = a->cfg->peer_timeout_ms;
	struct ann_peer *ap;
	char why[96];

	while ((ap = TAILQ_FIRST(&a->live)) &&
	       ann_silent(&ap->k, now, timeout, a->lost_ms)) {
		snprintf(why, sizeof(why), "no announce for %lld ms",
			 (long long)(now - ap->k.heard_ms));
		ann_down(a, (int)(ap - a->ap), ETIMEDOUT, why);
	}
	if (ap && ann_silent_at(&ap->k, timeout, a->lost_ms) < wake)
		wake = ann_silent_at(&ap->k, timeout, a->lost_ms);
	return wake;
}

/*
 * The nodes we installed, the local one among them, whose AHs a fabric
 * event flushed (tp_peer_flushed): their paths resolved again, each
 * installed again at the address it had.
 */
static void ann_reroute(struct announce *a)
{
	struct peer_addr *addr;
	int i, rc;

	for (i = 0; i < a->cfg->nnodes; i++) {
		if (!tp_peer_flushed(a->tp, &a->peers[i]))
			continue;
		if (i == a->cfg->local)
			addr = &a->mine.h.addr;
		else if (a->ap[i].k.up)
			addr = &a->ap[i].k.addr;
		else
			continue;
		rc = bootstrap_peer_up(a->tp, a->rt, &a->peers[i], addr,
				       a->cfg->route);
		if (rc < 0)
			log_info("peer %s: resolving its path again: %s",
				 a->peers[i].conf->name, strerror(-rc));
	}
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
	int n, need, i, retell;

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
	need = a->need;
	a->need = 0;
	retell = a->retell;
	a->retell = 0;
	a->lost_ms = a->overflow_ms;
	pthread_mutex_unlock(&a->lock);
	if (retell)
		ann_remake(a);
	ann_misplaced(a, &mh, misplaced);
	ann_cert_fresh(a);
	for (i = 0; i < n; i++)
		ann_in(a, &batch[i], now);
	if (need)
		ann_reroute(a);
	if (retell || (need && now - a->last_ann >= a->need_gap_ms))
		ann_send(a, NULL, now);
}

/* The thread: announce when due, take what arrived, watch silence. */
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
			ann_send(a, NULL, now);
			a->next_ann =
				ann_next(now, a->cfg->announce_interval_ms,
					 (uint32_t)rand_r(&a->seed));
		}
		wake = ann_silence(a, now, a->next_ann);
		wake = ann_pending(a, now, wake);
		if (poll(&pfd, 1, wake > now ? (int)(wake - now) : 0) > 0 &&
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
	TAILQ_INIT(&a->live);
	TAILQ_INIT(&a->pend);
	a->key.secret = cfg->secret;
	a->key.len = strlen(cfg->secret);
	a->key.cert = cert;
	pthread_mutex_init(&a->lock, NULL);
	a->seed = util_random32((uint32_t)getpid());
	a->need_gap_ms = cfg->announce_interval_ms / 4;
	if (a->need_gap_ms < ANN_NEED_GAP_MIN)
		a->need_gap_ms = ANN_NEED_GAP_MIN;
	*out = a;
	a->ap = calloc(cfg->nnodes, sizeof(*a->ap));
	a->inbox = calloc(ANN_INBOX, sizeof(*a->inbox));
	a->work = calloc(ANN_INBOX, sizeof(*a->work));
	a->inder = malloc(ANN_INBOX_DER);
	a->workder = malloc(ANN_INBOX_DER);
	a->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!a->ap || !a->inbox || !a->work || !a->inder || !a->workder)
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
		 "%s every %d ms (boot 0x%08x)",
		 me->conf->name, a->mine.h.addr.qpn, cfg->mcast_group,
		 cfg->announce_interval_ms, a->mine.h.addr.boot);
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
