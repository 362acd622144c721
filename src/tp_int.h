/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verbs engine's private header: struct tp and its parts, shared by
 * the transport's files, which layer without a cycle: each calls only the
 * ones above it in this list (scripts/lint-deps.sh reads the order from
 * here and fails on a call against it).  A lower file that needs a higher
 * one gets it through a hook set at open (tp_ops, tp_set_need).
 *
 *   tp_dev.c      device, port and GID choice; PD, MRs, CQs, QP to RTS
 *   tp_ring.c     the send ring (slots, WRs, doorbell, completions, AH
 *                 retirement) and datagram sends on it; the need hook a
 *                 send that finds its peer not up calls (tp_peer_need)
 *   tp_mcast.c    MOUNT/all/'s group: attach, its AH, the sends to it
 *   tp_ann.c      bootstrap = multicast: announces sent, and handed to
 *                 announce.c
 *   tp_upcall.c   the upcalls (deliver, announce, done) and the counters
 *                 of what arrived
 *   tp_probe.c    the data path probe: a joined peer is up once a ping
 *                 to it is answered; unreachable while none is
 *   tp_rel_refuse.c  delivery = reliable, the receiver's refusals: a
 *                 whole message refused at once, or held for the offer
 *   tp_rel.c      delivery = reliable: reliable.h's streams on the ring
 *   tp_recv.c     the receive path: repost, source filter, reassembly
 *   tp_event.c    the device's async events (port down and back, GID,
 *                 LID and SM changes), on the progress thread
 *   tp_heal.c     the device removed (DEVICE_FATAL, rdma_cm's
 *                 DEVICE_REMOVAL) and back: all of it closed at once,
 *                 opened again as at start, the peers told
 *   transport.c   open and close, the progress thread, peer up and down
 *
 * Threads:
 *   progress      the receive CQ, reassembly, reliable timers, probes
 *                 and async events; it alone calls deliver and announce,
 *                 and (once a probe is answered, or the port goes down)
 *                 peer_up and peer_failed, with no lock held.
 *   senders       any thread in tp_send/tp_queue/tp_flush/tp_send_async
 *                 (FUSE workers, udchat's main); they post and reap the
 *                 send CQ themselves.
 *   bootstrap     tp_peer_expect, tp_peer_up, tp_peer_down, tp_set_need
 *                 (or, with bootstrap = multicast, the announce thread:
 *                 those, tp_set_announce, tp_ann_send*, tp_ah_retire);
 *                 it alone calls peer_up, with no lock held.
 *   main          tp_open, tp_close.
 *   done runs on a sender (tp_send_async), on the progress thread (acks,
 *   timeouts), on bootstrap (peer down or restarted) or on main
 *   (tp_close), always with no lock of the engine held.
 *
 * The one lock order: heal.devlock -> rx.srclock -> rx.rlock -> rel.lock
 * -> ring.lock -> peer->lock.  A thread may skip any of them, never take one
 * to the left of one it holds.  No upcall runs with any of them held.
 * need_lock, ann_lock, mcast.rejoin_lock, mcast.info_lock and info_lock are
 * leaves.
 */
#ifndef IBFS_TP_INT_H
#define IBFS_TP_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include <rdma/rdma_cma.h>

#include "announce.h"
#include "log.h"
#include "reliable.h"
#include "transport.h"
#include "wire.h"

#define TP_POLL_BATCH	32	 /* completions per ibv_poll_cq */
#define TP_INLINE_WANT	256	 /* inline data asked of the QP */
#define TP_SEND_WAIT_MS 5000	 /* pool exhausted this long: -EIO */
#define TP_LOG_EVERY_MS 1000	 /* rate limit of completion error lines */
#define TP_REL_TICK_MS	5	 /* reliable timers and delayed acks */
#define TP_MCAST_QPN	0xFFFFFF /* remote QPN of a send to a group */

/* The probe (tp_probe.c): TP_PROBE_TRIES pings, TP_PROBE_FIRST_MS apart
 * and doubling (0, 150, 450 ms: about 1 s until the last is given up),
 * then one every TP_PROBE_SLOW_MS while unreachable; answers within
 * TP_PROBE_WINDOW pings count; at most one answer per TP_PROBE_GAP_MS
 * to one peer, and no sooner a ping of ours on its ping.  A peer up is
 * watched: TP_PROBE_WATCH_MS after the first send to a peer since the
 * last look comes a look, and a peer sent to in that time is pinged, and
 * again 1 and 2 s later while unanswered (TP_PROBE_SLOW_MS doubling), and
 * unreachable 4 s after the third; a look that finds nothing sent is the
 * last until the next send. */
#define TP_PROBE_WATCH_MS 5000
#define TP_PROBE_TRIES	  3
#define TP_PROBE_FIRST_MS 150
#define TP_PROBE_SLOW_MS  1000
#define TP_PROBE_WINDOW	  8
#define TP_PROBE_GAP_MS	  1

/* The verbs objects: made by tp_dev_open, read-only until tp_dev_close. */
struct tp_dev {
	struct ibv_context *ctx;
	struct ibv_device_attr attr;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan; /* the receive CQ's only */
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint32_t max_inline;
};

/* An AH replaced or dropped while sends that use it may be in flight. */
struct tp_retired {
	struct ibv_ah *ah;
	uint64_t seq; /* free once this many sends completed */
	struct tp_retired *next;
};

/*
 * The send ring.  WR seq (1-based) lives in slot
 * (seq - 1) % send_depth of wr, sge and buf.  Filling a WR and ringing the
 * doorbell are apart: a writer fills, answers its caller, then posts;
 * whoever finds another thread posting leaves its WRs to that thread,
 * which takes them after its own (so one doorbell carries what piled up
 * meanwhile).  Only some WRs are signalled; a signalled completion frees
 * every slot before it (a QP completes its sends in order).
 */
struct tp_ring {
	pthread_mutex_t lock;
	/* Set at open, read-only until close. */
	uint8_t *buf; /* send_depth slots of mtu_bytes, registered; a slot
		       * is written under lock, as its WR is */
	struct ibv_mr *mr;
	uint32_t sig_every;
	/* Under lock: */
	uint64_t filled;   /* WRs filled so far */
	uint64_t posted;   /* WRs handed to ibv_post_send */
	uint64_t done;	   /* WRs known complete (wr_id = seq) */
	uint64_t last_sig; /* seq of the last signalled WR */
	int posting;	   /* a thread is in ibv_post_send, lock dropped */
	int sig_next;	   /* signal the next WR (an AH waits) */
	struct tp_retired *retired;
	/* send_depth entries each, under lock, but for those the posting
	 * thread took (posted advanced past them): it reads them without */
	struct ibv_send_wr *wr;
	struct ibv_sge *sge;
	uint64_t last_err_ms;	      /* under lock */
	unsigned long err_suppressed; /* under lock */
	int sq_error; /* under lock: a send failed, the QP may sit in SQE */
	/* The probe watch's (tp_probe.c) news of sends: watch_sent, under
	 * lock, a message went to a peer since its last look; watch_on,
	 * written under lock and read by the progress thread without, it
	 * has a look to come (else the send that sets it wakes it) */
	int watch_sent;
	atomic_int watch_on;
};

/* Who may send to us: what a peer announced (qpn, GID, LID), made when
 * it is first installed or expected; every field under rx.srclock
 * (written by peer up and down). */
struct tp_src {
	int valid;
	int qnext; /* the next peer on its qpn's chain; -1 ends it */
	uint64_t linger_until; /* ms; after a down, until then still ours */
	uint32_t qpn;
	uint16_t lid;
	union ibv_gid gid;
};

/* The receive side. */
struct tp_rx {
	/* Progress thread only. */
	uint8_t *buf; /* recv_depth slots of slot bytes, registered */
	struct ibv_mr *mr;
	size_t slot; /* GRH + mtu_bytes */
	struct ibv_recv_wr *wr;
	struct ibv_sge *sge;
	uint32_t *free; /* slots waiting to be reposted */
	uint32_t nfree;
	uint64_t last_err_ms;
	unsigned long err_suppressed;

	pthread_rwlock_t srclock; /* written by peer up and down */
	/* npeers pointers, under srclock; NULL for a peer never installed
	 * or expected, so that a node never used costs 8 bytes here */
	struct tp_src **src;
	/* src's valid entries chained by qpn (through their qnext), so that
	 * a datagram finds its sender without a walk over every configured
	 * node; under srclock */
	int *qhead;	/* qmask + 1 chains; -1 ends one */
	uint32_t qmask; /* set at open */
	pthread_mutex_t rlock;
	struct wire_reasm *reasm; /* the reassembly table, under rlock */
	int locks; /* both initialised (tp_recv_close may see a partial open) */
};

/* A message completed during a poll batch, delivered after unlocking. */
struct tp_done {
	struct peer *p;
	struct wire_msg msg;
};

/*
 * delivery = reliable: one peer's two streams and the message that waits
 * for its channel queue, all under rel.lock.  A whole message is never
 * offered to deliver under the lock: it waits here (held) and the
 * progress thread offers it once every lock is dropped.
 */
/* A channel that refused a reliable peer for a full queue, at psn. */
struct tp_rel_full {
	uint32_t psn;  /* the stream's nxt when it was (last) refused */
	uint32_t hash; /* of chan: most names differ here */
	char chan[WIRE_CHAN_MAX + 1];
};

/* One reliable peer's streams: made when the peer is first met (14 KiB,
 * so only for peers in use, never for every configured node).  Every
 * field under rel.lock. */
struct tp_rel {
	struct rel_tx tx;
	struct rel_rx rx;
	int held;     /* hmsg waits to be offered */
	int hretry;   /* ... and came flagged retry */
	int queued;   /* on the offer list */
	uint64_t gen; /* bumps when what was held is dropped */
	struct wire_msg hmsg;
	/* Channels of ours that refused the peer for a full queue: later
	 * messages to them are refused until a retry goes in (reliable.h,
	 * "Refusals"), or REL_SACK_BITS psns passed (tp_rel_refuse.c), so
	 * at most REL_SACK_BITS, in the order noted; full_all: one could
	 * not be noted, so all are. */
	struct tp_rel_full *full;
	uint32_t nfull, full_cap;
	int full_all;
	struct wire_seq seq; /* the message arriving, in order, no timeout */
	uint8_t *ahead;	     /* REL_SACK_BITS datagrams past a gap (lazy) */
	uint32_t ahead_len[REL_SACK_BITS]; /* | TP_REL_AHEAD_RETRY */
	struct rel_stats pub;		   /* counters published so far */
	uint32_t boot; /* the peer's boot id both sessions are of */
	int retire;    /* its peer idled out: let go if quiet (tp_rel_sweep) */
};

/* Every reliable peer's streams, and the messages waiting for deliver. */
struct tp_relset {
	pthread_mutex_t lock;
	/* npeers entries, under lock; NULL until met, and again once let go
	 * after an idle session (tp_rel_sweep) */
	struct tp_rel **peer;
	/* under lock: the peers that have one, and how many; only the
	 * progress thread's sweep takes one out, others append */
	int *active;
	int nactive;
	int *offer;	   /* under lock: peers whose held message is */
	int noffer;	   /* ... offered next, how many */
	int nretire;	   /* under lock: streams with retire set */
	uint64_t tick_at;  /* next reliable timer tick (progress thread) */
	uint64_t drop_rng; /* TEST HOOK's dice (progress thread) */
	/* Set at open, read-only after. */
	int any;		/* some node of the config is reliable */
	uint32_t drop_permille; /* TEST HOOK: IBFS_TEST_DROP_PERMILLE */
};

/*
 * MOUNT/all/'s group.  "mcast, under ring.lock": written by mcast.c (main
 * at start and stop, the group's own thread when it rejoins) under
 * ring.lock and info_lock, a leaf taken inside it; a send reads under
 * ring.lock, tp_mcast_get under info_lock alone.
 */
struct tp_mcast {
	pthread_mutex_t info_lock;
	enum tp_mcast_state state; /* mcast, under ring.lock */
	char reason[128];	   /* mcast, under ring.lock */
	/* what every member takes (0: no bound yet), under ring.lock:
	 * lowered by tp_mcast_fit as peers come up, and computed again from
	 * the members (joined or up) at the next send to the group once
	 * stale, a member having left or come back */
	size_t mtu_cap;
	uint32_t max_cap;
	int stale;
	struct ibv_ah *ah;  /* mcast, under ring.lock */
	union ibv_gid mgid; /* mcast, under ring.lock */
	uint16_t mlid;	    /* mcast, under ring.lock */
	int attached;	    /* mcast, under ring.lock */
	time_t last_rejoin; /* mcast, under info_lock: 0 never */
	atomic_uint msg_id; /* next msg_id to the group */
	/* Who rejoins the group (tp_set_rejoin); a leaf lock like need_lock,
	 * held across the hook */
	pthread_mutex_t rejoin_lock;
	void (*rejoin)(void *arg, const char *why); /* under rejoin_lock */
	void *rejoin_arg;			    /* under rejoin_lock */
};

/* The probes' schedule: next_at, watch_at and rel_busy on the progress
 * thread only; kick is set by whoever starts a probe (tp_peer_up,
 * bootstrap thread). */
struct tp_probeset {
	atomic_int kick;   /* walk the peers at the next tick */
	uint64_t next_at;  /* ms: the next ping due (0: none) */
	uint64_t watch_at; /* ms: the next look at the peers up (0: none) */
	int rel_busy;	   /* a reliable stream was busy since the last look */
	int port_down;	   /* our port is down (progress thread) */
};

/* A probe datagram taken in a poll batch, handled once its locks are
 * dropped (progress thread). */
struct tp_probes {
	int n;
	struct {
		struct peer *p;
		uint8_t type;
		uint32_t token;
	} e[TP_POLL_BATCH];
};

/* A device that went away and comes back (tp_heal.c); progress thread
 * only, but gone, which senders and the resolver read. */
struct tp_heal {
	struct rdma_event_channel *ch; /* DEVICE_REMOVAL comes here, */
	struct rdma_cm_id *id;	       /* ... to this id bound on the device */
	int pending;	   /* an event said the device is going (tp_event.c sets
			    * it, tp_heal_tick closes the device) */
	int retell;	   /* our GID or LID changed (tp_event.c): AHs dropped
			    * and every peer met told, by tp_heal_tick */
	int told;	   /* the peers met when it changed, counted before the
			    * event's flush dropped their AHs: the log line's */
	atomic_int gone;   /* closed; retried at retry_at */
	uint64_t retry_at; /* ms */
	uint32_t backoff_ms;
	int waiting; /* peers met before, told once it is back */
	/* The device context's owner is this thread; whoever uses it from
	 * another (route.c, on the bootstrap or announce thread, reads GIDs
	 * and makes AHs) holds devlock's read side (tp_dev_hold), and
	 * tp_heal_down holds the write side from the AHs' destruction
	 * through the close, so that nothing is made on a context being
	 * closed.  gen bumps at each close, under the write side and
	 * ring.lock: a resolution begun in an older one drops its result,
	 * and tp_peer_up_gen, under ring.lock, installs no AH of a device
	 * gone.  devlock is taken with no lock of the engine held. */
	pthread_rwlock_t devlock;
	atomic_uint_fast64_t gen;
	/* Who retells the peers and rejoins the group (tp_set_heal);
	 * heal_lock is a leaf like need_lock, held across the hooks */
	pthread_mutex_t lock;
	struct tp_heal_ops ops; /* under lock */
	void *arg;		/* under lock */
};

/* What the progress thread sleeps on, by epoll data.u32. */
enum { TP_EV_CHAN, TP_EV_TIMER, TP_EV_WAKE, TP_EV_ASYNC, TP_EV_CM, TP_EV_MAX };

/* The progress thread and what it sleeps on. */
struct tp_prog {
	pthread_t thr;
	int started;
	int epfd, tfd, efd; /* epoll; expiry timerfd; wake-up eventfd */
	int timer_armed;
	atomic_int stop;
};

struct tp {
	const struct config *cfg;
	struct peer *peers;
	int npeers;
	struct tp_ops ops;
	void *arg;
	struct tp_info info; /* written by main at open, then by the progress
			      * thread (tp_event.c, tp_heal.c) */
	/* What tp_info_get hands other threads: info as of its last
	 * change, copied whole (tp_dev_show), so that none reads one field
	 * as it is written, or a new QPN with the old boot id and GID;
	 * info_lock is a leaf */
	pthread_mutex_t info_lock;
	struct tp_info shown; /* under info_lock */
	uint32_t self_id;     /* wire id of the local node */
	atomic_uint *msg_ids; /* next msg_id per peer */
	struct peer_counters totals;
	struct fabric_counters fabric; /* tp_event.c and mcast.c count */
	struct log_rl event_rl;	       /* progress thread: event lines */

	struct tp_dev dev;
	struct tp_ring ring;
	struct tp_rx rx;
	struct tp_relset rel;
	struct tp_mcast mcast;
	struct tp_probeset probe;
	struct tp_prog prog;
	struct tp_heal heal;

	/* Who meets peers a send found not up (tp_set_need); need_lock
	 * is a leaf, held across the hook so that it cannot go meanwhile */
	pthread_mutex_t need_lock;
	void (*need)(void *arg, struct peer *p); /* under need_lock */
	void *need_arg;				 /* under need_lock */

	/* Who takes announces (tp_set_announce); ann_lock is a leaf like
	 * need_lock, held across the hook */
	pthread_mutex_t ann_lock;
	void (*ann)(void *arg, const struct ann_msg *m); /* under ann_lock */
	void *ann_arg;					 /* under ann_lock */
};

/* The announces of one poll batch, handed over once its locks are
 * dropped (progress thread). */
struct tp_anns {
	int n;
	struct ann_msg m[TP_POLL_BATCH];
};

/* Everything a send needs of a peer, read once under its lock. */
struct tp_dest {
	struct ibv_ah *ah;
	uint32_t qpn, qkey;
	size_t mtu;
	size_t max_message; /* what the peer takes (0: not said) */
};

/* The datagram size p's port takes, from its announced MTU; 0: unknown. */
static inline size_t tp_addr_mtu(const struct peer_addr *a)
{
	if (a->mtu < IBV_MTU_256 || a->mtu > IBV_MTU_4096)
		return 0;
	return (size_t)128 << a->mtu;
}

/* Add to a counter that many threads bump; exactness is all we need. */
static inline void tp_add(atomic_uint_fast64_t *c, uint64_t v)
{
	atomic_fetch_add_explicit(c, v, memory_order_relaxed);
}

/* One step of bringing the engine up, and its undoing (either may be
 * NULL). */
struct tp_step {
	int (*open)(struct tp *tp);
	void (*close)(struct tp *tp);
};

/* Run n steps in order; on a failure undo those done, in reverse. */
static inline int tp_steps_open(struct tp *tp, const struct tp_step *s, int n)
{
	int i, rc = 0;

	for (i = 0; i < n && !rc; i++)
		rc = s[i].open ? s[i].open(tp) : 0;
	if (!rc)
		return 0;
	for (i -= 2; i >= 0; i--)
		if (s[i].close)
			s[i].close(tp);
	return rc;
}

/* Undo n steps, last first. */
static inline void tp_steps_close(struct tp *tp, const struct tp_step *s, int n)
{
	while (n--)
		if (s[n].close)
			s[n].close(tp);
}

/* tp_dev.c; tp_dev_show takes info_lock */
int tp_dev_open(struct tp *tp);
void tp_dev_show(struct tp *tp);
void tp_dev_stop(struct tp *tp);
void tp_dev_close(struct tp *tp);

/* tp_ring.c.  tp_ring_drain and tp_flush take ring.lock; tp_dest_get
 * takes p->lock; the other tp_ring_* are called under ring.lock.
 * tp_queue (transport.h) takes p NULL within the engine: the group. */
int tp_ring_open(struct tp *tp);
void tp_ring_close(struct tp *tp);
int tp_ring_reap(struct tp *tp);
void tp_ring_push(struct tp *tp);
uint32_t tp_ring_free(const struct tp *tp);
int tp_ring_wait(struct tp *tp);
int tp_ring_next(struct tp *tp, struct peer *p, struct tp_dest *d);
uint8_t *tp_ring_slot(const struct tp *tp);
void tp_ring_fill(struct tp *tp, const struct tp_dest *d, uint8_t *sb,
		  size_t dlen);
void tp_ring_retire_ah(struct tp *tp, struct ibv_ah *ah);
void tp_ring_free_retired(struct tp *tp, int all);
void tp_ring_drain(struct tp *tp);
int tp_dest_get(struct tp *tp, struct peer *p, struct tp_dest *d,
		int joined_ok);
#define TP_ONE_FIXED  0x1 /* tp_ring_send_one: d as given */
#define TP_ONE_NOWAIT 0x2 /* ... -EAGAIN when the ring is full */
int tp_ring_send_one(struct tp *tp, struct peer *p, struct tp_dest *d,
		     int flags, const void *dg, size_t len);
int tp_msg_check(const struct tp *tp, const char *chan, const void *buf,
		 size_t len);
void tp_log_wc(const char *what, const struct ibv_wc *wc, uint64_t *last_ms,
	       unsigned long *suppressed);

/* tp_mcast.c; tp_mcast_fit under ring.lock, tp_mcast_left without it,
 * tp_mcast_rejoin with no lock held (progress thread) */
void tp_mcast_close(struct tp *tp);
void tp_mcast_fit(struct tp *tp, const struct peer_addr *addr);
void tp_mcast_left(struct tp *tp);
int tp_mcast_rejoin(struct tp *tp, const char *why);

/* tp_upcall.c: with no lock held, but tp_up_count_*. */
int tp_up_offer(struct tp *tp, struct peer *p, struct wire_msg *m);
void tp_up_deliver(struct tp *tp, struct peer *p, struct wire_msg *m);

void tp_up_announce(struct tp *tp);
void tp_up_done(struct tp *tp, struct peer *p, struct rel_msg *m);
void tp_up_count_wire(struct tp *tp, struct peer *p, int rc);
void tp_up_count_expired(void *arg, int peer);

/* tp_ann.c: with no lock held */
void tp_ann_deliver(struct tp *tp, struct tp_anns *anns);

/* tp_probe.c: tp_probe_start and tp_probe_stop under p->lock; the
 * others with no lock held, on the progress thread (tp_probe_take
 * under the receive locks) */
void tp_probe_start(struct tp *tp, struct peer *p, uint64_t now);
void tp_probe_stop(struct peer *p);
void tp_probe_kick(struct tp *tp);
int tp_probe_tick(struct tp *tp, uint64_t now);
void tp_probe_take(struct tp_probes *b, struct peer *p,
		   const struct wire_hdr *h);
void tp_probe_deliver(struct tp *tp, struct tp_probes *b, uint64_t now);
int tp_probe_hold(struct tp *tp, int held, const char *why);
void tp_probe_restart(struct tp *tp);
int tp_probe_flush(struct tp *tp, const char *why);
int tp_probe_met(struct tp *tp);

/* tp_event.c: the device's async events (progress thread) */
int tp_event_handle(struct tp *tp, const struct ibv_async_event *ev);
void tp_event_drain(struct tp *tp);

/* tp_heal.c: tp_heal_open and tp_heal_close on main, the rest on the
 * progress thread with no lock held */
int tp_heal_open(struct tp *tp);
void tp_heal_close(struct tp *tp);
int tp_nonblock(int fd);
void tp_heal_cm(struct tp *tp);
int tp_heal_tick(struct tp *tp, uint64_t now);
int tp_heal_fds(struct tp *tp, int add);
void tp_destroy_ahs(struct tp *tp);

/* tp_rel.c */
int tp_rel_open(struct tp *tp);
void tp_rel_attach(struct tp *tp, struct peer *p, const struct peer_addr *addr);
void tp_rel_close(struct tp *tp);
void tp_rel_recv(struct tp *tp, struct peer *p, const struct wire_hdr *h,
		 const uint8_t *dg, size_t dlen, uint64_t now);
int tp_rel_lose(struct tp *tp);
void tp_rel_offer(struct tp *tp);
int tp_rel_service(struct tp *tp, int tick);
int tp_rel_tick(struct tp *tp);
void tp_rel_reset(struct tp *tp, struct peer *p, int err, int rx_too);
void tp_rel_idle(struct tp *tp, struct peer *p);
void tp_rel_unboot(struct tp *tp);

/* tp_rel_refuse.c: the receiver's refusals (under rel.lock) */
#define TP_REL_AHEAD_RETRY 0x80000000u /* ahead_len: it came flagged retry */
int tp_rel_complete(struct tp_rel *r, struct wire_msg *msg, int retry);
void tp_rel_settle(struct tp *tp, struct peer *p, struct tp_rel *r,
		   struct wire_msg *m, int retry, int rc);
void tp_rel_full_clear(struct tp_rel *r);

/* tp_recv.c */
int tp_recv_open(struct tp *tp);
void tp_recv_close(struct tp *tp);
int tp_recv_post(struct tp *tp);
int tp_recv_drain(struct tp *tp);
int tp_recv_expire(struct tp *tp);
int tp_recv_src_set(struct tp *tp, struct peer *p,
		    const struct peer_addr *addr);
void tp_recv_src_linger(struct tp *tp, struct peer *p);

#endif
