/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * MOUNT/all/'s multicast group on the transport's side: our one UD QP
 * attached to the group, the group's AH on our PD, and the sends to it.
 * rdma_cm's join (mcast.c) attaches only a QP that rdma_cm made, and ours
 * is plain verbs, so the attach is done here with the MGID and MLID the
 * join event gave.  Receiving is tp_recv.c's: a group datagram is matched
 * to its sender by the source filter, as any other.
 *
 * Threads: main installs and removes (start and stop); senders read the
 * AH under ring.lock (tp_ring.c's tp_dest_get); .status reads the rest
 * under the same lock.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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
	tp->mcast.ah = ah;
	tp->mcast.mgid = attr->grh.dgid;
	tp->mcast.mlid = attr->dlid;
	tp->mcast.attached = 1;
	tp->mcast.state = TP_MCAST_JOINED;
	tp->mcast.reason[0] = '\0';
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
	pthread_mutex_unlock(&tp->ring.lock);
	if (attached && ibv_detach_mcast(tp->dev.qp, &mgid, mlid))
		log_warnx("multicast: ibv_detach_mcast failed");
}

/* tp_close, before the QP goes: a group still attached is left. */
void tp_mcast_close(struct tp *tp)
{
	if (tp->mcast.attached)
		tp_mcast_remove(tp, TP_MCAST_OFF, "stopped");
}

/* A copy of the group's state. */
void tp_mcast_get(struct tp *tp, struct tp_mcast_info *out)
{
	pthread_mutex_lock(&tp->ring.lock);
	out->state = tp->mcast.state;
	snprintf(out->reason, sizeof(out->reason), "%s", tp->mcast.reason);
	out->mgid = tp->mcast.mgid;
	out->mlid = tp->mcast.mlid;
	pthread_mutex_unlock(&tp->ring.lock);
}

/*
 * Where a send to the group goes (under ring.lock): its AH, the multicast
 * QPN and our own qkey, which every member's QP has; our own port's MTU
 * and max_message, since every node of one config shares them.
 */
int tp_mcast_dest(struct tp *tp, struct tp_dest *d)
{
	if (!tp->mcast.ah)
		return -ENOTCONN;
	d->ah = tp->mcast.ah;
	d->qpn = TP_MCAST_QPN;
	d->qkey = tp->cfg->qkey;
	d->mtu = tp->info.mtu_bytes;
	d->max_message = tp->cfg->max_message;
	return 0;
}

/* One message to the group: tp_ring_queue with no peer. */
int tp_mcast_queue(struct tp *tp, const char *chan, const void *buf, size_t len)
{
	return tp_ring_queue(tp, NULL, chan, buf, len);
}
