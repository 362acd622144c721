/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fabric: the verbs transport, the address resolver, the multicast
 * group and the bootstrap, opened in that order and closed in reverse.  The
 * daemon (main.c) and udchat both start exactly this between their peer table
 * and their own work, so it is written once, here.
 */
#ifndef IBFS_FABRIC_H
#define IBFS_FABRIC_H

#include "cert.h"
#include "config.h"
#include "peer.h"
#include "transport.h"

struct fabric;

/*
 * tp_open (with ops and arg: see tp_ops), route_open, mcast_open,
 * bootstrap_open (or ann_open, with bootstrap = multicast; then a group
 * not joined is -ENETUNREACH).
 * cert (with ca; else NULL) is the bootstrap's, and with peers (cfg->nnodes
 * of them) must outlive the fabric.  0, or -errno
 * with nothing left open.
 */
int fabric_open(struct fabric **out, const struct config *cfg,
		struct peer *peers, struct cert *cert, const struct tp_ops *ops,
		void *arg);

/* bootstrap_close (ann_close), mcast_close, route_close, tp_close; f may be
 * NULL. */
void fabric_close(struct fabric *f);

/* The certificate files were read again (SIGHUP's thread): the announce
 * thread re-proves the nodes up (ann_reload); nothing under tcp, whose
 * next handshake checks. */
void fabric_reloaded(struct fabric *f);

/* The transport: for sends, its info and its counters. */
struct tp *fabric_tp(const struct fabric *f);

#endif
