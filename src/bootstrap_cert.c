// SPDX-License-Identifier: BSD-2-Clause
/*
 * The certificate step of a bootstrap session (with `ca`): after the
 * hellos, each side sends its certificate and a signature over both
 * nonces, both boot ids and its own QPN, GID and LID (cert_payload), and
 * checks the other's with cert_verify for the node its hello names.  It
 * rides in the proof's message, after the HMAC when there is a secret,
 * so that the handshake keeps its steps and its order (see the top of
 * bootstrap_session.c).  Each session's handshake is checked: a session
 * stands for one incarnation of its peer (a restart is a new session),
 * so that is once per incarnation, never per datagram; and a SIGHUP's
 * new CA or CRL applies from the next handshake on, since cert_verify
 * uses the files in use.  The bootstrap thread's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bootstrap.h"
#include "bootstrap_session.h"
#include "cert.h"

/* What the proof's message holds before any length it announces. */
size_t bs_proof_want(const struct bootstrap *b)
{
	return (b->secret_len ? BS_PROOF_LEN : 0) +
	       (b->cert ? BS_CERT_HEAD : 0);
}

/* Our hello in this session, its nonce included, as the other side
 * decoded it. */
static void bs_cert_mine(const struct bootstrap *b, const struct bs_conn *c,
			 struct hello *h)
{
	*h = b->me;
	memcpy(h->nonce, c->nonce, HELLO_NONCE_LEN);
}

int bs_cert_make(struct bootstrap *b, const struct bs_conn *c, uint8_t *out,
		 size_t *len)
{
	uint8_t payload[CERT_PAYLOAD_MAX], der[CERT_DER_MAX], sig[CERT_SIG_MAX];
	struct hello me;
	size_t siglen;
	int n, derlen, rc;

	bs_cert_mine(b, c, &me);
	n = hello_cert_payload(&me, &c->h, payload);
	if (n < 0)
		return n;
	derlen = cert_der(b->cert, der, sizeof(der));
	if (derlen < 0)
		return derlen;
	rc = cert_sign(b->cert, payload, (size_t)n, sig, &siglen);
	if (rc)
		return rc;
	*len = bs_cert_encode(out, der, (size_t)derlen, sig, siglen);
	return 0;
}

int bs_cert_more(struct bootstrap *b, struct bs_conn *c)
{
	size_t head = bs_proof_want(b), derlen, siglen;

	if (!b->cert || c->rxwant != head)
		return 0;
	if (bs_cert_head(c->rx + head - BS_CERT_HEAD, &derlen, &siglen))
		return -EBADMSG;
	c->rxwant += derlen + siglen;
	return 1;
}

int bs_cert_check(struct bootstrap *b, struct bs_conn *c, char *why,
		  size_t whylen)
{
	size_t off = b->secret_len ? BS_PROOF_LEN : 0, derlen, siglen;
	uint8_t payload[CERT_PAYLOAD_MAX];
	const uint8_t *der;
	struct hello me;
	int n;

	if (bs_cert_head(c->rx + off, &derlen, &siglen) ||
	    c->rxlen != off + BS_CERT_HEAD + derlen + siglen) {
		snprintf(why, whylen, "certificate step malformed");
		return -EACCES;
	}
	der = c->rx + off + BS_CERT_HEAD;
	bs_cert_mine(b, c, &me);
	n = hello_cert_payload(&c->h, &me, payload);
	if (n < 0) {
		snprintf(why, whylen, "certificate step malformed");
		return -EACCES;
	}
	return cert_verify(b->cert, der, derlen, c->h.name, payload, (size_t)n,
			   der + derlen, siglen, 0, NULL, why, whylen);
}
