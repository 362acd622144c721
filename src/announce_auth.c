/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bootstrap = multicast with a secret or a ca: no announce is trusted
 * until a challenge and response has gone both ways (announce.h's four
 * kinds), over UD unicast, with the TCP handshake's proof (bootstrap_proof:
 * HMAC-SHA256 over its direction's label, the verifier's nonce and both
 * hellos as sent) with a secret, and its certificate step with a ca (the
 * prover's certificate and its signature over hello_cert_payload: both
 * names, both nonces, both boot ids and the prover's QPN, GID and LID,
 * cert.c's payload, the same bytes a TCP session signs).  The two are
 * checked in that order, so that without the secret nobody makes us
 * verify a certificate.  So, as over TCP: nobody can change a QPN, qkey, GID
 * or boot id in flight (the hellos are MACed as sent); a recorded
 * exchange does not replay (each proof covers the other side's fresh
 * nonce, and each answer must echo the nonce of the exchange it answers);
 * a proof reflected back, or borrowed from the exchange the other way
 * round, fails (the labels differ by direction, and a signature names
 * its signer and verifier in that order); and L proves only after D
 * did, so a stranger gets no proof to study.
 *
 * Datagrams get lost: D sends its last message again until it is
 * answered (ann_auth_resend), and L answers a message it has seen again
 * with the same answer, so that retries never fork an exchange.  Pure:
 * the announce thread keeps one struct ann_auth per node met, and the
 * unit tests run both ends against each other.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <openssl/crypto.h>

#include "announce.h"
#include "cert.h"

/* The nonce inside a hello as encoded: its last HELLO_NONCE_LEN bytes. */
static const uint8_t *ann_nonce(const uint8_t *hello)
{
	return hello + HELLO_WIRE_LEN - HELLO_NONCE_LEN;
}

/* Our hello for this exchange: flagged as k says, with its fresh
 * nonce. */
static void ann_hello(uint8_t *buf, const struct ann_key *k,
		      const struct hello *me,
		      const uint8_t nonce[HELLO_NONCE_LEN])
{
	struct hello h = *me;

	h.flags &= ~(HELLO_F_AUTH | HELLO_F_CERT);
	h.flags |= (k->len ? HELLO_F_AUTH : 0) | (k->cert ? HELLO_F_CERT : 0);
	memcpy(h.nonce, nonce, HELLO_NONCE_LEN);
	hello_encode(&h, buf);
}

/* The reason of a refusal, for whoever asked. */
static void ann_why(char *why, size_t whylen, const char *text)
{
	if (why && whylen)
		snprintf(why, whylen, "%s", text);
}

/* What signer (its hello as sent) signs for verifier: the TCP
 * handshake's payload of the two hellos. */
static int ann_payload(const uint8_t *signer, const uint8_t *verifier,
		       uint8_t out[CERT_PAYLOAD_MAX])
{
	struct hello s, v;

	if (hello_decode(&s, signer, HELLO_WIRE_LEN) ||
	    hello_decode(&v, verifier, HELLO_WIRE_LEN))
		return -EINVAL;
	return hello_cert_payload(&s, &v, out);
}

/* With a ca: our certificate and our signature for verifier on our
 * PROOF or CONFIRM out (its hello ours as sent). */
static int ann_sign(const struct ann_key *k, const uint8_t *verifier,
		    struct ann_msg *out)
{
	uint8_t payload[CERT_PAYLOAD_MAX];
	size_t siglen;
	int n, rc;

	if (!k->cert)
		return 0;
	n = ann_payload(out->hello, verifier, payload);
	if (n < 0)
		return n;
	rc = cert_sign(k->cert, payload, (size_t)n, out->sig, &siglen);
	if (rc)
		return rc;
	out->der = k->der;
	out->derlen = (uint16_t)k->derlen;
	out->siglen = (uint8_t)siglen;
	return 0;
}

/*
 * A PROOF or CONFIRM in: the HMAC with a secret (who: its label), then
 * the certificate with a ca, for the node its hello names, over what it
 * signed for us (verifier: our hello as sent).  0, or -EACCES with why.
 */
static int ann_check(const struct ann_key *k, enum bs_role who,
		     const uint8_t *nonce, const uint8_t *hd, const uint8_t *hl,
		     const uint8_t *verifier, const struct ann_msg *in,
		     char *why, size_t whylen)
{
	uint8_t payload[CERT_PAYLOAD_MAX];
	int n, rc;

	if (k->len) {
		rc = bootstrap_proof_check(k->secret, k->len, who, nonce, hd,
					   hl, in->proof);
		if (rc == -EACCES)
			ann_why(why, whylen,
				"wrong proof (a different secret?)");
		if (rc)
			return rc;
	}
	if (!k->cert)
		return 0;
	if (!in->der) {
		ann_why(why, whylen, "it sent no certificate, we have a ca");
		return -EACCES;
	}
	n = ann_payload(in->hello, verifier, payload);
	if (n < 0) {
		ann_why(why, whylen, "certificate step malformed");
		return -EACCES;
	}
	return cert_verify(k->cert, in->der, in->derlen, in->h.name, payload,
			   (size_t)n, in->sig, in->siglen, 0, NULL, why,
			   whylen);
}

/* A message of kind with our hello as sent and what it answers. */
static void ann_put(struct ann_msg *out, uint8_t kind, const uint8_t *hello,
		    const uint8_t *echo, const uint8_t *proof)
{
	memset(out, 0, sizeof(*out));
	out->kind = kind;
	memcpy(out->hello, hello, HELLO_WIRE_LEN);
	hello_decode(&out->h, hello, HELLO_WIRE_LEN);
	if (echo)
		memcpy(out->echo, echo, HELLO_NONCE_LEN);
	if (proof)
		memcpy(out->proof, proof, BS_PROOF_LEN);
}

/* D: challenge, and keep it to send again. */
void ann_auth_start(struct ann_auth *a, const struct ann_key *k,
		    const struct hello *me,
		    const uint8_t nonce[HELLO_NONCE_LEN], struct ann_msg *out)
{
	ann_hello(a->d_mine, k, me, nonce);
	ann_put(&a->d_last, ANN_CHALLENGE, a->d_mine, NULL, NULL);
	a->d = ANN_AUTH_CHALLENGED;
	*out = a->d_last;
}

/* L: a CHALLENGE.  One seen before gets the same ANSWER; a new one (a
 * new nonce: D started over) a new exchange. */
static int ann_on_challenge(struct ann_auth *a, const struct ann_key *k,
			    const struct hello *me, const uint8_t *fresh,
			    const struct ann_msg *in, struct ann_msg *out)
{
	if (a->l == ANN_AUTH_IDLE ||
	    memcmp(a->l_theirs, in->hello, HELLO_WIRE_LEN)) {
		memcpy(a->l_theirs, in->hello, HELLO_WIRE_LEN);
		ann_hello(a->l_mine, k, me, fresh);
		ann_put(&a->l_last, ANN_ANSWER, a->l_mine, in->h.nonce, NULL);
		a->l = ANN_AUTH_ANSWERED;
	}
	*out = a->l_last;
	return ANN_AUTH_REPLY;
}

/* D: an ANSWER to our CHALLENGE (it echoes nD): prove, D->L. */
static int ann_on_answer(struct ann_auth *a, const struct ann_key *k,
			 const struct ann_msg *in, struct ann_msg *out)
{
	uint8_t proof[BS_PROOF_LEN];
	int rc;

	if ((a->d != ANN_AUTH_CHALLENGED && a->d != ANN_AUTH_PROVED) ||
	    CRYPTO_memcmp(in->echo, ann_nonce(a->d_mine), HELLO_NONCE_LEN))
		return -EPROTO;
	if (a->d == ANN_AUTH_PROVED &&
	    !memcmp(a->d_theirs, in->hello, HELLO_WIRE_LEN)) {
		*out = a->d_last; /* our PROOF was lost */
		return ANN_AUTH_REPLY;
	}
	memcpy(a->d_theirs, in->hello, HELLO_WIRE_LEN);
	memset(proof, 0, sizeof(proof));
	rc = k->len ? bootstrap_proof(k->secret, k->len, BS_ROLE_DIALER,
				      in->h.nonce, a->d_mine, a->d_theirs,
				      proof)
		    : 0;
	if (rc)
		return rc;
	ann_put(&a->d_last, ANN_PROOF, a->d_mine, in->h.nonce, proof);
	rc = ann_sign(k, a->d_theirs, &a->d_last);
	if (rc)
		return rc;
	a->d = ANN_AUTH_PROVED;
	*out = a->d_last;
	return ANN_AUTH_REPLY;
}

/* L: D's PROOF over our nonce and both hellos; then ours, L->D. */
static int ann_on_proof(struct ann_auth *a, const struct ann_key *k,
			const struct ann_msg *in, struct ann_msg *out,
			struct hello *who, char *why, size_t whylen)
{
	uint8_t proof[BS_PROOF_LEN];
	int rc;

	if (a->l == ANN_AUTH_IDLE ||
	    memcmp(a->l_theirs, in->hello, HELLO_WIRE_LEN) ||
	    CRYPTO_memcmp(in->echo, ann_nonce(a->l_mine), HELLO_NONCE_LEN))
		return -EPROTO;
	if (a->l == ANN_AUTH_CONFIRMED) {
		/* our CONFIRM was lost: the hello proven, as proven, and
		 * the same CONFIRM (a signature is checked once) */
		*out = a->l_last;
		*who = in->h;
		return ANN_AUTH_REPLY | ANN_AUTH_OK;
	}
	rc = ann_check(k, BS_ROLE_DIALER, ann_nonce(a->l_mine), a->l_theirs,
		       a->l_mine, a->l_mine, in, why, whylen);
	if (rc)
		return rc; /* the exchange stands: a forged proof must not end
			      it */
	memset(proof, 0, sizeof(proof));
	rc = k->len ? bootstrap_proof(k->secret, k->len, BS_ROLE_LISTENER,
				      ann_nonce(a->l_theirs), a->l_theirs,
				      a->l_mine, proof)
		    : 0;
	if (rc)
		return rc;
	ann_put(&a->l_last, ANN_CONFIRM, a->l_mine, ann_nonce(a->l_theirs),
		proof);
	rc = ann_sign(k, a->l_theirs, &a->l_last);
	if (rc)
		return rc;
	a->l = ANN_AUTH_CONFIRMED;
	*out = a->l_last;
	*who = in->h;
	return ANN_AUTH_REPLY | ANN_AUTH_OK;
}

/* D: L's CONFIRM over our nonce and both hellos ends the exchange. */
static int ann_on_confirm(struct ann_auth *a, const struct ann_key *k,
			  const struct ann_msg *in, struct hello *who,
			  char *why, size_t whylen)
{
	int rc;

	if (a->d != ANN_AUTH_PROVED ||
	    memcmp(a->d_theirs, in->hello, HELLO_WIRE_LEN) ||
	    CRYPTO_memcmp(in->echo, ann_nonce(a->d_mine), HELLO_NONCE_LEN))
		return -EPROTO;
	rc = ann_check(k, BS_ROLE_LISTENER, ann_nonce(a->d_mine), a->d_mine,
		       a->d_theirs, a->d_mine, in, why, whylen);
	if (rc)
		return rc;
	a->d = ANN_AUTH_IDLE;
	*who = in->h;
	return ANN_AUTH_OK;
}

/* One message of an exchange, by its kind. */
int ann_auth_recv(struct ann_auth *a, const struct ann_key *k,
		  const struct hello *me, const uint8_t fresh[HELLO_NONCE_LEN],
		  const struct ann_msg *in, struct ann_msg *out,
		  struct hello *who, char *why, size_t whylen)
{
	if (!(k->secret && k->len) && !k->cert)
		return -EPROTO;
	switch (in->kind) {
	case ANN_CHALLENGE:
		return ann_on_challenge(a, k, me, fresh, in, out);
	case ANN_ANSWER:
		return ann_on_answer(a, k, in, out);
	case ANN_PROOF:
		return ann_on_proof(a, k, in, out, who, why, whylen);
	case ANN_CONFIRM:
		return ann_on_confirm(a, k, in, who, why, whylen);
	default:
		return -EPROTO;
	}
}

/* D's CHALLENGE or PROOF, while it waits for its answer. */
int ann_auth_resend(const struct ann_auth *a, struct ann_msg *out)
{
	if (a->d != ANN_AUTH_CHALLENGED && a->d != ANN_AUTH_PROVED)
		return 0;
	*out = a->d_last;
	return 1;
}
