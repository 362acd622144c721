/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bootstrap: nodes tell each other their QPN, qkey, LID, GID and MTU over
 * TCP.  Each daemon listens on its own endpoint and meets its peers on
 * demand: it dials one when a send first wants it (tp_set_need), retrying
 * with backoff and jitter while the send waits, so nodes start in any
 * order; a peer that dials us is met by its session.  A session is its
 * peer's liveness: while one stands the peer is up; when the last drops
 * the peer is down, or idle after idle_timeout without traffic (a BYE),
 * and when a new hello arrives (a restart, a new QPN) its address is
 * resolved again.
 *
 * Threads: bootstrap_open and bootstrap_close on main; everything else
 * on the bootstrap thread, but for the need hook, which a sender's thread
 * calls (it only queues).
 *
 * With a shared secret ([global] secret / secret_file) every session is
 * authenticated by challenge and response (HMAC-SHA256, OpenSSL) before
 * either side accepts the other's QPN; see the top of bootstrap.c.  With
 * a ca ([global] ca, cert, key) each side also proves which node it is
 * with its certificate and a signature (bootstrap_cert.c).
 */
#ifndef IBFS_BOOTSTRAP_H
#define IBFS_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "cert.h"
#include "config.h"
#include "peer.h"
#include "route.h"
#include "transport.h"

/* 2: flags and nonce (authentication); 3: HELLO_F_CERT, a certificate
 * step after the proof */
#define HELLO_VERSION 3
#define HELLO_MAGIC   0x49424848u /* "IBHH" */

#define HELLO_F_AUTH 0x1u /* the sender has a secret and will prove it */
#define HELLO_F_CERT                                                           \
	0x2u /* the sender has a ca, and will send its                         \
		certificate and sign the handshake */
#define HELLO_NONCE_LEN 16
#define BS_PROOF_LEN	32 /* HMAC-SHA256 */

/* Who proves: the dialer (D -> L) or the listener (L -> D). */
enum bs_role {
	BS_ROLE_DIALER,
	BS_ROLE_LISTENER,
};

/* The versioned binary hello, fixed layout, big-endian on the wire. */
struct hello {
	uint16_t version;
	char name[CONFIG_NAME_MAX];
	uint8_t delivery; /* enum config_delivery */
	struct peer_addr addr;
	uint32_t flags; /* HELLO_F_* */
	/* With HELLO_F_AUTH or HELLO_F_CERT: fresh per session, the other
	 * side's challenge */
	uint8_t nonce[HELLO_NONCE_LEN];
};

#define HELLO_WIRE_LEN 128 /* encoded size; see bootstrap.c */

/* Our own hello, no nonce: what tp says we are (boot id included), and the
 * local node's name, delivery and max_message. */
void hello_make(struct hello *h, const struct config *cfg,
		const struct tp_info *ti);

/* Encode h into buf (HELLO_WIRE_LEN bytes); returns bytes written. */
size_t hello_encode(const struct hello *h, void *buf);
/* Decode and check magic, version and name; -EBADMSG / -EPROTO. */
int hello_decode(struct hello *h, const void *buf, size_t len);

/*
 * The proof that `who` knows the secret: HMAC-SHA256(secret, label(who) ||
 * nonce || hello_d || hello_l): nonce is the verifier's challenge (from
 * its hello), the hellos are as sent, the dialer's first.  0, -EINVAL
 * (no secret) or -EIO (libcrypto failed).
 */
int bootstrap_proof(const void *secret, size_t secret_len, enum bs_role who,
		    const uint8_t *nonce, const uint8_t *hello_d,
		    const uint8_t *hello_l, uint8_t proof[BS_PROOF_LEN]);

/* Check a received proof in constant time: 0, or -EACCES when wrong. */
int bootstrap_proof_check(const void *secret, size_t secret_len,
			  enum bs_role who, const uint8_t *nonce,
			  const uint8_t *hello_d, const uint8_t *hello_l,
			  const uint8_t proof[BS_PROOF_LEN]);

/*
 * The certificate step, after the proof (with a secret) or in its place:
 * a head (u16 DER length, u8 signature length, u8 zero), the sender's
 * certificate in DER and its signature over cert_payload of the two
 * hellos (hello_cert_payload).  Both lengths 1..CERT_DER_MAX and
 * 1..CERT_SIG_MAX.
 */
#define BS_CERT_HEAD	4
#define BS_CERT_MSG_MAX (BS_CERT_HEAD + CERT_DER_MAX + CERT_SIG_MAX)

/* The step into buf (BS_CERT_MSG_MAX): its length. */
size_t bs_cert_encode(uint8_t *buf, const uint8_t *der, size_t derlen,
		      const uint8_t *sig, size_t siglen);

/* A head: the bytes of DER and signature that follow, or -EBADMSG. */
int bs_cert_head(const uint8_t head[BS_CERT_HEAD], size_t *derlen,
		 size_t *siglen);

/*
 * What signer signs for verifier in a session (cert.h's cert_payload):
 * both names, both hellos' nonces and boot ids, and the signer's QPN,
 * GID and LID.  Its length, or -EINVAL.
 */
int hello_cert_payload(const struct hello *signer, const struct hello *verifier,
		       uint8_t out[CERT_PAYLOAD_MAX]);

/*
 * Install p at addr (bootstrap thread, or announce.c's): the AH cached
 * in p when it came back at the same QPN and GID, else a fresh route
 * resolution.  0 (cached), 1 (resolved), or route_resolve's -errno.
 */
int bootstrap_peer_up(struct tp *tp, struct route *rt, struct peer *p,
		      const struct peer_addr *addr, enum config_route route);

/*
 * Meeting p failed: keep msg as its last_error (errno err), count it in
 * p->fails, then tp_peer_failed.  Logged once, not per retry: the first
 * failure since p was up at info ("peer NAME: first failure: msg"); a
 * refusal (err EACCES, EPROTO, EPERM: a config to fix) as a warning
 * "PREFIX NAME: msg" once per reason until the peer is met again; the
 * rest at debug.
 */
void bootstrap_note(struct tp *tp, struct peer *p, int err, const char *prefix,
		    const char *msg);

/* The config word for a delivery: "datagram" or "reliable". */
const char *bootstrap_delivery_name(unsigned d);

/*
 * Why a hello or announce of a node is refused whatever it proves: its
 * delivery is not the one the config gives it, or its qkey not ours.
 * The reason in config words in buf, or NULL when it may be met.
 */
const char *hello_refusal(const struct hello *h, unsigned delivery,
			  uint32_t qkey, char *buf, size_t len);

/* A node was met after failures: log its recovery once (any thread). */
void bootstrap_recovered(struct peer *p);

struct bootstrap;

/* Listen and bring the local peer up; peers are met on demand.  cert
 * (with ca; else NULL) proves who we are and checks who they are, and
 * must outlive the bootstrap. */
int bootstrap_open(struct bootstrap **out, const struct config *cfg,
		   struct peer *peers, struct cert *cert, struct tp *tp,
		   struct route *rt);
void bootstrap_close(struct bootstrap *b);

/*
 * The transport's device is back with a new QPN and boot id (the heal
 * hook, on the progress thread; never blocks): the bootstrap thread makes
 * our hello again, brings the local node up at it, ends every live
 * session (and any in its handshake, which sent the old hello) and dials
 * each of those peers again, so that a new hello on a
 * new session replaces their AH for us.
 */
void bootstrap_retell(struct bootstrap *b);

#endif
