/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Joining MOUNT/all/'s group at start, leaving it at stop.  Every node
 * joins at start, not at its first write to all/: a receiver must be a
 * member before anybody sends.  That is one MCMemberRecord join per node
 * and boot on InfiniBand, one IGMP report on RoCE.  A group lost later
 * (an SM re-registration) is not rejoined yet: see docs/multicast.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

#include "log.h"
#include "mcast.h"

struct mcast {
	struct tp *tp;
	struct route *rt;
	struct rdma_cm_id *id;	      /* the membership; NULL when not joined */
	const struct sockaddr *group; /* the config's mcast_sa */
};

/* Join and attach; the reason of a failure in why. */
static int mcast_join(struct mcast *m, const struct config *cfg, char *why,
		      size_t whylen)
{
	struct ibv_ah_attr attr;
	int rc;

	m->group = (const struct sockaddr *)&cfg->mcast_sa;
	rc = route_join(m->rt, m->group, &m->id, &attr, why, whylen);
	if (rc)
		return rc;
	rc = tp_mcast_install(m->tp, &attr);
	if (rc) {
		snprintf(why, whylen, "attaching the QP: %s", strerror(-rc));
		route_leave(m->rt, m->id, m->group);
		m->id = NULL;
	}
	return rc;
}

/* Join per multicast = auto|yes|no (see mcast.h). */
int mcast_open(struct mcast **out, const struct config *cfg, struct tp *tp,
	       struct route *rt)
{
	struct mcast *m = calloc(1, sizeof(*m));
	char why[128];
	int rc;

	if (!m)
		return -ENOMEM;
	m->tp = tp;
	m->rt = rt;
	*out = m;
	if (cfg->multicast == MCAST_NO) {
		tp_mcast_remove(tp, TP_MCAST_OFF, "multicast = no");
		return 0;
	}
	rc = mcast_join(m, cfg, why, sizeof(why));
	if (!rc) {
		log_info("multicast: joined mcast_group %s", cfg->mcast_group);
		return 0;
	}
	/* bootstrap = multicast announces on the group: no fallback */
	if (cfg->multicast == MCAST_YES || cfg->bootstrap != BOOTSTRAP_TCP) {
		log_warnx("%s, but mcast_group %s is not joined: %s",
			  cfg->multicast == MCAST_YES ? "multicast = yes"
						      : "bootstrap = multicast",
			  cfg->mcast_group, why);
		free(m);
		*out = NULL;
		return rc;
	}
	tp_mcast_remove(tp, TP_MCAST_FALLBACK, why);
	log_warnx("multicast: mcast_group %s cannot be joined (%s); all/ "
		  "sends one unicast copy per peer",
		  cfg->mcast_group, why);
	return 0;
}

/* The QP leaves before the membership does, so no datagram of the group
 * arrives for a QP the device no longer knows there. */
void mcast_close(struct mcast *m)
{
	if (!m)
		return;
	if (m->id) {
		tp_mcast_remove(m->tp, TP_MCAST_OFF, "stopped");
		route_leave(m->rt, m->id, m->group);
	}
	free(m);
}
