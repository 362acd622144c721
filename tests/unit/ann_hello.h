/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A hello as the announce tests' nodes send it (test_announce_auth.c,
 * test_announce_trust.c): a name at a QPN, its GID and boot id
 * following the QPN, so that each QPN is another address.
 */
#ifndef IBFS_ANN_HELLO_H
#define IBFS_ANN_HELLO_H

#include <string.h>

#include "announce.h"

/* A hello for name at qpn, boot id given. */
static void hello_of(struct hello *h, const char *name, uint32_t qpn)
{
	memset(h, 0, sizeof(*h));
	h->version = HELLO_VERSION;
	strcpy(h->name, name);
	h->delivery = DELIVERY_DATAGRAM;
	h->addr.qpn = qpn;
	h->addr.qkey = 0x1b1f5000;
	h->addr.mtu = IBV_MTU_1024;
	h->addr.gid.raw[15] = (uint8_t)qpn;
	h->addr.boot = 0x1000 + qpn;
}

#endif
