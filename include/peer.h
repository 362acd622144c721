/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A peer: one node of the config as this daemon sees it — its wire id and
 * state for every node; once it is used, the address it announced over
 * bootstrap, the address handle that reaches it, its last error and its
 * counters (struct peer_use, so that a node never used costs little: a
 * 10,000-node config is 10,000 peers).  The local node is a peer too:
 * sending to yourself loops through the HCA like any other send.
 */
#ifndef IBFS_PEER_H
#define IBFS_PEER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "config.h"

/*
 * Every counter, once.  X(name, comment) lists generate the fields of
 * struct peer_counters, the drop reasons and their names, the
 * .status lines (fs_status.c prints them in this order), the
 * .metrics families (fs_metrics.c; the comment is their HELP) and their
 * entries in ibfs-status(7) (make man): adding a counter is a line here
 * and the place that counts it.
 */

/* Traffic and address resolutions: msgs_tx=N ... in .status. */
#define PEER_COUNTERS_TRAFFIC(X)                                               \
	X(msgs_tx, "messages sent")                                            \
	X(bytes_tx, "bytes of the messages sent")                              \
	X(msgs_rx, "messages delivered whole")                                 \
	X(bytes_rx, "bytes of the messages delivered whole")                   \
	X(ah_resolutions, "address handles made for the peer")                 \
	X(mcast_tx, "datagrams sent to the group (MOUNT/.status only)")        \
	X(mcast_rx, "datagrams from the group accepted")                       \
	X(mcast_self_dropped,                                                  \
	  "own copies the group looped back (MOUNT/.status only)")             \
	X(ann_tx, "announces and challenges sent (bootstrap = multicast)")     \
	X(ann_rx, "announces and challenges taken from the node")              \
	X(probe_tx, "data path probes (pings) sent")                           \
	X(probe_rx, "answers to our probes taken from the node")               \
	X(probe_answered, "the node's probes answered")

/* Why a datagram or message was dropped: DROP_ENUM, drop_name=N. */
#define PEER_DROPS(X)                                                          \
	X(MALFORMED, malformed, "bad header, length or completion status")     \
	X(UNKNOWN_SRC, unknown_src, "no up peer has that source QP and GID")   \
	X(REASM_TIMEOUT, reasm_timeout,                                        \
	  "a message not completed within reassembly_timeout")                 \
	X(REASM_BUDGET, reasm_budget, "reassembly memory full")                \
	X(REASM_SHARE, reasm_share,                                            \
	  "the peer holds its share of reassembly memory or messages")         \
	X(QUEUE_FULL, queue_full, "the channel holds queue_limit already")     \
	X(MAX_CHANNELS, max_channels, "a new channel past max_channels")       \
	X(MEMORY_LIMIT, memory_limit,                                          \
	  "memory_limit: full, or the peer's share")                           \
	X(BAD_NAME, bad_name, "a channel name no file may have")               \
	X(DUPLICATE, duplicate, "fragment seen twice")                         \
	X(TOO_BIG, too_big, "beyond max_message")                              \
	X(ANN_REFUSED, ann_refused,                                            \
	  "announce refused: forged source, malformed, not authenticated")     \
	X(REL_SESSION, rel_session,                                            \
	  "reliable datagram of a session the bootstrap did not agree on "     \
	  "(an old incarnation's, or forged)")

/* delivery = reliable (zero otherwise), summed into the totals: the
 * gauges (levels, .metrics's TYPE gauge), then the counts of events. */
#define PEER_GAUGES_REL(X)                                                     \
	X(rel_window, "datagrams allowed in flight")                           \
	X(rel_inflight, "sent, not yet acked")
#define PEER_COUNTERS_REL(X) PEER_GAUGES_REL(X) PEER_EVENTS_REL(X)
#define PEER_EVENTS_REL(X)                                                     \
	X(rel_retrans, "datagrams sent again")                                 \
	X(rel_dups, "duplicates dropped")                                      \
	X(rel_timeouts, "writes failed: the peer stayed silent")               \
	X(rel_probes, "tail probes sent")                                      \
	X(rel_rtos, "retransmission timer expiries")                           \
	X(rel_refused, "messages the peer refused for a full queue, to retry")

/* Per stream, so in NODE/.status only, never summed. */
#define PEER_GAUGES_STREAM(X)                                                  \
	X(rel_srtt_ms, "smoothed round trip")                                  \
	X(rel_rto_ms, "retransmission timeout now")                            \
	X(rel_waiting, "messages waiting for room in the peer's queue")

/* The fabric's events, node-wide: MOUNT/.status and .metrics only, with
 * no peer (ibfs(8) FABRIC EVENTS says what each does). */
#define PEER_COUNTERS_FABRIC(X)                                                \
	X(fabric_events, "events of our port, device or group handled")        \
	X(fabric_recoveries,                                                   \
	  "recoveries: the port back, paths flushed, the group joined again")  \
	X(ah_flushed, "address handles flushed for the subnet manager")        \
	X(mcast_rejoins, "times the group was joined again")

/* Gauges of the node, not of a peer: MOUNT/.status and .metrics only. */
#define PEER_GAUGES_NODE(X)                                                    \
	X(route_inflight, "route resolutions (route = sa) in flight now")      \
	X(route_inflight_max,                                                  \
	  "the most route resolutions (route = sa) in flight at once since "   \
	  "start: more than 1 when newcomers were resolved together")

#define PEER_DROP_ENUM(e, name, comment) DROP_##e,
enum peer_drop { PEER_DROPS(PEER_DROP_ENUM) DROP_MAX };
#undef PEER_DROP_ENUM

/* Names for .status lines: drop_<name>=N. */
extern const char *const peer_drop_names[DROP_MAX];

#define PEER_COUNTER_FIELD(name, comment) atomic_uint_fast64_t name;
struct peer_counters {
	PEER_COUNTERS_TRAFFIC(PEER_COUNTER_FIELD)
	atomic_uint_fast64_t drops[DROP_MAX];
	PEER_COUNTERS_REL(PEER_COUNTER_FIELD)
	PEER_GAUGES_STREAM(PEER_COUNTER_FIELD)
};

/* The node's fabric counters (tp_fabric), and when the last event came. */
struct fabric_counters {
	PEER_COUNTERS_FABRIC(PEER_COUNTER_FIELD)
	PEER_GAUGES_NODE(PEER_COUNTER_FIELD)
	_Atomic int64_t last_event; /* time(), 0: none yet */
};
#undef PEER_COUNTER_FIELD

/* Room for a peer's last_error, in config words. */
#define PEER_ERROR_MAX 128

/* What a node announces about itself in its bootstrap hello. */
struct peer_addr {
	uint32_t qpn;
	uint32_t qkey;
	uint16_t lid;
	uint8_t mtu;	    /* enum ibv_mtu of its port */
	uint8_t link_layer; /* IBV_LINK_LAYER_* */
	union ibv_gid gid;
	uint32_t max_message; /* the largest message it takes; 0: not said */
	uint32_t boot; /* its incarnation: the hello's boot id (hello_decode) */
};

/*
 * The data path's probe (tp_probe.c), under the peer's lock: a session
 * the bootstrap stands up makes the peer joined; it is up only once a
 * ping datagram to it was answered, which proves both directions.
 */
struct peer_probe {
	int joined;	      /* a session stands and its AH is installed */
	int unreachable;      /* joined, and PROBE tries went unanswered */
	int held;	      /* our port is down: no probe until it is back */
	int tries;	      /* pings unanswered since the last start */
	uint32_t token;	      /* the latest ping's, which an answer echoes */
	uint64_t at;	      /* ms: the next ping is due (0: none) */
	uint64_t sent_ms;     /* ms: the latest ping went */
	uint64_t answered_ms; /* ms: we last answered one of its pings */
	/* up, watched (tp_probe_watch): what was sent to it at the last
	 * ping, the answers then, and the pings since none came */
	uint64_t w_sent, w_answers;
	int wtries;
};

/*
 * What a peer holds once it is used: made by peer_use at its first
 * meeting, send, failure or counted event, and kept until the table
 * closes (never moved nor freed before: the counters are read without a
 * lock, and .status and .metrics count on them never going back).  A
 * node that is never used costs its struct peer alone.
 */
struct peer_use {
	uint64_t epoch;	       /* under lock: bumps on every up transition */
	time_t since;	       /* under lock: time of the last up/down change */
	struct peer_addr addr; /* under lock */
	/* under lock; kept while down: the route cache (tp_peer_up) */
	struct ibv_ah *ah;
	enum config_route route_used;	 /* under lock */
	char last_error[PEER_ERROR_MAX]; /* under lock: .status last_error= */
	int64_t last_attempt; /* under lock: wall ms of the last dial or
				 hello; 0: none */
	unsigned fails;	      /* under lock: failed meetings since up */
	/* under lock: the refusal last logged as a warning (FNV-1a of its
	 * words), so that each cause is said once until the peer is met;
	 * 0: none */
	uint32_t refused;
	struct peer_probe probe; /* under lock */
	/* under the transport's rel.lock: where the reliable streams stood
	 * when they were let go after an idle session (tp_rel.c), so that a
	 * meeting of the same two incarnations goes on from there: their
	 * boot ids and the next psn each way; kept 0: none */
	struct {
		int kept;
		uint32_t boot, self, tx, rx;
	} rel_mark;
	struct peer_counters cnt; /* atomics: read without the lock */
};

/* One per configured node: what every node needs, and no more. */
struct peer {
	int idx;     /* index in config nodes */
	uint32_t id; /* wire_node_id(conf->name) */
	const struct config_node *conf;
	int is_local;

	int up;	      /* under lock */
	int last_err; /* under lock: errno of the last failed meeting; 0 */
	pthread_mutex_t lock;
	/* NULL until the peer is first used (peer_use), then the same
	 * until peer_table_close: loaded (acquire) without the lock */
	struct peer_use *_Atomic use;
};

/*
 * What .status says of a peer: up (a bootstrap session stands and a
 * probe datagram was answered), probing (the session stands, no answer
 * yet), unreachable (the session stands, the probes go unanswered),
 * idle (no session, and none failed: not met yet, or its session ended
 * for want of traffic) or down (the last attempt or session failed, or
 * our port is down).
 */
enum peer_state {
	PEER_IDLE,
	PEER_UP,
	PEER_DOWN,
	PEER_PROBING,
	PEER_UNREACHABLE,
};

/* Whether two announced addresses name the same QP (QPN, qkey, LID,
 * MTU, GID). */
int peer_addr_same(const struct peer_addr *a, const struct peer_addr *b);

/* Build one peer per config node; *out is calloc'ed.  Close frees every
 * in-use part too (the transport released their AHs in tp_close). */
int peer_table_open(struct peer **out, const struct config *cfg);
void peer_table_close(struct peer *peers, int n);

/* p's state (under p->lock) and its name in .status. */
enum peer_state peer_state(const struct peer *p);
const char *peer_state_name(enum peer_state st);

/* Whether p is up now (takes p->lock). */
int peer_is_up(struct peer *p);

/* Record why meeting p failed (err > 0, msg), or clear it (err 0); the
 * _locked one under p->lock. */
void peer_set_error(struct peer *p, int err, const char *msg);
void peer_set_error_locked(struct peer *p, int err, const char *msg);

/* An attempt to meet p starts now: a dial, or a hello or announce from
 * it while it is not up (last_attempt= in .status). */
void peer_attempt(struct peer *p);

/*
 * p's in-use part, made now when p has none (any thread, any lock held:
 * made by compare-and-swap, no lock taken); NULL only without memory.
 */
struct peer_use *peer_use(struct peer *p);

/* p's in-use part when it has one, else NULL: for readers. */
static inline struct peer_use *peer_used(const struct peer *p)
{
	return atomic_load_explicit(&((struct peer *)p)->use,
				    memory_order_acquire);
}

/* For reading: p's counters, or zeros for a peer never used (never
 * written through). */
struct peer_counters *peer_counts(const struct peer *p);

/* Add v to p's counter field f, making its in-use part if need be (the
 * count is lost only without memory). */
#define PEER_ADD(p, f, v)                                                      \
	do {                                                                   \
		struct peer_use *peer_add_u_ = peer_use(p);                    \
		if (peer_add_u_)                                               \
			atomic_fetch_add_explicit(&peer_add_u_->cnt.f, (v),    \
						  memory_order_relaxed);       \
	} while (0)

/* Add a drop of reason r to p's counters and to totals. */
void peer_count_drop(struct peer *p, struct peer_counters *totals,
		     enum peer_drop r);

#endif
