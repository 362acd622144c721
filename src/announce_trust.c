/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bootstrap = multicast with a secret, on the announce thread: no
 * announce is trusted until the challenge and response of
 * announce_auth.c has gone both ways with its node.  Hearing an
 * incarnation (boot id and address) not proven yet, this node challenges
 * it as D, over UD unicast through an AH of its own (sah: the node is not
 * installed, so the source filter still keeps it out), sends its message
 * again while unanswered (ANN_RTO_MIN doubling to ANN_RTO_MAX) and gives
 * up at peer_timeout ("authentication failed: ...").  Challenged by a
 * node, it answers as L.
 *
 * The order keeps the TCP handshake's rule that whoever sees the other up
 * first is known to it already: L, once D's proof checks out, accepts
 * D's datagrams (tp_peer_expect) but marks it up only on D's next
 * announce; D marks L up on L's confirmation, and then sends L its
 * announce by unicast (ann_install), as D sends READY over TCP.  Once
 * proven, an incarnation's announces are its liveness, unauthenticated
 * like its data: to send one, one must send from its QP and GID.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/rand.h>

#include "announce_int.h"
#include "log.h"
#include "util.h"

/* Whether h is the incarnation node ap proved. */
int ann_trusted(const struct ann_peer *ap, const struct hello *h)
{
	return ap->trusted && ap->tboot == h->addr.boot &&
	       peer_addr_same(&ap->taddr, &h->addr);
}

/* An AH to addr for node i's exchange (made here: route resolution), and
 * its state; 0, or -errno with the reason noted. */
static int ann_reach(struct announce *a, int i, const struct peer_addr *addr)
{
	struct ann_peer *ap = &a->ap[i];
	struct peer *p = &a->peers[i];
	struct ibv_ah *ah;
	char why[96];
	int rc;

	if (!ap->auth && !(ap->auth = calloc(1, sizeof(*ap->auth))))
		return -ENOMEM;
	if (ap->sah && peer_addr_same(&ap->saddr, addr))
		return 0;
	rc = route_resolve(a->rt, p->conf, addr, &ah);
	if (rc) {
		snprintf(why, sizeof(why), "route resolution failed: %s",
			 strerror(-rc));
		bootstrap_note(a->tp, p, EHOSTUNREACH, "announce:", why);
		return rc;
	}
	tp_ah_retire(a->tp, ap->sah);
	ap->sah = ah;
	ap->saddr = *addr;
	return 0;
}

/* The AH a challenge made for node i at addr, for tp_peer_up to keep;
 * NULL when there is none for addr (one for another address goes). */
struct ibv_ah *ann_take_ah(struct announce *a, int i,
			   const struct peer_addr *addr)
{
	struct ann_peer *ap = &a->ap[i];
	struct ibv_ah *ah = ap->sah;

	ap->sah = NULL;
	if (ah && peer_addr_same(&ap->saddr, addr))
		return ah;
	tp_ah_retire(a->tp, ah);
	return NULL;
}

/* One message of an exchange to node i at addr: as installed when it is
 * up there, else through the exchange's AH. */
static void ann_send_to(struct announce *a, int i, const struct peer_addr *addr,
			const struct ann_msg *m)
{
	struct ann_peer *ap = &a->ap[i];
	int rc;

	if (ap->k.up && peer_addr_same(&ap->k.addr, addr)) {
		rc = tp_ann_send(a->tp, &a->peers[i], m);
	} else {
		rc = ann_reach(a, i, addr);
		if (!rc)
			rc = tp_ann_send_to(a->tp, ap->sah, addr, m);
	}
	if (rc)
		log_debug("announce: to %s: %s", a->peers[i].conf->name,
			  strerror(-rc));
}

/* Our challenge to node i is over, answered or not. */
static void ann_unpend(struct announce *a, struct ann_peer *ap)
{
	if (!ap->pending)
		return;
	TAILQ_REMOVE(&a->pend, ap, plink);
	ap->pending = 0;
	ap->auth->d = ANN_AUTH_IDLE;
}

/* Challenge the incarnation h of node i, unless ours is under way or
 * one just failed. */
void ann_challenge(struct announce *a, int i, const struct hello *h,
		   int64_t now)
{
	struct ann_peer *ap = &a->ap[i];
	uint8_t nonce[HELLO_NONCE_LEN];
	struct ann_msg out;

	if (ap->pending || now < ap->after || ann_reach(a, i, &h->addr))
		return;
	if (RAND_bytes(nonce, sizeof(nonce)) != 1) {
		log_warnx("announce: RAND_bytes failed; no challenge");
		return;
	}
	ann_auth_start(ap->auth, &a->mine.h, nonce, &out);
	ann_send_to(a, i, &h->addr, &out);
	ap->pending = 1;
	ap->rto = ANN_RTO_MIN;
	ap->next = now + ap->rto;
	ap->until = now + a->cfg->peer_timeout_ms;
	TAILQ_INSERT_TAIL(&a->pend, ap, plink);
}

/* Node i proved the secret with hello who: as L, accept its datagrams
 * (it marks us up next, then announces); as D, mark it up. */
static void ann_proven(struct announce *a, int i, const struct hello *who,
		       int as_d, int64_t now)
{
	struct ann_peer *ap = &a->ap[i];
	enum ann_verdict v;

	ap->trusted = 1;
	ap->tboot = who->addr.boot;
	ap->taddr = who->addr;
	log_debug("announce: %s authenticated (qpn 0x%06x, boot 0x%08x)",
		  who->name, who->addr.qpn, who->addr.boot);
	if (!as_d) {
		tp_peer_expect(a->tp, &a->peers[i], &who->addr);
		return;
	}
	ann_unpend(a, ap);
	v = ann_judge(&ap->k, who);
	if (v != ANN_SAME)
		ann_install(a, i, who, v, now);
}

/* A refused message of node i's exchange: counted, and a wrong proof
 * noted in the TCP handshake's words. */
static void ann_refused(struct announce *a, int i, int rc)
{
	struct peer *p = &a->peers[i];

	peer_count_drop(p, tp_totals(a->tp), DROP_ANN_REFUSED);
	/* an up node keeps its state: a stranger can send a wrong proof */
	if (rc == -EACCES && !a->ap[i].k.up)
		bootstrap_note(a->tp, p, EACCES, "peer",
			       "authentication failed: wrong proof (a "
			       "different secret?)");
	else
		log_debug("announce: %s: a message of no exchange of ours "
			  "(%s)",
			  p->conf->name, strerror(-rc));
}

/* A CHALLENGE, ANSWER, PROOF or CONFIRM of node i (its source checked). */
void ann_exchange(struct announce *a, int i, const struct ann_msg *m,
		  int64_t now)
{
	struct ann_peer *ap = &a->ap[i];
	uint8_t fresh[HELLO_NONCE_LEN];
	struct ann_msg out;
	struct hello who;
	int rc;

	if (!ap->auth && !(ap->auth = calloc(1, sizeof(*ap->auth))))
		return;
	if (RAND_bytes(fresh, sizeof(fresh)) != 1) {
		log_warnx("announce: RAND_bytes failed; no answer");
		return;
	}
	rc = ann_auth_recv(ap->auth, &a->key, &a->mine.h, fresh, m, &out, &who);
	if (rc < 0) {
		ann_refused(a, i, rc);
		return;
	}
	if (rc & ANN_AUTH_REPLY)
		ann_send_to(a, i, &m->h.addr, &out);
	if (rc & ANN_AUTH_OK)
		ann_proven(a, i, &who, m->kind == ANN_CONFIRM, now);
}

/*
 * Our challenge to node i went unanswered to the end: noted, unless the
 * node failed its authentication already (EACCES): a wrong proof says
 * more than silence, and two reasons in turn would both be logged each
 * time.
 */
static void ann_gave_up(struct announce *a, int i)
{
	struct peer *p = &a->peers[i];
	char why[96];
	int failed;

	if (a->ap[i].k.up)
		return; /* a stranger's incarnation, or one already proven */
	pthread_mutex_lock(&p->lock);
	failed = p->last_err == EACCES;
	pthread_mutex_unlock(&p->lock);
	if (failed) {
		tp_peer_failed(a->tp, p);
		return;
	}
	snprintf(why, sizeof(why),
		 "authentication failed: no answer to our challenge in %d ms "
		 "(a different secret?)",
		 a->cfg->peer_timeout_ms);
	bootstrap_note(a->tp, p, EACCES, "peer", why);
}

/* Our challenges: resend those unanswered, give up on those past
 * peer_timeout; when the next is due. */
int64_t ann_pending(struct announce *a, int64_t now, int64_t wake)
{
	struct ann_peer *ap, *tmp;
	struct ann_msg out;
	int i;

	for (ap = TAILQ_FIRST(&a->pend); ap; ap = tmp) {
		tmp = TAILQ_NEXT(ap, plink);
		i = (int)(ap - a->ap);
		if (now >= ap->until) {
			ann_unpend(a, ap);
			ap->after = now + a->cfg->peer_timeout_ms / 2;
			ann_gave_up(a, i);
			continue;
		}
		if (now >= ap->next && ann_auth_resend(ap->auth, &out)) {
			ann_send_to(a, i, &ap->saddr, &out);
			ap->rto = ap->rto * 2 > ANN_RTO_MAX ? ANN_RTO_MAX
							    : ap->rto * 2;
			ap->next = now + ap->rto;
		}
		wake = ap->next < wake ? ap->next : wake;
		wake = ap->until < wake ? ap->until : wake;
	}
	return wake;
}

/* At close: node i's exchange state and AH go. */
void ann_trust_free(struct announce *a, int i)
{
	struct ann_peer *ap = &a->ap[i];

	tp_ah_retire(a->tp, ap->sah);
	ap->sah = NULL;
	free(ap->auth);
	ap->auth = NULL;
}
