/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Bootstrap over the fabric, [global] bootstrap = multicast: no TCP at
 * all, and a cost that follows the peers in use, as IPoIB's ARP does
 * (issue 33).  A node announces itself on the multicast group
 * ANN_STARTUP_MAX times when it starts and when its address changes
 * (ann_retell), then never: its hello (bootstrap_hello.c's codec, the one
 * the TCP bootstrap sends: name, QPN, qkey, LID, GID, MTU, max_message,
 * delivery) with a boot id, random per start.  A node heard is only
 * remembered (known: its address); it is resolved (route_resolve) and
 * installed when it is in use here: a write wants it (the need hook),
 * or it was up here and announces a restart (another boot id, QPN or
 * GID), or it installed us and says so by unicast (ANN_MEET).  A write
 * that wants a known node installs it and sends it a MEET; one that
 * wants a node not known (or one installed whose probe failed) asks the
 * group (ANN_QUERY: "who is X?", or for every node when several are
 * wanted at once), and X answers with a MEET.  Liveness is the data
 * path's probe (tp_probe.c): no timer here watches the nodes up.
 *
 * Timing.  The start-up announces go at once, about announce_interval / 3
 * later and about announce_interval later, each gap with +-50 % jitter,
 * so that nodes started together do not announce in step.  A query
 * unanswered is sent again (ANN_RTO_MIN doubling to ANN_RTO_MAX) while a
 * write waits, and given up at peer_timeout.  Idle, the thread has no
 * timer armed.
 *
 * Announces come from nodes not met yet, so the transport takes WIRE_ANN
 * datagrams before its source filter (tp_recv.c), and keeps only those
 * whose hello names the very QP (src_qp) and GID (or LID, without a GRH)
 * they came from (ann_msg_from): nobody announces another node's QP.
 * The progress thread only queues them (tp_set_announce); the announce
 * thread does the rest, since route resolution blocks.
 *
 * With a secret or a ca no node is installed until a challenge and
 * response has gone both ways over UD unicast, with the TCP handshake's
 * proof and, with a ca, its certificate step (below, and
 * announce_trust.c for the order of things): the writer challenges the
 * known node it wants, and a node asked for challenges the asker, in
 * place of the MEET; until then the source filter keeps its data out.
 *
 * Threads: ann_open and ann_close on main; the hooks only queue, under
 * the announce's lock (the progress thread's, for announces, and the
 * senders', for peers a write waits for); everything else on the
 * announce thread, which alone reads and writes its per-node records.
 * The codec and the judgements below are pure, for the unit tests.
 */
#ifndef IBFS_ANNOUNCE_H
#define IBFS_ANNOUNCE_H

#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"
#include "config.h"
#include "peer.h"
#include "route.h"
#include "transport.h"
#include "wire.h"

/*
 * What a WIRE_ANN datagram says.  With a secret or a ca, the four after
 * the announce are the TCP handshake's steps (bootstrap_session.c) as UD
 * unicast datagrams, D the node that heard an announce it cannot trust
 * yet, L the announcer; each carries its sender's hello, so that the
 * receive path checks its source as an announce's:
 *   CHALLENGE  D -> L  hello(D, nD)
 *   ANSWER     L -> D  hello(L, nL), echo nD
 *   PROOF      D -> L  hello(D, nD), echo nL, HMAC(K, "D->L" || nL || hD || hL)
 *   CONFIRM    L -> D  hello(L, nL), echo nD, HMAC(K, "L->D" || nD || hD || hL)
 * (bootstrap_proof's construction and labels; the HMAC zero without a
 * secret).  With a ca, PROOF and CONFIRM also carry the TCP handshake's
 * certificate step (bs_cert_encode): the sender's certificate and its
 * signature over hello_cert_payload(sender's hello, the other's), both
 * names, nonces and boot ids and the sender's QPN, GID and LID.  L
 * trusts D once PROOF checks out, D trusts L once CONFIRM does.
 */
enum ann_kind {
	ANN_ANNOUNCE = 1, /* to the group, at start and retell: "I am" */
	ANN_CHALLENGE,
	ANN_ANSWER,
	ANN_PROOF,
	ANN_CONFIRM,
	ANN_QUERY, /* to the group: "who is <target>?" (0: everybody) */
	ANN_MEET,  /* unicast: "I am, and I installed you" */
	ANN_KIND_MAX,
};

/*
 * The body of a WIRE_ANN datagram (after the wire header), fixed layout:
 *   0  u8  kind (enum ann_kind)
 *   1  3 bytes, zero
 *   4  the sender's hello, HELLO_WIRE_LEN bytes as bootstrap_hello.c
 *      encodes it (its boot id in the hello's boot word)
 * 132  echo: the other side's nonce this answers (ANSWER, PROOF,
 *      CONFIRM); QUERY: the wire id (wire_node_id, big-endian) of the
 *      node asked for in its first 4 bytes, 0 for every node, the rest
 *      zero; zero otherwise
 * 148  proof, BS_PROOF_LEN bytes (PROOF, CONFIRM with a secret; zero
 *      otherwise)
 * 180  with HELLO_F_CERT, PROOF and CONFIRM only: the certificate step
 *      (bs_cert_encode: head, DER, signature), the body's last bytes
 * Every kind but ANNOUNCE, QUERY and MEET carries a hello with a nonce
 * (HELLO_F_AUTH or HELLO_F_CERT).
 *
 * A body with a certificate step is one datagram like the rest, never
 * fragmented (WIRE_ANN bypasses reassembly, which strangers must not
 * fill): it must fit the port's MTU, which ann_open checks at start
 * (Ed25519's step is about 400 bytes, P-256's about 480: a 1024-byte
 * MTU takes either; 256 and 512 take neither), and the MTU the other
 * node's hello announces, which a send checks (-EMSGSIZE).
 */
#define ANN_WIRE_LEN 180
#define ANN_MSG_MAX  (ANN_WIRE_LEN + BS_CERT_MSG_MAX)
/* The longest datagram a certificate of derlen bytes goes in. */
#define ANN_CERT_DGRAM(derlen)                                                 \
	(WIRE_HDR_LEN + ANN_WIRE_LEN + BS_CERT_HEAD + (derlen) + CERT_SIG_MAX)
_Static_assert(ANN_MSG_MAX <= WIRE_ANN_MAX, "an announce fits WIRE_ANN_MAX");
_Static_assert(WIRE_HDR_LEN + ANN_WIRE_LEN <= 256,
	       "an announce without a certificate fits the smallest MTU");

/* One announce body, decoded. */
struct ann_msg {
	uint8_t kind;
	uint32_t target;	       /* QUERY: whom it asks for, 0 all */
	struct hello h;		       /* the sender's hello, decoded */
	uint8_t hello[HELLO_WIRE_LEN]; /* ... and as it was sent */
	uint8_t echo[HELLO_NONCE_LEN];
	uint8_t proof[BS_PROOF_LEN];
	/* the certificate step, or der NULL: der points into the buffer
	 * decoded (the receive slot, then the inbox's copy) or, for one we
	 * send, at our certificate (struct ann_key) */
	const uint8_t *der;
	uint16_t derlen;
	uint8_t siglen;
	uint8_t sig[CERT_SIG_MAX];
};

/* Encode m (m->hello as sent: hello_encode's bytes) into buf
 * (ANN_MSG_MAX bytes); returns its length, ANN_WIRE_LEN without a
 * certificate step. */
size_t ann_msg_encode(const struct ann_msg *m, void *buf);

/*
 * Decode a body of len bytes: -EBADMSG when anything is off (length,
 * kind, padding, a field its kind leaves zero, a certificate step where
 * none belongs, or missing, or not filling the rest), hello_decode's
 * error for the hello.  m->der points into buf.
 */
int ann_msg_decode(struct ann_msg *m, const void *buf, size_t len);

/*
 * A whole WIRE_ANN datagram (header onward, len bytes): its header (one
 * fragment, no channel, src the wire id of the hello's name), then its
 * body.  -EBADMSG when it is not such a datagram.
 */
int ann_datagram_decode(struct ann_msg *m, const void *dg, size_t len);

/* The datagram for m from src into buf (WIRE_HDR_LEN + ANN_MSG_MAX
 * bytes); returns its length. */
size_t ann_datagram_build(void *buf, uint32_t src, const struct ann_msg *m);

/*
 * Whether m came from the QP its hello names: src_qp is its QPN and,
 * with a GRH (sgid not NULL), the source GID is its GID; without one (IB
 * in one subnet) the source LID is its LID.  0, or -EPERM.
 */
int ann_msg_from(const struct ann_msg *m, uint32_t src_qp,
		 const union ibv_gid *sgid, uint16_t slid);

/*
 * What the announce thread knows of one node: the address it was
 * installed at while up, else the last one heard (a group announce, a
 * query, a MEET), which costs nothing until a write wants the node.
 */
struct ann_known {
	int up;		       /* we installed it (tp_peer_up) */
	int known;	       /* addr was heard, or installed */
	uint32_t boot;	       /* the boot id it was installed with */
	struct peer_addr addr; /* ... and its address */
};

/* What an announce means for the node it names. */
enum ann_verdict {
	ANN_SAME,    /* up at this address and boot: alive, nothing more */
	ANN_UP,	     /* not up: bring it up */
	ANN_RESTART, /* up, but another boot id or address: up again there */
};

/* Judge hello h against what is known of its node. */
enum ann_verdict ann_judge(const struct ann_known *k, const struct hello *h);

/* What the config says of an announce's address (ann_addr_fits). */
enum ann_addr_fit {
	ANN_ADDR_NO,	  /* not n's: refused under strict_source */
	ANN_ADDR_UNKNOWN, /* nothing tells: taken */
	ANN_ADDR_YES,	  /* surely n's */
};

/*
 * Whether addr (an announce's, its GID checked by the transport) may be
 * node n's by the config: NO when n's addr is a numeric IPv4 (IPv6)
 * address and addr's GID an IPv4-mapped (global IPv6) one, RoCE's, of
 * another address; YES when it is that very address.  A GID of another
 * kind (InfiniBand's, link-local ones) and an addr given as a host name
 * (looked up only once met) cannot be checked: UNKNOWN.
 */
int ann_addr_fits(const struct config_node *n, const struct peer_addr *addr);

/*
 * Whether the receive path may queue m for the announce thread: the
 * index of the node its hello names, -ENOENT when the config has no such
 * node, -EPERM when strict_source is on and m's address is surely not
 * that node's (ann_addr_fits: ANN_ADDR_NO).  A stranger's announces are
 * refused here, before they take a place in the announce thread's inbox,
 * where a flood of them would crowd the nodes' own out.  It reads only
 * the config, which does not change while the daemon runs: any thread.
 */
int ann_admit(const struct config *cfg, const struct ann_msg *m);

/*
 * What the announce thread does with a message m of a node it knows as
 * k (wanted: a write waits for it; self_id: our wire id, which a query
 * for us names).  Hearing is not installing: a node is resolved and
 * installed only when it is in use here.
 *   ANNOUNCE  up and restarted, or wanted: INSTALL; else KNOW.
 *   MEET      it installed us: TAKE unless up here as it says (KNOW).
 *   QUERY     for us, or for every node: INSTALL unless up here as it
 *             says; then, for us alone, MEET; for another: KNOW.
 */
enum ann_do {
	ANN_DO_KNOW,	/* remember its address, nothing more */
	ANN_DO_INSTALL, /* install it and send it our MEET */
	ANN_DO_TAKE,	/* install it, send nothing */
	ANN_DO_MEET,	/* send it our MEET: it is up here already */
};
enum ann_do ann_decide(const struct ann_known *k, int wanted,
		       const struct ann_msg *m, uint32_t self_id);

/* What to do next for a node a write wants (announce.c's seek). */
enum ann_step {
	ANN_STEP_INSTALL, /* known and not up: install it from what we heard */
	ANN_STEP_ANY,	  /* ask: may go in one query for every node */
	ANN_STEP_QUERY,	  /* ask for it alone (asked once already) */
};
enum ann_step ann_seek_step(const struct ann_known *k, int asked);

/*
 * Whether the fresh nodes asked for at once (of nnodes configured) go
 * in one query for every node rather than one query each: every node
 * that has not the asker up answers the former, installing it (a route
 * resolution each), so it pays only when a good part of the cluster is
 * wanted, as by the first write to all/; a few (an all-to-all among 32
 * of 10,000) are asked for by name.
 */
int ann_query_all(int fresh, int nnodes);

/* Announces at start and after a retell, for loss; then none at all */
#define ANN_STARTUP_MAX 3

/* When the start-up announce after the n-th (sent at now) is due: about
 * interval_ms / 3 after the first, interval_ms after the second, each
 * with +-50 % jitter drawn from r; INT64_MAX after ANN_STARTUP_MAX of them
 * (n counts from 1). */
int64_t ann_startup_next(int64_t now, int n, int interval_ms, uint32_t r);

/* When the announce after now is due: interval_ms with +-50 % jitter
 * drawn from r. */
int64_t ann_next(int64_t now, int interval_ms, uint32_t r);

/* ---- with a secret or a ca: the challenge and response (announce_auth.c) */

/* Where one node's exchange stands, as D and as L. */
enum ann_auth_state {
	ANN_AUTH_IDLE,	     /* none */
	ANN_AUTH_CHALLENGED, /* D: CHALLENGE sent, ANSWER awaited */
	ANN_AUTH_PROVED,     /* D: PROOF sent, CONFIRM awaited */
	ANN_AUTH_ANSWERED,   /* L: ANSWER sent, PROOF awaited */
	ANN_AUTH_CONFIRMED,  /* L: PROOF checked, CONFIRM sent */
};

/*
 * One node's exchanges with us: the one we started (D) and the one it
 * started (L), each with the hellos exactly as sent, which the proofs
 * cover.  Zero it to start.
 */
struct ann_auth {
	enum ann_auth_state d, l;
	uint8_t d_mine[HELLO_WIRE_LEN];	  /* hello(D = us, nD) */
	uint8_t d_theirs[HELLO_WIRE_LEN]; /* hello(L, nL), from its ANSWER */
	struct ann_msg d_last;		  /* what D sends again on loss */
	uint8_t l_theirs[HELLO_WIRE_LEN]; /* hello(D, nD), from its CHALLENGE */
	uint8_t l_mine[HELLO_WIRE_LEN];	  /* hello(L = us, nL) */
	struct ann_msg l_last;		  /* L's last answer, for duplicates */
};

/* What ann_auth_recv did: bits, or a negative refusal. */
#define ANN_AUTH_REPLY 0x1 /* send *out to the node */
#define ANN_AUTH_OK    0x2 /* the node proved itself: *who is its hello */

/*
 * What an exchange proves: the shared secret (len 0 without one), and
 * with a ca the node's certificate (cert, and our own in DER, which our
 * PROOF and CONFIRM carry: der must outlive the exchange).  At least one
 * of the two.
 */
struct ann_key {
	const void *secret;
	size_t len;
	struct cert *cert;
	const uint8_t *der;
	size_t derlen;
};

/*
 * Start an exchange as D with our hello me (flagged as k says) and a
 * fresh nonce: *out is the CHALLENGE (kept for ann_auth_resend).
 */
void ann_auth_start(struct ann_auth *a, const struct ann_key *k,
		    const struct hello *me,
		    const uint8_t nonce[HELLO_NONCE_LEN], struct ann_msg *out);

/*
 * Take one message of the exchange (its source checked already): L
 * answers a CHALLENGE with our hello me and the fresh nonce (a CHALLENGE
 * seen before gets the same ANSWER again), D proves on an ANSWER, L
 * checks a PROOF and confirms, D checks a CONFIRM.  Returns
 * ANN_AUTH_REPLY and/or ANN_AUTH_OK (then *who is the proven hello), 0
 * when there is nothing to do, or -EPROTO (it belongs to no exchange of
 * ours: a replay, a reflection, a stale or lost one), -EACCES (a wrong
 * proof, or a certificate refused: the exchange stays as it was, since a
 * forged one must not end it; D gives up on its own time; why, when not
 * NULL, says which in config words: "wrong proof (a different
 * secret?)", cert_verify's "certificate names gamma, not beta", ...),
 * -ENOMEM or -EIO (libcrypto).  With a ca, a PROOF and a CONFIRM are
 * signed when made and verified when taken, so once per exchange.
 */
int ann_auth_recv(struct ann_auth *a, const struct ann_key *k,
		  const struct hello *me, const uint8_t fresh[HELLO_NONCE_LEN],
		  const struct ann_msg *in, struct ann_msg *out,
		  struct hello *who, char *why, size_t whylen);

/* D's message waiting for an answer, to send again; 0 when none. */
int ann_auth_resend(const struct ann_auth *a, struct ann_msg *out);

struct announce;

/*
 * Bring the local peer up, make our announce, start the announce thread
 * (which announces at once) and take tp's need and announce hooks.  The
 * group must be joined (fabric.c checks).  cert: with ca, the node's
 * certificate (main's, outliving the announce), else NULL.  0 or -errno,
 * nothing left: -EMSGSIZE (logged) when our certificate step does not
 * fit one datagram at the port's MTU.
 */
int ann_open(struct announce **out, const struct config *cfg,
	     struct peer *peers, struct cert *cert, struct tp *tp,
	     struct route *rt);

/* Let go of the hooks, stop the thread, take every peer down; a may be
 * NULL. */
void ann_close(struct announce *a);

/*
 * Our certificate files were read again (SIGHUP's thread; never blocks):
 * the announce thread, asleep when idle, wakes and has every node up
 * prove itself again under them (announce_trust.c).  a may be NULL.
 */
void ann_reload(struct announce *a);

/*
 * The transport's device is back with a new QPN and boot id (the heal
 * hook, on the progress thread; never blocks): the announce thread makes
 * our announce again, brings the local node up at it and announces it
 * ANN_STARTUP_MAX times from now, so that every node that has us up
 * installs us again (a node that misses them finds us by its query).
 */
void ann_retell(struct announce *a);

#endif
