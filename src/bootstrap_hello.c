/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The bootstrap hello and its proof: what two daemons tell each other
 * (QPN, qkey, LID, GID, MTU, delivery, max_message) in one fixed
 * big-endian layout, and the HMAC-SHA256 proof that a session's side knows
 * the shared secret.  Pure functions, no sockets: the session code
 * (bootstrap_session.c) calls them, and so do the unit tests and the
 * fuzz target.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "bootstrap.h"
#include "util.h"

/* Hello field offsets: the fixed big-endian wire layout. */
enum {
	HO_MAGIC = 0,	   /* u32 HELLO_MAGIC */
	HO_VERSION = 4,	   /* u16 */
	HO_DELIVERY = 6,   /* u8 enum config_delivery */
	HO_LINK_LAYER = 7, /* u8 IBV_LINK_LAYER_* */
	HO_NAME = 8,	   /* CONFIG_NAME_MAX bytes, NUL-padded */
	HO_QPN = HO_NAME + CONFIG_NAME_MAX, /* 72: u32 */
	HO_QKEY = HO_QPN + 4,		    /* 76: u32 */
	HO_LID = HO_QKEY + 4,		    /* 80: u16 */
	HO_MTU = HO_LID + 2,		    /* 82: u8 enum ibv_mtu */
	HO_PAD = HO_MTU + 1,		    /* 83: u8, zero */
	HO_GID = HO_PAD + 1,		    /* 84: 16 bytes */
	HO_FLAGS = HO_GID + 16,	   /* 100: u32 HELLO_F_*, others zero */
	HO_MAX_MSG = HO_FLAGS + 4, /* 104: u32 its max_message, 0 = not said */
	HO_BOOT = HO_MAX_MSG + 4,  /* 108: u32 boot id (names streams) */
	HO_NONCE = HO_BOOT + 4,	   /* 112: 16 bytes, zero without AUTH, CERT */
	HO_END = HO_NONCE + HELLO_NONCE_LEN, /* 128 */
};

/* Direction labels of the proofs; equal length, so the input is unambiguous. */
static const char bs_label_d[] = "ibfs bootstrap v2 D->L";
static const char bs_label_l[] = "ibfs bootstrap v2 L->D";
#define BS_LABEL_LEN (sizeof(bs_label_d) - 1)
_Static_assert(sizeof(bs_label_d) == sizeof(bs_label_l), "label lengths");

_Static_assert(HO_END == HELLO_WIRE_LEN, "hello layout and length differ");

/* Our hello, from the port the transport opened. */
void hello_make(struct hello *h, const struct config *cfg,
		const struct tp_info *ti)
{
	const struct config_node *me = &cfg->nodes[cfg->local];

	memset(h, 0, sizeof(*h));
	h->version = HELLO_VERSION;
	snprintf(h->name, sizeof(h->name), "%s", me->name);
	h->delivery = me->delivery;
	h->addr.qpn = ti->qpn;
	h->addr.qkey = ti->qkey;
	h->addr.lid = ti->lid;
	h->addr.mtu = ti->mtu;
	h->addr.link_layer = ti->link_layer;
	h->addr.gid = ti->gid;
	h->addr.max_message = (uint32_t)cfg->max_message;
	h->addr.boot = ti->boot;
}

/* One fixed layout on every host, whatever struct hello looks like. */
size_t hello_encode(const struct hello *h, void *buf)
{
	uint8_t *b = buf;

	memset(b, 0, HELLO_WIRE_LEN);
	util_put32(b + HO_MAGIC, HELLO_MAGIC);
	util_put16(b + HO_VERSION, h->version);
	b[HO_DELIVERY] = h->delivery;
	b[HO_LINK_LAYER] = h->addr.link_layer;
	memcpy(b + HO_NAME, h->name, strnlen(h->name, CONFIG_NAME_MAX - 1));
	util_put32(b + HO_QPN, h->addr.qpn);
	util_put32(b + HO_QKEY, h->addr.qkey);
	util_put16(b + HO_LID, h->addr.lid);
	b[HO_MTU] = h->addr.mtu;
	memcpy(b + HO_GID, h->addr.gid.raw, 16);
	util_put32(b + HO_FLAGS, h->flags);
	util_put32(b + HO_MAX_MSG, h->addr.max_message);
	util_put32(b + HO_BOOT, h->addr.boot);
	if (h->flags & (HELLO_F_AUTH | HELLO_F_CERT))
		memcpy(b + HO_NONCE, h->nonce, HELLO_NONCE_LEN);
	return HELLO_WIRE_LEN;
}

/* Parse a hello; everything a peer could get wrong is refused here. */
int hello_decode(struct hello *h, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	struct hello t;

	if (!buf || len < HELLO_WIRE_LEN ||
	    util_get32(b + HO_MAGIC) != HELLO_MAGIC)
		return -EBADMSG;
	memset(&t, 0, sizeof(t));
	t.version = util_get16(b + HO_VERSION);
	if (t.version != HELLO_VERSION)
		return -EPROTO;
	if (!memchr(b + HO_NAME, '\0', CONFIG_NAME_MAX))
		return -EBADMSG;
	memcpy(t.name, b + HO_NAME, CONFIG_NAME_MAX);
	if (util_name_problem(t.name))
		return -EBADMSG;
	t.delivery = b[HO_DELIVERY];
	if (t.delivery != DELIVERY_DATAGRAM && t.delivery != DELIVERY_RELIABLE)
		return -EBADMSG;
	t.addr.link_layer = b[HO_LINK_LAYER];
	t.addr.qpn = util_get32(b + HO_QPN);
	if (!t.addr.qpn || t.addr.qpn > 0xffffff)
		return -EBADMSG;
	t.addr.qkey = util_get32(b + HO_QKEY);
	t.addr.lid = util_get16(b + HO_LID);
	t.addr.mtu = b[HO_MTU];
	if (t.addr.mtu < IBV_MTU_256 || t.addr.mtu > IBV_MTU_4096)
		return -EBADMSG;
	memcpy(t.addr.gid.raw, b + HO_GID, 16);
	t.flags = util_get32(b + HO_FLAGS);
	/* Older daemons sent zero here: then nothing is known. */
	t.addr.max_message = util_get32(b + HO_MAX_MSG);
	t.addr.boot = util_get32(b + HO_BOOT);
	if (t.flags & ~(HELLO_F_AUTH | HELLO_F_CERT))
		return -EBADMSG;
	if (t.flags & (HELLO_F_AUTH | HELLO_F_CERT))
		memcpy(t.nonce, b + HO_NONCE, HELLO_NONCE_LEN);
	*h = t;
	return 0;
}

/* The config word for a delivery (hello_decode checked it is one). */
const char *bootstrap_delivery_name(unsigned d)
{
	return d == DELIVERY_RELIABLE ? "reliable" : "datagram";
}

/*
 * The rule the TCP bootstrap and the multicast announces share: a node
 * runs the delivery the config gives it, and every node one qkey (ours
 * is the only one a datagram to us may carry).  Said in config words,
 * as a node's last_error and its log line.
 */
const char *hello_refusal(const struct hello *h, unsigned delivery,
			  uint32_t qkey, char *buf, size_t len)
{
	if (h->delivery != delivery) {
		snprintf(buf, len,
			 "it has delivery = %s, this node's config says %s "
			 "(man ibfs.conf)",
			 bootstrap_delivery_name(h->delivery),
			 bootstrap_delivery_name(delivery));
		return buf;
	}
	if (h->addr.qkey != qkey) {
		snprintf(buf, len,
			 "it has qkey = 0x%x, this node's config says 0x%x "
			 "(one qkey on every node: man ibfs.conf)",
			 h->addr.qkey, qkey);
		return buf;
	}
	return NULL;
}

/* One HMAC over label || nonce || both hellos, through libcrypto only. */
int bootstrap_proof(const void *secret, size_t secret_len, enum bs_role who,
		    const uint8_t *nonce, const uint8_t *hello_d,
		    const uint8_t *hello_l, uint8_t proof[BS_PROOF_LEN])
{
	uint8_t msg[BS_LABEL_LEN + HELLO_NONCE_LEN + 2 * HELLO_WIRE_LEN];
	unsigned int len = 0;
	uint8_t *m = msg;

	if (!secret || !secret_len || secret_len > INT_MAX || !nonce ||
	    !hello_d || !hello_l || !proof)
		return -EINVAL;
	memcpy(m, who == BS_ROLE_DIALER ? bs_label_d : bs_label_l,
	       BS_LABEL_LEN);
	m += BS_LABEL_LEN;
	memcpy(m, nonce, HELLO_NONCE_LEN);
	m += HELLO_NONCE_LEN;
	memcpy(m, hello_d, HELLO_WIRE_LEN);
	m += HELLO_WIRE_LEN;
	memcpy(m, hello_l, HELLO_WIRE_LEN);
	if (!HMAC(EVP_sha256(), secret, (int)secret_len, msg, sizeof(msg),
		  proof, &len) ||
	    len != BS_PROOF_LEN)
		return -EIO;
	return 0;
}

/* Recompute and compare in constant time, so timing leaks nothing. */
int bootstrap_proof_check(const void *secret, size_t secret_len,
			  enum bs_role who, const uint8_t *nonce,
			  const uint8_t *hello_d, const uint8_t *hello_l,
			  const uint8_t proof[BS_PROOF_LEN])
{
	uint8_t want[BS_PROOF_LEN];
	int rc;

	rc = bootstrap_proof(secret, secret_len, who, nonce, hello_d, hello_l,
			     want);
	if (!rc && CRYPTO_memcmp(want, proof, BS_PROOF_LEN))
		rc = -EACCES;
	OPENSSL_cleanse(want, sizeof(want));
	return rc;
}

size_t bs_cert_encode(uint8_t *buf, const uint8_t *der, size_t derlen,
		      const uint8_t *sig, size_t siglen)
{
	util_put16(buf, (uint16_t)derlen);
	buf[2] = (uint8_t)siglen;
	buf[3] = 0;
	memcpy(buf + BS_CERT_HEAD, der, derlen);
	memcpy(buf + BS_CERT_HEAD + derlen, sig, siglen);
	return BS_CERT_HEAD + derlen + siglen;
}

int bs_cert_head(const uint8_t head[BS_CERT_HEAD], size_t *derlen,
		 size_t *siglen)
{
	*derlen = util_get16(head);
	*siglen = head[2];
	if (!*derlen || *derlen > CERT_DER_MAX || !*siglen ||
	    *siglen > CERT_SIG_MAX || head[3])
		return -EBADMSG;
	return 0;
}

int hello_cert_payload(const struct hello *signer, const struct hello *verifier,
		       uint8_t out[CERT_PAYLOAD_MAX])
{
	struct cert_proof p = {
		.signer = signer->name,
		.verifier = verifier->name,
		.signer_nonce = signer->nonce,
		.verifier_nonce = verifier->nonce,
		.nonce_len = HELLO_NONCE_LEN,
		.signer_boot = signer->addr.boot,
		.verifier_boot = verifier->addr.boot,
		.qpn = signer->addr.qpn,
		.lid = signer->addr.lid,
	};

	memcpy(p.gid, signer->addr.gid.raw, sizeof(p.gid));
	return cert_payload(&p, out);
}
