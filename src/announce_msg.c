/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The announce's pure parts (announce.h): the body of a WIRE_ANN
 * datagram around bootstrap_hello.c's hello, the check that it names the
 * QP it came from, and the judgements the announce thread makes of what
 * it hears and of silence.  No threads, no verbs: the receive path, the
 * announce thread, the unit tests and the fuzz target call them.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <netinet/in.h>

#include "announce.h"
#include "util.h"

/* Body field offsets: announce.h's layout. */
enum {
	AO_KIND = 0,
	AO_PAD = 1,
	AO_HELLO = 4,
	AO_ECHO = AO_HELLO + HELLO_WIRE_LEN,  /* 132 */
	AO_PROOF = AO_ECHO + HELLO_NONCE_LEN, /* 148 */
	AO_END = AO_PROOF + BS_PROOF_LEN,     /* 180 */
};
_Static_assert(AO_END == ANN_WIRE_LEN, "announce layout and length differ");

/* What each kind carries beside its hello (announce.h). */
static const struct {
	uint8_t auth, echo, proof;
} ann_kinds[ANN_KIND_MAX] = {
	[ANN_ANNOUNCE] = {0, 0, 0}, [ANN_CHALLENGE] = {1, 0, 0},
	[ANN_ANSWER] = {1, 1, 0},   [ANN_PROOF] = {1, 1, 1},
	[ANN_CONFIRM] = {1, 1, 1},  [ANN_QUERY] = {0, 0, 0},
	[ANN_MEET] = {0, 0, 0},
};
#define AO_TARGET_LEN 4 /* QUERY: the target's wire id, at AO_ECHO */

/* Whether n bytes at p are all zero. */
static int ann_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

/* Kind, padding, the hello as sent, echo and proof; then the
 * certificate step, in the TCP handshake's codec. */
size_t ann_msg_encode(const struct ann_msg *m, void *buf)
{
	uint8_t *b = buf;

	memset(b, 0, ANN_WIRE_LEN);
	b[AO_KIND] = m->kind;
	memcpy(b + AO_HELLO, m->hello, HELLO_WIRE_LEN);
	memcpy(b + AO_ECHO, m->echo, HELLO_NONCE_LEN);
	memcpy(b + AO_PROOF, m->proof, BS_PROOF_LEN);
	if (m->kind == ANN_QUERY)
		util_put32(b + AO_ECHO, m->target);
	if (!m->der)
		return ANN_WIRE_LEN;
	return AO_END +
	       bs_cert_encode(b + AO_END, m->der, m->derlen, m->sig, m->siglen);
}

/*
 * The certificate step after the fixed body (rest bytes at p): there
 * exactly when the kind carries one (PROOF, CONFIRM) and the hello says
 * HELLO_F_CERT, and filling the body to its end.
 */
static int ann_cert_decode(struct ann_msg *t, const uint8_t *p, size_t rest)
{
	size_t derlen, siglen;

	if (!ann_kinds[t->kind].proof || !(t->h.flags & HELLO_F_CERT))
		return rest ? -EBADMSG : 0;
	if (rest < BS_CERT_HEAD || bs_cert_head(p, &derlen, &siglen) ||
	    rest != BS_CERT_HEAD + derlen + siglen)
		return -EBADMSG;
	t->der = p + BS_CERT_HEAD;
	t->derlen = (uint16_t)derlen;
	t->siglen = (uint8_t)siglen;
	memcpy(t->sig, p + BS_CERT_HEAD + derlen, siglen);
	return 0;
}

/* Everything a stranger could get wrong is refused here. */
int ann_msg_decode(struct ann_msg *m, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	struct ann_msg t;
	int rc;

	if (!buf || len < ANN_WIRE_LEN || len > ANN_MSG_MAX)
		return -EBADMSG;
	memset(&t, 0, sizeof(t));
	t.kind = b[AO_KIND];
	if (t.kind < ANN_ANNOUNCE || t.kind >= ANN_KIND_MAX ||
	    !ann_zero(b + AO_PAD, AO_HELLO - AO_PAD))
		return -EBADMSG;
	/* what its kind leaves out is zero */
	if ((!ann_kinds[t.kind].proof && !ann_zero(b + AO_PROOF, BS_PROOF_LEN)))
		return -EBADMSG;
	if (t.kind == ANN_QUERY) {
		if (!ann_zero(b + AO_ECHO + AO_TARGET_LEN,
			      HELLO_NONCE_LEN - AO_TARGET_LEN))
			return -EBADMSG;
		t.target = util_get32(b + AO_ECHO);
	} else if (!ann_kinds[t.kind].echo &&
		   !ann_zero(b + AO_ECHO, HELLO_NONCE_LEN))
		return -EBADMSG;
	rc = hello_decode(&t.h, b + AO_HELLO, HELLO_WIRE_LEN);
	if (rc)
		return rc;
	if (!t.h.addr.boot)
		return -EBADMSG; /* every start draws one */
	if (ann_kinds[t.kind].auth &&
	    !(t.h.flags & (HELLO_F_AUTH | HELLO_F_CERT)))
		return -EBADMSG; /* a challenge without its nonce */
	if (ann_cert_decode(&t, b + AO_END, len - AO_END))
		return -EBADMSG;
	memcpy(t.hello, b + AO_HELLO, HELLO_WIRE_LEN);
	memcpy(t.echo, b + AO_ECHO, HELLO_NONCE_LEN);
	memcpy(t.proof, b + AO_PROOF, BS_PROOF_LEN);
	*m = t;
	return 0;
}

/* The header first: an announce is one fragment without a channel, and
 * its src is the wire id of the name it announces. */
int ann_datagram_decode(struct ann_msg *m, const void *dg, size_t len)
{
	struct wire_hdr h;
	int rc;

	if (wire_hdr_decode(&h, dg, len) || h.type != WIRE_ANN ||
	    h.total_len != len - WIRE_HDR_LEN)
		return -EBADMSG;
	rc = ann_msg_decode(m, (const uint8_t *)dg + WIRE_HDR_LEN,
			    len - WIRE_HDR_LEN);
	if (rc)
		return -EBADMSG;
	return h.src == wire_node_id(m->h.name) ? 0 : -EBADMSG;
}

/* The body, then the bare header with its length. */
size_t ann_datagram_build(void *buf, uint32_t src, const struct ann_msg *m)
{
	size_t n = ann_msg_encode(m, (uint8_t *)buf + WIRE_HDR_LEN);

	wire_bare_hdr(buf, WIRE_ANN, src, (uint32_t)n);
	return WIRE_HDR_LEN + n;
}

/* The source filter's own test (tp_recv_match), against the hello. */
int ann_msg_from(const struct ann_msg *m, uint32_t src_qp,
		 const union ibv_gid *sgid, uint16_t slid)
{
	if (m->h.addr.qpn != src_qp)
		return -EPERM;
	if (sgid)
		return memcmp(sgid, &m->h.addr.gid, sizeof(*sgid)) ? -EPERM : 0;
	return m->h.addr.lid == slid ? 0 : -EPERM;
}

/* Alive, new, or restarted (another boot, QPN, GID, LID, qkey or MTU). */
enum ann_verdict ann_judge(const struct ann_known *k, const struct hello *h)
{
	if (!k->up)
		return ANN_UP;
	if (k->boot != h->addr.boot || !peer_addr_same(&k->addr, &h->addr))
		return ANN_RESTART;
	return ANN_SAME;
}

/* interval/2 .. 3*interval/2, so that announces drift apart. */
int64_t ann_next(int64_t now, int interval_ms, uint32_t r)
{
	return now + interval_ms / 2 +
	       (int64_t)(r % ((uint32_t)interval_ms + 1));
}

/* announce.h's table. */
enum ann_do ann_decide(const struct ann_known *k, int wanted,
		       const struct ann_msg *m, uint32_t self_id)
{
	enum ann_verdict v = ann_judge(k, &m->h);

	switch (m->kind) {
	case ANN_ANNOUNCE:
		if (k->up ? v == ANN_RESTART : wanted)
			return ANN_DO_INSTALL;
		return ANN_DO_KNOW;
	case ANN_MEET:
		return v == ANN_SAME ? ANN_DO_KNOW : ANN_DO_TAKE;
	case ANN_QUERY:
		if (m->target && m->target != self_id)
			return ANN_DO_KNOW;
		if (v != ANN_SAME)
			return ANN_DO_INSTALL;
		return m->target ? ANN_DO_MEET : ANN_DO_KNOW;
	default:
		return ANN_DO_KNOW;
	}
}

/* Installing from what was heard costs one resolution and no datagram to
 * the group; a node up here whose probe failed, or never heard, is asked
 * for. */
enum ann_step ann_seek_step(const struct ann_known *k, int asked)
{
	if (!k->up && k->known)
		return ANN_STEP_INSTALL;
	return asked ? ANN_STEP_QUERY : ANN_STEP_ANY;
}

/* announce.h: more than one, and at least a quarter of the config */
int ann_query_all(int fresh, int nnodes)
{
	return fresh > 1 && fresh >= nnodes / 4;
}

/* 0, ~interval/3, ~interval: most losses are bursts shorter than a
 * second, and the third still comes soon after a slow start. */
int64_t ann_startup_next(int64_t now, int n, int interval_ms, uint32_t r)
{
	if (n >= ANN_STARTUP_MAX)
		return INT64_MAX;
	return ann_next(now, n == 1 ? interval_ms / 3 : interval_ms * 2 / 3, r);
}

/* The progress thread's gate (announce.h): the config alone. */
int ann_admit(const struct config *cfg, const struct ann_msg *m)
{
	int i = config_node_index(cfg, m->h.name);

	if (i < 0)
		return -ENOENT;
	if (cfg->strict_source &&
	    ann_addr_fits(&cfg->nodes[i], &m->h.addr) == ANN_ADDR_NO)
		return -EPERM;
	return i;
}

/*
 * An announce's GID against its node's configured numeric addr (RoCE,
 * where a GID is an IP address): ANN_ADDR_YES when it is that address,
 * ANN_ADDR_NO when it is another of the same family, ANN_ADDR_UNKNOWN
 * when nothing tells (an InfiniBand or link-local GID, an addr given as
 * a host name, an IPv6 GID for an IPv4 addr): certificates close that.
 */
int ann_addr_fits(const struct config_node *n, const struct peer_addr *addr)
{
	const struct sockaddr_in6 *sin6;
	const struct sockaddr_in *sin;
	const uint8_t *gid = addr->gid.raw;

	if (n->addr_sa.ss_family == AF_INET && util_is_v4mapped(gid)) {
		sin = (const struct sockaddr_in *)&n->addr_sa;
		return memcmp(gid + 12, &sin->sin_addr, 4) ? ANN_ADDR_NO
							   : ANN_ADDR_YES;
	}
	if (n->addr_sa.ss_family == AF_INET6 && !util_is_v4mapped(gid) &&
	    (gid[0] & 0xe0) == 0x20) { /* global unicast: 2000::/3 */
		sin6 = (const struct sockaddr_in6 *)&n->addr_sa;
		return memcmp(gid, &sin6->sin6_addr, 16) ? ANN_ADDR_NO
							 : ANN_ADDR_YES;
	}
	return ANN_ADDR_UNKNOWN;
}
