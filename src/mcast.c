/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Joining MOUNT/all/'s group at start, leaving it at stop.  Every node
 * joins at start, not at its first write to all/: a receiver must be a
 * member before anybody sends.  That is one MCMemberRecord join per node
 * and boot on InfiniBand, one IGMP report on RoCE.  When the device goes
 * (tp_heal.c) the group is left, and joined again once it is back.  A
 * group lost otherwise (an SM re-registration) is not rejoined yet: see
 * docs/multicast.md.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

#include "log.h"
#include "mcast.h"

struct mcast {
	struct tp *tp;
	struct route *rt;
	const struct config *cfg;
	/* Main at open and close; the progress thread while the device is
	 * away (mcast_gone, mcast_back): under lock */
	pthread_mutex_t lock;
	struct rdma_cm_id *id;	      /* the membership; NULL when not joined */
	const struct sockaddr *group; /* the config's mcast_sa */
	int lost;		      /* left when the device went */
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

/* all/ without the group: one unicast copy per peer. */
static void mcast_fallback(struct mcast *m, const char *why)
{
	tp_mcast_remove(m->tp, TP_MCAST_FALLBACK, why);
	log_warnx("multicast: mcast_group %s cannot be joined (%s); all/ "
		  "sends one unicast copy per peer",
		  m->cfg->mcast_group, why);
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
	m->cfg = cfg;
	pthread_mutex_init(&m->lock, NULL);
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
		pthread_mutex_destroy(&m->lock);
		free(m);
		*out = NULL;
		return rc;
	}
	mcast_fallback(m, why);
	return 0;
}

/* The QP leaves before the membership does, so no datagram of the group
 * arrives for a QP the device no longer knows there. */
void mcast_close(struct mcast *m)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	if (m->id) {
		tp_mcast_remove(m->tp, TP_MCAST_OFF, "stopped");
		route_leave(m->rt, m->id, m->group);
	}
	pthread_mutex_unlock(&m->lock);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* The device is going: detach and leave, so that rdma_cm's removal need
 * not wait for our id. */
void mcast_gone(struct mcast *m, const char *why)
{
	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	if (m->id) {
		tp_mcast_remove(m->tp, TP_MCAST_FALLBACK, why);
		route_leave(m->rt, m->id, m->group);
		m->id = NULL;
		m->lost = 1;
	}
	pthread_mutex_unlock(&m->lock);
}

/* The device is back: join again what mcast_gone left. */
void mcast_back(struct mcast *m)
{
	char why[128];

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	if (m->lost && !mcast_join(m, m->cfg, why, sizeof(why)))
		log_info("multicast: joined mcast_group %s again",
			 m->cfg->mcast_group);
	else if (m->lost)
		mcast_fallback(m, why);
	m->lost = 0;
	pthread_mutex_unlock(&m->lock);
}
