/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The fabric's start-up order, and why it is this one: the transport
 * comes first, since the resolver makes its AHs on the transport's PD and
 * the bootstrap announces the transport's QPN; MOUNT/all/'s group is
 * joined through the resolver, before any peer can send to it; the
 * bootstrap (TCP sessions, or with bootstrap = multicast the announces
 * on that group) comes last, since the first hello it answers resolves a
 * route and marks a peer up on the transport.  Teardown runs in reverse, so
 * that no session can reach a closed resolver or transport.
 */
#include <errno.h>
#include <stdlib.h>

#include "announce.h"
#include "bootstrap.h"
#include "fabric.h"
#include "mcast.h"
#include "route.h"

struct fabric {
	struct tp *tp;
	struct route *rt;
	struct mcast *mc;
	struct bootstrap *bs;
	struct announce *ann; /* bootstrap = multicast: in bs's place */
};

/* TCP sessions, or announces on the group (mcast_open made sure it is
 * joined: bootstrap = multicast has no fallback). */
static int fabric_bootstrap_open(struct fabric *f, const struct config *cfg,
				 struct peer *peers, struct cert *cert)
{
	if (cfg->bootstrap == BOOTSTRAP_TCP)
		return bootstrap_open(&f->bs, cfg, peers, cert, f->tp, f->rt);
	return ann_open(&f->ann, cfg, peers, cert, f->tp, f->rt);
}

/* The device is going (the transport's heal hook): what holds it above
 * the transport, the group's cm id, goes first. */
static void fabric_gone(void *arg)
{
	struct fabric *f = arg;

	mcast_gone(f->mc, "the device is gone");
}

/* The device is back with a new QPN: the group first (bootstrap =
 * multicast announces on it), then every peer met is told. */
static void fabric_back(void *arg)
{
	struct fabric *f = arg;

	mcast_back(f->mc);
	if (f->bs)
		bootstrap_retell(f->bs);
	if (f->ann)
		ann_retell(f->ann);
}

static const struct tp_heal_ops fabric_heal = {fabric_gone, fabric_back};

/* fabric.h */
void fabric_reloaded(struct fabric *f)
{
	ann_reload(f->ann);
}

/* Open in order; on failure close what was opened, in reverse. */
int fabric_open(struct fabric **out, const struct config *cfg,
		struct peer *peers, struct cert *cert, const struct tp_ops *ops,
		void *arg)
{
	struct fabric *f;
	int rc;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	rc = tp_open(&f->tp, cfg, peers, ops, arg);
	if (rc)
		goto out_free;
	rc = route_open(&f->rt, f->tp, cfg);
	if (rc)
		goto out_tp;
	rc = mcast_open(&f->mc, cfg, f->tp, f->rt);
	if (rc)
		goto out_route;
	rc = fabric_bootstrap_open(f, cfg, peers, cert);
	if (rc)
		goto out_mcast;
	tp_set_heal(f->tp, &fabric_heal, f);
	*out = f;
	return 0;
out_mcast:
	mcast_close(f->mc);
out_route:
	route_close(f->rt);
out_tp:
	tp_close(f->tp);
out_free:
	free(f);
	return rc;
}

/* Sessions first (they take peers down), then the resolver, then verbs. */
void fabric_close(struct fabric *f)
{
	if (!f)
		return;
	tp_set_heal(f->tp, NULL, NULL);
	bootstrap_close(f->bs);
	ann_close(f->ann);
	mcast_close(f->mc);
	route_close(f->rt);
	tp_close(f->tp);
	free(f);
}

/* The transport the fabric opened. */
struct tp *fabric_tp(const struct fabric *f)
{
	return f->tp;
}
