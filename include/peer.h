/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A peer: one node of the config as this daemon sees it — its wire id, the
 * address it announced over bootstrap, the address handle that reaches it,
 * and its counters.  The local node is a peer too: sending to yourself
 * loops through the HCA like any other send.
 */
#ifndef IBFS_PEER_H
#define IBFS_PEER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "config.h"

enum peer_drop {
	DROP_NO_RECV_BUF,   /* receive queue ran dry (seen as RNR/overrun) */
	DROP_MALFORMED,	    /* bad header, length or completion status */
	DROP_UNKNOWN_SRC,   /* src_qp + source GID match no up peer */
	DROP_REASM_TIMEOUT, /* a message never completed */
	DROP_QUEUE_FULL,    /* the channel queue or channel count limit */
	DROP_DUPLICATE,	    /* fragment seen twice */
	DROP_TOO_BIG,	    /* beyond max_message */
	DROP_MAX
};

/* Names for .status lines: drop_<name>=N. */
extern const char *const peer_drop_names[DROP_MAX];

struct peer_counters {
	atomic_uint_fast64_t msgs_tx, bytes_tx;
	atomic_uint_fast64_t msgs_rx, bytes_rx;
	atomic_uint_fast64_t ah_resolutions;
	atomic_uint_fast64_t drops[DROP_MAX];
	/* delivery = reliable (zero otherwise) */
	atomic_uint_fast64_t rel_window;   /* datagrams allowed in flight */
	atomic_uint_fast64_t rel_inflight; /* sent, not yet acked */
	atomic_uint_fast64_t rel_retrans;  /* datagrams sent again */
	atomic_uint_fast64_t rel_dups;	   /* duplicates dropped */
	atomic_uint_fast64_t rel_timeouts; /* peer silent: writes failed */
	atomic_uint_fast64_t rel_probes;   /* tail probes sent */
	atomic_uint_fast64_t rel_rtos;	   /* retransmission timer fired */
	atomic_uint_fast64_t rel_srtt_ms;  /* smoothed round trip */
	atomic_uint_fast64_t rel_rto_ms;   /* retransmission timeout now */
};

/* What a node announces about itself in its bootstrap hello. */
struct peer_addr {
	uint32_t qpn;
	uint32_t qkey;
	uint16_t lid;
	uint8_t mtu;	    /* enum ibv_mtu of its port */
	uint8_t link_layer; /* IBV_LINK_LAYER_* */
	union ibv_gid gid;
	uint32_t max_message; /* the largest message it takes; 0: not said */
};

struct peer {
	int idx; /* index in config nodes */
	const struct config_node *conf;
	uint32_t id; /* wire_node_id(conf->name) */
	int is_local;

	pthread_mutex_t lock; /* guards everything below */
	int up;
	uint64_t epoch; /* bumps on every up transition */
	time_t since;	/* time of the last up/down change */
	struct peer_addr addr;
	struct ibv_ah *ah;
	enum config_route route_used;

	struct peer_counters cnt; /* atomics: read without the lock */
};

/* Build one peer per config node; *out is calloc'ed. */
int peer_table_open(struct peer **out, const struct config *cfg);
void peer_table_close(struct peer *peers, int n);

/* Add a drop of reason r to p's counters and to totals. */
void peer_count_drop(struct peer *p, struct peer_counters *totals,
		     enum peer_drop r);

#endif
