/*
 * Bootstrap: nodes tell each other their QPN, qkey, LID, GID and MTU over
 * TCP.  Each daemon listens on its own endpoint and connects to every other
 * node, retrying with backoff, so nodes start in any order.  The outgoing
 * session to a peer is its liveness: while it stands the peer is up; when
 * it drops the peer is marked down, and when a new hello arrives (a restart,
 * a new QPN) its address is resolved again.
 */
#ifndef IBFS_BOOTSTRAP_H
#define IBFS_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "peer.h"
#include "route.h"
#include "transport.h"

#define HELLO_VERSION 1
#define HELLO_MAGIC 0x49424848u /* "IBHH" */

/* The versioned binary hello, fixed layout, big-endian on the wire. */
struct hello {
	uint16_t version;
	char name[CONFIG_NAME_MAX];
	uint8_t delivery;	/* enum config_delivery */
	struct peer_addr addr;
};

#define HELLO_WIRE_LEN 112 /* encoded size; see bootstrap.c */

/* Encode h into buf (HELLO_WIRE_LEN bytes); returns bytes written. */
size_t hello_encode(const struct hello *h, void *buf);
/* Decode and check magic, version and name; -EBADMSG / -EPROTO. */
int hello_decode(struct hello *h, const void *buf, size_t len);

struct bootstrap;

/* Listen, connect to every other node, and bring the local peer up. */
int bootstrap_open(struct bootstrap **out, const struct config *cfg,
		   struct peer *peers, struct tp *tp, struct route *rt);
void bootstrap_close(struct bootstrap *b);

#endif
