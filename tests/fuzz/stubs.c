/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Stand-ins for what bootstrap.c's session code calls in the transport
 * and the router, so that its pure parts (hello_encode, hello_decode, the
 * proofs) link without verbs: the fuzz targets and the seed generator
 * never reach them, and trap if they ever do.
 */
#include "route.h"
#include "transport.h"

/* Stub: the decoder never resolves routes. */
int route_resolve(struct route *r, const struct config_node *node,
		  const struct peer_addr *remote, struct ibv_ah **ah)
{
	__builtin_trap();
}

/* Stub: nor asks the transport anything. */
const struct tp_info *tp_info(const struct tp *tp)
{
	__builtin_trap();
}

/* Stub: nor brings a peer up. */
void tp_peer_up(struct tp *tp, struct peer *p, const struct peer_addr *addr,
		struct ibv_ah *ah, enum config_route route)
{
	__builtin_trap();
}

/* Stub: nor expects one. */
void tp_peer_expect(struct tp *tp, struct peer *p, const struct peer_addr *addr)
{
	__builtin_trap();
}

/* Stub: nor takes one down. */
void tp_peer_down(struct tp *tp, struct peer *p)
{
	__builtin_trap();
}
