/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bootstrap = multicast with a secret or a ca, on the announce thread:
 * no announce is trusted until the challenge and response of
 * announce_auth.c has gone both ways with its node (with a ca, each side's
 * certificate naming the node its hello names, and signing both hellos'
 * nonces and boot ids and its own address).  Hearing an
 * incarnation (boot id and address) not proven yet, this node challenges
 * it as D, over UD unicast through an AH of its own (the node is not
 * installed, so the source filter still keeps it out), sends its message
 * again while unanswered (ANN_RTO_MIN doubling to ANN_RTO_MAX) and gives
 * up at peer_timeout ("authentication failed: ...").  Challenged by a
 * node, it answers as L.  A proof or certificate refused is the node's
 * last_error in config words ("authentication failed: certificate names
 * gamma, not beta"), logged once per cause (bootstrap_note).
 *
 * Each address that speaks for a node (QPN and GID, as the transport
 * checked them) has an exchange of its own (struct ann_xchg), both
 * directions and the AH that reaches it, ANN_XCHG_MAX a node: a stranger
 * who challenges or announces under a node's name neither resets the
 * node's exchange nor holds off our challenge to the node, and nothing of
 * the node's exchange is sent to the stranger's address.  A slot whose
 * address is surely the node's (ann_xchg_sure) is never emptied for one
 * that is not: a stranger cannot keep the node out by crowding it.
 *
 * The order keeps the TCP handshake's rule that whoever sees the other up
 * first is known to it already: L, once D's proof checks out, accepts
 * D's datagrams (tp_peer_expect) but marks it up only on D's MEET; D
 * marks L up on L's confirmation, and then sends L its MEET by unicast
 * (ann_install), as D sends READY over TCP.  D is whoever wants the
 * other first: the node a write wants is challenged by the writer, or,
 * asked for on the group, challenges the asker.  Once proven, an
 * incarnation's MEETs and announces are taken unauthenticated like its
 * data: to send one, one must send from its QP and GID.  After a SIGHUP
 * read new certificate files, every node up here is challenged again
 * (ann_reprove); one that fails, from the very address it is up at, is
 * down.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/rand.h>

#include "announce_int.h"
#include "log.h"
#include "util.h"

/* Whether an incarnation must prove itself before it is trusted. */
int ann_proves(const struct announce *a)
{
	return a->key.len || a->key.cert;
}

/*
 * With a ca: our certificate in DER, which our PROOF and CONFIRM carry,
 * read at open and again once a SIGHUP swapped the files (a new
 * cert_generation).  It goes in one datagram (announce.h): -EMSGSIZE,
 * said once per generation, when the port's MTU is too small for it (at
 * open the daemon stops; after a SIGHUP our proofs go unsent, and the
 * nodes we meet say why).
 */
int ann_cert_fresh(struct announce *a)
{
	struct tp_info ti;
	uint64_t gen;
	int n;

	if (!a->key.cert)
		return 0;
	tp_info_get(a->tp, &ti); /* the MTU is the device's of now */
	gen = cert_generation(a->key.cert);
	if (gen == a->der_gen)
		return 0;
	a->der_gen = gen;
	n = cert_der(a->key.cert, a->der, sizeof(a->der));
	if (n < 0)
		return n;
	a->key.der = a->der;
	a->key.derlen = (size_t)n;
	if (ANN_CERT_DGRAM((size_t)n) <= ti.mtu_bytes)
		return 0;
	log_warnx("announce: the certificate step takes %zu bytes in one "
		  "datagram, more than the port's MTU of %zu: with bootstrap "
		  "= multicast and ca, use a larger MTU or an Ed25519 "
		  "certificate, or bootstrap = tcp",
		  (size_t)ANN_CERT_DGRAM((size_t)n), ti.mtu_bytes);
	return -EMSGSIZE;
}

/*
 * Whether h is the incarnation node i proved, under the certificate
 * files in use: after a SIGHUP read new ones (a new CA, a new CRL), each
 * node proves itself again at its next announce, and one that no longer
 * can falls silent here.
 */
int ann_trusted(const struct announce *a, int i, const struct hello *h)
{
	const struct ann_peer *ap = &a->ap[i];

	return ap->trusted && ap->tgen == a->der_gen &&
	       ap->tboot == h->addr.boot &&
	       peer_addr_same(&ap->taddr, &h->addr);
}

/* Node i's exchange with addr, or NULL. */
static struct ann_xchg *ann_xchg_find(struct announce *a, int i,
				      const struct peer_addr *addr)
{
	struct ann_xchg *x = a->ap[i].x;
	int j;

	for (j = 0; x && j < ANN_XCHG_MAX; j++)
		if (x[j].used && peer_addr_same(&x[j].addr, addr))
			return &x[j];
	return NULL;
}

/* Our challenge in x is over, answered or not. */
static void ann_unpend(struct announce *a, struct ann_xchg *x)
{
	if (!x->pending)
		return;
	TAILQ_REMOVE(&a->pend, x, plink);
	x->pending = 0;
	x->auth.d = ANN_AUTH_IDLE;
}

/* Empty x: its challenge, its state and its AH go. */
static void ann_xchg_drop(struct announce *a, struct ann_xchg *x)
{
	ann_unpend(a, x);
	tp_ah_retire(a->tp, x->ah);
	memset(x, 0, sizeof(*x));
}

/*
 * Whether addr is surely node i's: a RoCE GID that is its configured
 * address, or the port (GID and LID) of the incarnation it last proved
 * itself from, where it comes back after a restart.  A stranger's
 * address is neither (unless it shares the node's host or spoofs its
 * address), so it cannot push such an exchange out.
 */
static int ann_xchg_sure(const struct announce *a, int i,
			 const struct peer_addr *addr)
{
	const struct ann_peer *ap = &a->ap[i];

	if (ann_addr_fits(&a->cfg->nodes[i], addr) == ANN_ADDR_YES)
		return 1;
	return ap->trusted && ap->taddr.lid == addr->lid &&
	       !memcmp(&ap->taddr.gid, &addr->gid, sizeof(addr->gid));
}

/*
 * Node i's exchange with addr: the one under way, a free slot, or the
 * slot heard from least recently, emptied, among those not sure (then,
 * for a sure addr, among all); NULL when every slot is sure and addr is
 * not, or without memory.
 */
static struct ann_xchg *ann_xchg_get(struct announce *a, int i,
				     const struct peer_addr *addr, int64_t now)
{
	struct ann_peer *ap = &a->ap[i];
	struct ann_xchg *x = ann_xchg_find(a, i, addr), *old = NULL;
	int sure, pass, j;

	if (x)
		return x;
	if (!ap->x && !(ap->x = calloc(ANN_XCHG_MAX, sizeof(*ap->x))))
		return NULL;
	sure = ann_xchg_sure(a, i, addr);
	for (j = 0; j < ANN_XCHG_MAX && ap->x[j].used; j++)
		;
	for (pass = 0; j == ANN_XCHG_MAX && !old && pass <= sure; pass++)
		for (x = ap->x; x < ap->x + ANN_XCHG_MAX; x++)
			if ((pass || !x->sure) &&
			    (!old || x->heard < old->heard))
				old = x;
	if (j == ANN_XCHG_MAX && !old)
		return NULL;
	x = j < ANN_XCHG_MAX ? &ap->x[j] : old;
	if (x->used)
		ann_xchg_drop(a, x);
	x->used = 1;
	x->sure = sure;
	x->node = i;
	x->addr = *addr;
	x->heard = now;
	return x;
}

/* An AH to x's address (made here: route resolution); 0, or -errno
 * with the reason noted. */
static int ann_reach(struct announce *a, struct ann_xchg *x)
{
	struct peer *p = &a->peers[x->node];
	char why[96];
	int rc;

	if (x->ah)
		return 0;
	rc = route_resolve(a->rt, p->conf, &x->addr, &x->ah);
	if (rc) {
		x->ah = NULL;
		snprintf(why, sizeof(why), "route resolution failed: %s",
			 strerror(-rc));
		bootstrap_note(a->tp, p, EHOSTUNREACH, "announce:", why);
	}
	return rc;
}

/* The AH an exchange made for node i at addr, for tp_peer_up to keep;
 * NULL when there is none for addr. */
struct ibv_ah *ann_take_ah(struct announce *a, int i,
			   const struct peer_addr *addr)
{
	struct ann_xchg *x = ann_xchg_find(a, i, addr);
	struct ibv_ah *ah = x ? x->ah : NULL;

	if (x)
		x->ah = NULL;
	return ah;
}

/* Whether x's address is the one its node is installed at here. */
static int ann_installed_at(const struct announce *a, const struct ann_xchg *x)
{
	const struct ann_peer *ap = &a->ap[x->node];

	return ap->k.up && peer_addr_same(&ap->k.addr, &x->addr);
}

/* One message of exchange x, to its address: as installed when the node
 * is up there, else through the exchange's AH. */
static void ann_send_to(struct announce *a, struct ann_xchg *x,
			const struct ann_msg *m)
{
	int rc;

	if (ann_installed_at(a, x)) {
		rc = tp_ann_send(a->tp, &a->peers[x->node], m);
	} else {
		rc = ann_reach(a, x);
		if (!rc)
			rc = tp_ann_send_to(a->tp, x->ah, &x->addr, m);
	}
	if (rc == -EMSGSIZE)
		bootstrap_note(a->tp, &a->peers[x->node], EACCES, "peer",
			       "authentication failed: our certificate step "
			       "does not fit the MTU its hello announces");
	else if (rc)
		log_debug("announce: to %s: %s", a->peers[x->node].conf->name,
			  strerror(-rc));
}

/* Challenge the incarnation h of node i, unless ours to that address is
 * under way or one just failed; others' addresses have their own. */
void ann_challenge(struct announce *a, int i, const struct hello *h,
		   int64_t now)
{
	struct ann_xchg *x = ann_xchg_get(a, i, &h->addr, now);
	uint8_t nonce[HELLO_NONCE_LEN];
	struct ann_msg out;

	/* a node up at h (ann_reprove) is reached as installed: no
	 * resolution */
	if (!x || x->pending || now < x->after ||
	    (!ann_installed_at(a, x) && ann_reach(a, x)))
		return;
	if (RAND_bytes(nonce, sizeof(nonce)) != 1) {
		log_warnx("announce: RAND_bytes failed; no challenge");
		return;
	}
	x->heard = now;
	ann_auth_start(&x->auth, &a->key, &a->mine.h, nonce, &out);
	ann_send_to(a, x, &out);
	x->pending = 1;
	x->rto = ANN_RTO_MIN;
	x->next = now + x->rto;
	x->until = now + a->cfg->peer_timeout_ms;
	TAILQ_INSERT_TAIL(&a->pend, x, plink);
}

/* Node i proved the secret with hello who: as L, accept its datagrams
 * (it marks us up next, then announces): ANN_SAME; as D, what the caller
 * is to do with it (ann_install, unless ANN_SAME). */
static enum ann_verdict ann_proven(struct announce *a, struct ann_xchg *x,
				   const struct hello *who, int as_d)
{
	struct ann_peer *ap = &a->ap[x->node];
	int i = x->node;

	ap->trusted = 1;
	ap->tgen = a->der_gen;
	ap->tboot = who->addr.boot;
	ap->taddr = who->addr;
	log_debug("announce: %s authenticated (qpn 0x%06x, boot 0x%08x)",
		  who->name, who->addr.qpn, who->addr.boot);
	if (!as_d) {
		tp_peer_expect(a->tp, &a->peers[i], &who->addr);
		return ANN_SAME;
	}
	ann_unpend(a, x);
	return ann_judge(&ap->k, who);
}

/*
 * A refused message of node i's exchange from addr: counted, and a wrong
 * proof or certificate (why) noted in the TCP handshake's words.  An up
 * node keeps its state, since a stranger can send a wrong proof, unless
 * it came from the very address the node is up at, which only the node
 * sends from (the transport checked its QP and GID): a certificate
 * revoked since it proved itself (ann_reprove).
 */
static void ann_refused(struct announce *a, int i, int rc, const char *why,
			const struct peer_addr *addr)
{
	struct ann_peer *ap = &a->ap[i];
	struct peer *p = &a->peers[i];
	char msg[PEER_ERROR_MAX];

	peer_count_drop(p, tp_totals(a->tp), DROP_ANN_REFUSED);
	if (rc == -EACCES && ap->k.up && addr &&
	    peer_addr_same(&ap->k.addr, addr)) {
		ap->k.up = 0;
		ap->trusted = 0;
		tp_peer_down(a->tp, p);
		log_info("peer %s down (authentication failed)", p->conf->name);
	}
	if (rc == -EACCES && !ap->k.up) {
		snprintf(msg, sizeof(msg), "authentication failed: %s", why);
		bootstrap_note(a->tp, p, EACCES, "peer", msg);
	} else if (rc == -ENOMEM || rc == -EIO) {
		bootstrap_note(a->tp, p, -rc, "announce:",
			       "certificate not checked: libcrypto failed");
	} else
		log_debug("announce: %s: a message of no exchange of ours "
			  "(%s)",
			  p->conf->name, strerror(-rc));
}

/*
 * A CHALLENGE, ANSWER, PROOF or CONFIRM of node i (its source checked),
 * in the exchange with the address it came from: only a CHALLENGE opens
 * one, so the rest of a stranger's exchange never touches the node's.
 * Once node i proved itself to us as D: the verdict on hello who, for
 * the caller to install (announce.c, ann_install); else ANN_SAME.
 */
enum ann_verdict ann_exchange(struct announce *a, int i,
			      const struct ann_msg *m, int64_t now,
			      struct hello *who)
{
	uint8_t fresh[HELLO_NONCE_LEN];
	char why[CERT_WHY_MAX];
	struct ann_xchg *x;
	struct ann_msg out;
	int rc;

	if (m->kind == ANN_CHALLENGE)
		x = ann_xchg_get(a, i, &m->h.addr, now);
	else
		x = ann_xchg_find(a, i, &m->h.addr);
	if (!x) {
		ann_refused(a, i, -EPROTO, "", NULL);
		return ANN_SAME;
	}
	if (RAND_bytes(fresh, sizeof(fresh)) != 1) {
		log_warnx("announce: RAND_bytes failed; no answer");
		return ANN_SAME;
	}
	x->heard = now;
	why[0] = 0;
	rc = ann_auth_recv(&x->auth, &a->key, &a->mine.h, fresh, m, &out, who,
			   why, sizeof(why));
	if (rc < 0) {
		ann_refused(a, i, rc, why, &x->addr);
		return ANN_SAME;
	}
	if (rc & ANN_AUTH_REPLY)
		ann_send_to(a, x, &out);
	if (rc & ANN_AUTH_OK)
		return ann_proven(a, x, who, m->kind == ANN_CONFIRM);
	return ANN_SAME;
}

/*
 * Our challenge to node i went unanswered to the end: noted, unless the
 * node failed its authentication already (EACCES): a wrong proof says
 * more than silence, and two reasons in turn would both be logged each
 * time.  Nor when it answered (answered: our PROOF went out): its
 * CONFIRM was refused, or lost, and silence is not what happened.  An
 * up node stays up: its probe tells whether it is there.
 */
static void ann_gave_up(struct announce *a, int i, int answered)
{
	struct peer *p = &a->peers[i];
	char why[96];
	int failed;

	if (a->ap[i].k.up)
		return; /* a stranger's incarnation, or one already proven */
	pthread_mutex_lock(&p->lock);
	failed = p->last_err == EACCES;
	pthread_mutex_unlock(&p->lock);
	if (failed || answered) {
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
	struct ann_xchg *x, *tmp;
	struct ann_msg out;
	int answered;

	for (x = TAILQ_FIRST(&a->pend); x; x = tmp) {
		tmp = TAILQ_NEXT(x, plink);
		if (now >= x->until) {
			answered = x->auth.d == ANN_AUTH_PROVED;
			ann_unpend(a, x);
			x->after = now + a->cfg->peer_timeout_ms / 2;
			ann_gave_up(a, x->node, answered);
			continue;
		}
		if (now >= x->next && ann_auth_resend(&x->auth, &out)) {
			ann_send_to(a, x, &out);
			x->rto = x->rto * 2 > ANN_RTO_MAX ? ANN_RTO_MAX
							  : x->rto * 2;
			x->next = now + x->rto;
		}
		wake = x->next < wake ? x->next : wake;
		wake = x->until < wake ? x->until : wake;
	}
	return wake;
}

/*
 * Our certificate files were read again (a SIGHUP: a new CA, a new CRL):
 * every node up here proves itself again, challenged at the address it
 * is up at; one refused goes down there (ann_refused).  Once per SIGHUP,
 * over the config (the up nodes are not listed apart).
 */
void ann_reprove(struct announce *a, int64_t now)
{
	struct hello h;
	int i;

	for (i = 0; i < a->cfg->nnodes; i++) {
		if (!a->ap[i].k.up || i == a->cfg->local)
			continue;
		memset(&h, 0, sizeof(h));
		snprintf(h.name, sizeof(h.name), "%s", a->cfg->nodes[i].name);
		h.addr = a->ap[i].k.addr;
		ann_challenge(a, i, &h, now);
	}
}

/* At close: node i's exchanges, their state and AHs go. */
void ann_trust_free(struct announce *a, int i)
{
	struct ann_peer *ap = &a->ap[i];
	int j;

	for (j = 0; ap->x && j < ANN_XCHG_MAX; j++)
		if (ap->x[j].used)
			ann_xchg_drop(a, &ap->x[j]);
	free(ap->x);
	ap->x = NULL;
}
