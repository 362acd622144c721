/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * MOUNT/all/'s multicast group on the transport's side: our one UD QP
 * attached to the group, the group's AH on our PD, and the sends to it.
 * rdma_cm's join (mcast.c) attaches only a QP that rdma_cm made, and ours
 * is plain verbs, so the attach is done here with the MGID and MLID the
 * join event gave.  Receiving is tp_recv.c's: a group datagram is matched
 * to its sender by the source filter, as any other.
 *
 * Threads: mcast.c installs and removes, main at start and stop, the
 * group's own thread when it rejoins after a fabric event (which the
 * progress thread reports through the rejoin hook, tp_mcast_rejoin);
 * senders read the AH under ring.lock (tp_ring.c's tp_dest_get);
 * tp_mcast_get reads under info_lock, a leaf the writers take inside
 * ring.lock.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "tp_int.h"

/* Attach, then make the AH; undo the attach when the AH fails. */
int tp_mcast_install(struct tp *tp, const struct ibv_ah_attr *attr)
{
	struct ibv_ah *ah;
	int rc;

	rc = ibv_attach_mcast(tp->dev.qp, &attr->grh.dgid, attr->dlid);
	if (rc) {
		rc = rc > 0 ? -rc : -EIO;
		log_warnx("multicast: ibv_attach_mcast: %s", strerror(-rc));
		return rc;
	}
	ah = ibv_create_ah(tp->dev.pd, (struct ibv_ah_attr *)attr);
	if (!ah) {
		rc = errno ? -errno : -EIO;
		log_warn("multicast: ibv_create_ah for the group");
		ibv_detach_mcast(tp->dev.qp, &attr->grh.dgid, attr->dlid);
		return rc;
	}
	pthread_mutex_lock(&tp->ring.lock);
	pthread_mutex_lock(&tp->mcast.info_lock);
	tp->mcast.ah = ah;
	tp->mcast.mgid = attr->grh.dgid;
	tp->mcast.mlid = attr->dlid;
	tp->mcast.attached = 1;
	tp->mcast.state = TP_MCAST_JOINED;
	tp->mcast.reason[0] = '\0';
	pthread_mutex_unlock(&tp->mcast.info_lock);
	pthread_mutex_unlock(&tp->ring.lock);
	return 0;
}

/* Detach (sends to the group stop first) and retire the AH. */
void tp_mcast_remove(struct tp *tp, enum tp_mcast_state st, const char *reason)
{
	union ibv_gid mgid;
	uint16_t mlid;
	int attached;

	pthread_mutex_lock(&tp->ring.lock);
	pthread_mutex_lock(&tp->mcast.info_lock);
	attached = tp->mcast.attached;
	mgid = tp->mcast.mgid;
	mlid = tp->mcast.mlid;
	tp->mcast.attached = 0;
	tp->mcast.state = st;
	snprintf(tp->mcast.reason, sizeof(tp->mcast.reason), "%s",
		 reason ? reason : "");
	if (tp->mcast.ah)
		tp_ring_retire_ah(tp, tp->mcast.ah);
	tp->mcast.ah = NULL;
	pthread_mutex_unlock(&tp->mcast.info_lock);
	pthread_mutex_unlock(&tp->ring.lock);
	if (attached && ibv_detach_mcast(tp->dev.qp, &mgid, mlid))
		log_warnx("multicast: ibv_detach_mcast failed");
}

/* Lower the group's bounds to what addr, a member's, takes. */
static void tp_mcast_take(struct tp *tp, const struct peer_addr *addr)
{
	size_t mtu = tp_addr_mtu(addr);

	if (mtu && (!tp->mcast.mtu_cap || mtu < tp->mcast.mtu_cap))
		tp->mcast.mtu_cap = mtu;
	if (addr->max_message &&
	    (!tp->mcast.max_cap || addr->max_message < tp->mcast.max_cap))
		tp->mcast.max_cap = addr->max_message;
}

/*
 * A member came up (under ring.lock): the group's datagrams must fit its
 * port, and its messages its max_message, at once.  It may have come
 * back with larger ones than it had, so the bounds are stale too.
 */
void tp_mcast_fit(struct tp *tp, const struct peer_addr *addr)
{
	tp_mcast_take(tp, addr);
	tp->mcast.stale = 1;
}

/* A member left (tp_peer_down): its bounds need not hold any more. */
void tp_mcast_left(struct tp *tp)
{
	pthread_mutex_lock(&tp->ring.lock);
	tp->mcast.stale = 1;
	pthread_mutex_unlock(&tp->ring.lock);
}

/*
 * The bounds from the members as they are now (under ring.lock), once
 * stale: once per change of members at most, never per message, so that
 * one hello's small max_message or mtu lasts only while it stands.
 */
static void tp_mcast_refit(struct tp *tp)
{
	int i;

	if (!tp->mcast.stale)
		return;
	tp->mcast.mtu_cap = 0;
	tp->mcast.max_cap = 0;
	for (i = 0; i < tp->npeers; i++) {
		struct peer *p = &tp->peers[i];
		struct peer_use *u = peer_used(p);

		if (!u)
			continue;
		pthread_mutex_lock(&p->lock);
		if (u->ah && (p->up || u->probe.joined))
			tp_mcast_take(tp, &u->addr);
		pthread_mutex_unlock(&p->lock);
	}
	tp->mcast.stale = 0;
}

/* tp_close, before the QP goes: a group still attached is left. */
void tp_mcast_close(struct tp *tp)
{
	if (tp->mcast.attached)
		tp_mcast_remove(tp, TP_MCAST_OFF, "stopped");
}

/* Joined again after the group was lost: installed, and when. */
int tp_mcast_reinstall(struct tp *tp, const struct ibv_ah_attr *attr)
{
	int rc = tp_mcast_install(tp, attr);

	if (!rc) {
		pthread_mutex_lock(&tp->mcast.info_lock);
		tp->mcast.last_rejoin = time(NULL);
		pthread_mutex_unlock(&tp->mcast.info_lock);
	}
	return rc;
}

/* Who rejoins the group; see transport.h. */
void tp_set_rejoin(struct tp *tp, void (*rejoin)(void *arg, const char *why),
		   void *arg)
{
	pthread_mutex_lock(&tp->mcast.rejoin_lock);
	tp->mcast.rejoin = rejoin;
	tp->mcast.rejoin_arg = arg;
	pthread_mutex_unlock(&tp->mcast.rejoin_lock);
}

/* A fabric event may have cost our membership: have it joined again
 * (progress thread, no lock held).  1 when somebody was told. */
int tp_mcast_rejoin(struct tp *tp, const char *why)
{
	int told = 0;

	pthread_mutex_lock(&tp->mcast.rejoin_lock);
	if (tp->mcast.rejoin) {
		tp->mcast.rejoin(tp->mcast.rejoin_arg, why);
		told = 1;
	}
	pthread_mutex_unlock(&tp->mcast.rejoin_lock);
	return told;
}

/*
 * A copy of the group's state, under info_lock alone: it changes while
 * the file system is mounted when the group is rejoined, and a .status
 * rendering or all/'s choice reads it under fs->lock, where no transport
 * lock but a leaf may be taken (fs_int.h).
 */
void tp_mcast_get(struct tp *tp, struct tp_mcast_info *out)
{
	pthread_mutex_lock(&tp->mcast.info_lock);
	out->state = tp->mcast.state;
	snprintf(out->reason, sizeof(out->reason), "%s", tp->mcast.reason);
	out->mgid = tp->mcast.mgid;
	out->mlid = tp->mcast.mlid;
	out->last_rejoin = tp->mcast.last_rejoin;
	pthread_mutex_unlock(&tp->mcast.info_lock);
}

/* One message to the group: tp_queue with no peer, within what the
 * members take now. */
int tp_mcast_queue(struct tp *tp, const char *chan, const void *buf, size_t len)
{
	pthread_mutex_lock(&tp->ring.lock);
	tp_mcast_refit(tp);
	pthread_mutex_unlock(&tp->ring.lock);
	return tp_queue(tp, NULL, chan, buf, len);
}
