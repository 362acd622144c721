/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The bootstrap's insides, shared by its files and by nothing else
 * (bootstrap.h is the public API).  They layer without a cycle, each
 * calling only the ones above it in this list (scripts/lint-deps.sh
 * finds any cycle):
 *
 *   bootstrap_hello.c    the hello codec and the HMAC proof (pure)
 *   bootstrap_cert.c     with ca: the certificate step, made and checked
 *   bootstrap_session.c  one TCP session: its socket, its handshake, step
 *                        by step, and what it does to its peer (up, moved,
 *                        down); it asks admission's strict_source through
 *                        the hook b->source_ok
 *   bootstrap_admit.c    who may hold a listener's slot: accepting, the
 *                        caps on strangers, eviction, strict_source, and
 *                        the pause when descriptors run out
 *   bootstrap.c          the thread and its epoll loop: listening, meeting
 *                        peers on demand (dial rate, backoff, jitter),
 *                        idle sessions, open and close
 */
#ifndef IBFS_BOOTSTRAP_SESSION_H
#define IBFS_BOOTSTRAP_SESSION_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include "bootstrap.h"

#define BS_READY_MAGIC	    0x49424852u /* "IBHR": dialer has us up */
#define BS_BYE_MAGIC	    0x49424859u /* "IBHY": closing, for want of use */
#define BS_READY_LEN	    4		/* and BYE's */
#define BS_BACKOFF_MIN_MS   100
#define BS_BACKOFF_MAX_MS   2000
#define BS_HELLO_TIMEOUT_MS 5000 /* at least; peer_timeout if longer */
#define BS_LISTEN_BACKLOG   128	 /* at least: one per node (bs_backlog) */
#define BS_DIAL_RATE	    100	 /* dials started per second, at most */
#define BS_DIAL_BURST	    32	 /* ... and at once after a quiet while */
#define BS_DIAL_INFLIGHT    64	 /* outgoing handshakes under way at once */
#define BS_EVENTS	    64	 /* epoll events taken per wait */
#define BS_UNAUTH_MS	    3000 /* an incoming hello, from its accept */
#define BS_PER_SOURCE	    4	 /* handshakes one stranger's address holds */
#define BS_STRANGERS_MAX    64	 /* ... all strangers, at most (max_in / 2) */
#define BS_ACCEPT_PAUSE_MS  250	 /* listener left alone when fds run out */
#define BS_NAME_RECHECK_MS  5000 /* a node's host names looked up again */
#define BS_NAME_LOOKUPS	    4	 /* ... of all nodes, per that while */
#define BS_ACCEPT_BATCH	    64	 /* connections taken per wake-up */

/* The longest message of a handshake: the proof and the certificate
 * step (a hello is shorter). */
#define BS_MSG_MAX (BS_PROOF_LEN + BS_CERT_MSG_MAX)
_Static_assert(BS_MSG_MAX >= HELLO_WIRE_LEN, "a hello fits a message");
_Static_assert(BS_PROOF_LEN <= HELLO_WIRE_LEN, "a proof fits a hello's room");

enum bs_state {
	BS_CONNECTING, /* outgoing: connect in progress */
	BS_READ_HELLO, /* either: our hello queued, theirs awaited */
	BS_READ_PROOF, /* either, with a secret: the other's proof awaited */
	BS_READ_READY, /* incoming: our hello queued, READY awaited */
	BS_RESOLVING,  /* either: the other's route resolving (c->rq), the
			* socket left alone meanwhile */
	BS_UP,	       /* handshake done; BYE or EOF ends the session */
};

/* One TCP session, outgoing or incoming: malloc'ed while it lasts; the
 * bootstrap thread's alone, no lock. */
struct bs_conn {
	TAILQ_ENTRY(bs_conn) link;   /* in b->conns, then b->dead */
	TAILQ_ENTRY(bs_conn) slink;  /* in b->strangers while stranger */
	struct sockaddr_storage src; /* incoming: who connected */
	int stranger; /* incoming, in its handshake, from no node's address */
	int fd;	      /* -1 once closed */
	int outgoing;
	int peer; /* node index; -1 until an incoming hello */
	enum bs_state st;
	int live;	  /* counted in its peer's live sessions */
	int bye;	  /* BYE sent or seen: the peer goes idle, not down */
	uint32_t armed;	  /* the epoll events registered for fd */
	int64_t deadline; /* ms; 0 = none */
	struct bootstrap *b;  /* whose it is, for route.c's callback */
	struct route_req *rq; /* BS_RESOLVING: its resolution */
	/* the handshake's messages, after the struct (bs_conn_new): room
	 * for BS_MSG_MAX each with a ca, HELLO_WIRE_LEN without, so that a
	 * cluster without certificates pays nothing for them */
	uint8_t *tx;
	size_t txlen, txoff;
	uint8_t *rx;
	size_t rxlen, rxwant;
	struct hello h;			/* what the other side announced */
	uint8_t mine[HELLO_WIRE_LEN];	/* our hello, as sent */
	uint8_t theirs[HELLO_WIRE_LEN]; /* theirs, as received */
	uint8_t nonce[HELLO_NONCE_LEN]; /* our challenge in this session */
};

TAILQ_HEAD(bs_connq, bs_conn);

/*
 * Bootstrap's view of one node it has had to do with: made by
 * bs_peer_get when the node is first wanted, dials us or has its host
 * names looked up, so that a node never used costs only its pointer in
 * b->bp.  The bootstrap thread's alone.
 */
struct bs_peer {
	int idx;			/* its node's index in the config */
	TAILQ_ENTRY(bs_peer) want_link; /* in b->want while wanted */
	struct bs_conn *out;		/* our session to it, or NULL */
	int64_t next_try;		/* ms: no dial before */
	int64_t want_until;		/* ms: a send waits until then */
	int64_t active_ms;		/* when its traffic last moved */
	uint64_t seen;			/* messages both ways, then */
	int backoff_ms;
	int live;	       /* sessions that reached BS_UP */
	int up;		       /* we called tp_peer_up */
	int wanted;	       /* in b->want */
	struct peer_addr addr; /* what is installed */
	/* strict_source for a node written with host names: what its addr
	 * and bootstrap host resolved to (16 bytes, IPv4 mapped), and when,
	 * so that a stranger's hellos cost one lookup per BS_NAME_RECHECK_MS */
	uint8_t name_addr[2][16];
	uint8_t name_ok[2];
	int64_t name_ms;
};

/* Set by bootstrap_open, then the bootstrap thread's alone, but for stop
 * (atomic), efd (written by anyone to wake it) and the needs below. */
struct bootstrap {
	const struct config *cfg;
	struct peer *peers;
	struct tp *tp;
	struct route *rt;
	struct hello me;
	const char *secret; /* "" = no authentication */
	size_t secret_len;
	struct cert *cert; /* with ca: the node's own and the CA's; or NULL */
	int lfd, efd, ep;  /* listener, wake-up eventfd, epoll */
	atomic_int stop;
	atomic_int retell; /* the device is back: tell every peer met */
	int timeout_ms;
	struct bs_peer **bp;	   /* per node, NULL until bs_peer_get */
	struct bs_connq conns;	   /* every open session */
	struct bs_connq dead;	   /* closed, freed after the event batch */
	int nin, max_in;	   /* incoming sessions, and their cap */
	struct bs_connq strangers; /* strangers' handshakes, oldest first */
	int nstrangers, max_strangers;
	/* the config's numeric node addresses (bootstrap_admit.c): a slot
	 * holds (node << 1 | 0 for addr, 1 for bootstrap) + 1, or 0 */
	uint32_t *src_set;
	uint32_t src_mask;
	/* strict_source's check, bs_source_ok, set by bs_admit_open: a
	 * session (below admission) asks it through this hook */
	int (*source_ok)(struct bootstrap *b, const struct bs_conn *c, int pi);
	int64_t accept_paused_until; /* ms; 0 = the listener is in epoll */
	int fd_short;		     /* a descriptor shortage was said */
	int spare_fd; /* /dev/null, given up to accept one when fds run out */
	int64_t fd_short_ms; /* ... and last seen then */
	/* host names looked up again (each blocks) since names_ms: at most
	 * BS_NAME_LOOKUPS per BS_NAME_RECHECK_MS, whatever the nodes */
	int64_t names_ms;
	int names_left;
	int dialing;		    /* outgoing sessions not up yet */
	TAILQ_HEAD(, bs_peer) want; /* peers a send waits for */
	double tokens;		    /* dials that may start now */
	int64_t tokens_ms;
	unsigned seed; /* jitter */

	/* needs: senders' threads ask, the bootstrap thread takes */
	pthread_mutex_t need_lock;
	int *needq;	 /* under need_lock: node indexes asked for */
	uint8_t *queued; /* per node, under need_lock: in needq */
	int nneed;	 /* under need_lock */

	pthread_t thr;
	int thr_started;
};

/* Node pi's bs_peer, made on first use (bootstrap thread); NULL
 * without memory. */
static inline struct bs_peer *bs_peer_get(struct bootstrap *b, int pi)
{
	struct bs_peer *bp = b->bp[pi];

	if (bp)
		return bp;
	bp = calloc(1, sizeof(*bp));
	if (!bp)
		return NULL;
	bp->idx = pi;
	bp->backoff_ms = BS_BACKOFF_MIN_MS;
	b->bp[pi] = bp;
	return bp;
}

/*
 * A bootstrap failure of peer pi ("bootstrap: NAME: why"), logged as
 * bootstrap_note says and kept as its last_error; err is what a writer waiting
 * for it learns (EHOSTUNREACH, or anything else for ENOTCONN).
 */
void bs_session_fail(struct bootstrap *b, int pi, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* End the outgoing session to pi and schedule the next attempt (with
 * jitter, while a send still wants pi). */
void bs_session_retry(struct bootstrap *b, int pi, int was_up);

/* Close session c (it moves to b->dead); the last live one of its peer
 * takes the peer down, or idle after a BYE. */
void bs_conn_close(struct bootstrap *b, struct bs_conn *c);

/* Keepalive and timeouts of a session's socket. */
void bs_sockopts(struct bootstrap *b, int fd);
/* Register c's fd for the events its state waits for. */
void bs_arm(struct bootstrap *b, struct bs_conn *c);
/* A new session on fd (peer pi, or -1), in b->conns; NULL without memory
 * (fd closed). */
struct bs_conn *bs_conn_new(struct bootstrap *b, int fd, int pi);
/* c leaves the strangers' list (it closed, or came up). */
void bs_stranger_drop(struct bootstrap *b, struct bs_conn *c);
/* An address as 16 bytes, IPv4 as ::ffff:a.b.c.d; 0, or -EAFNOSUPPORT.
 * sa: a sockaddr_storage, or a node's union config_sa. */
int bs_addr16(const void *sa, uint8_t out[16]);
/* ss's address as text, for a log line. */
const char *bs_src_str(const struct sockaddr_storage *ss, char *buf,
		       size_t len);

/* bootstrap_admit.c: the set of node addresses (0 or -ENOMEM), its end. */
int bs_admit_open(struct bootstrap *b);
void bs_admit_close(struct bootstrap *b);
/* New incoming session c is a handshake from ss (a stranger's or not). */
void bs_in_start(struct bootstrap *b, struct bs_conn *c,
		 const struct sockaddr_storage *ss, int64_t now);
/* Take every pending connection, within the caps. */
void bs_accept(struct bootstrap *b, int64_t now);
/* The listener's pause after a shortage; the earliest time still due. */
int64_t bs_accept_timer(struct bootstrap *b, int64_t now, int64_t wake);
/* Whether c, its hello decoded, may speak for node pi (strict_source:
 * its source, and on RoCE its GID); sessions ask it through
 * b->source_ok. */
int bs_source_ok(struct bootstrap *b, const struct bs_conn *c, int pi);

/*
 * bootstrap_cert.c.  How many bytes the proof's message has before any
 * length it announces: the HMAC with a secret, the certificate step's
 * head with a ca.
 */
size_t bs_proof_want(const struct bootstrap *b);
/* Our certificate step for session c (the other's hello in c->h) into
 * out (BS_CERT_MSG_MAX): 0 and its length, or -errno. */
int bs_cert_make(struct bootstrap *b, const struct bs_conn *c, uint8_t *out,
		 size_t *len);
/* The proof's message has its head: 1 when the certificate step's head
 * says more is to come (rxwant grown), 0 when it is all in, -EBADMSG. */
int bs_cert_more(struct bootstrap *b, struct bs_conn *c);
/* Check the certificate step in c->rx for the node c->h names: 0, or
 * cert_verify's -errno with why in config words. */
int bs_cert_check(struct bootstrap *b, struct bs_conn *c, char *why,
		  size_t whylen);

/* Events re (or a deadline) on session c: advance it, or end it. */
void bs_session_event(struct bootstrap *b, struct bs_conn *c, short re,
		      int64_t now);

#endif
