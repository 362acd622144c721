/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * MOUNT/all/: one write is one message to every node of the config, this
 * one included.  It arrives where a unicast from this node would, in
 * MOUNT/SENDER/CHAN on every node, so readers need not care how it came.
 * This file says who gets it and how; the write itself, its wait and its
 * one reply, is fs_write.c's (a parent write with one child per copy).
 *
 * How it goes:
 *   - delivery = datagram everywhere, group joined: one stream of
 *     datagrams to the multicast group (tp_mcast_queue), plus one unicast
 *     copy to ourselves, since our own copy from the group is dropped
 *     (not every device loops one back): fs_all_group;
 *   - not joined (multicast = no, or the join failed): one unicast copy
 *     per node that is up, with one doorbell;
 *   - some node has delivery = reliable: one copy per node that is up,
 *     each by its node's delivery; the write is answered once every
 *     reliable copy is acknowledged, with the first error if one failed.
 *
 * Who gets it: a receiver takes datagrams only from a sender it has met
 * (the source filter), and peers are met on demand.  So a write to all/
 * first asks every node that is not up to be met (fs_all_meeting), and
 * waits, MEETING as a unicast write to a peer not met does, while any of
 * them is still idle: neither up nor failed (fs_all_waiting).  A node
 * that fails (down, connection refused) ends its part of the wait; at
 * peer_timeout the message goes to those up.  Once met, later writes go
 * at once, until sessions idle out.  At 10,000 nodes that first write
 * costs N sessions: docs/scale.md.
 *
 * Threads: FUSE workers, the bootstrap thread and the reaper, through
 * fs_write.c.  Only peer locks are taken here, so fs_all_waiting may run
 * under fs->lock; no lock is held across a send.
 */
#include <errno.h>

#include "fs_int.h"

/* Whether some node is idle, neither up nor failed: an all/ write waits
 * for it (peer locks only, so fs->lock may be held). */
int fs_all_waiting(struct fs *fs)
{
	int i, idle = 0;

	for (i = 0; i < fs->nnodes && !idle; i++) {
		struct peer *p = &fs->peers[i];

		pthread_mutex_lock(&p->lock);
		idle = !p->up && !p->last_err;
		pthread_mutex_unlock(&p->lock);
	}
	return idle;
}

/* Ask every node that is not up to be met (no lock held: the bootstrap's
 * need hook); whether the write must wait for one. */
int fs_all_meeting(struct fs *fs)
{
	int i;

	for (i = 0; i < fs->nnodes; i++)
		if (!peer_is_up(&fs->peers[i]))
			tp_peer_need(fs->tp, &fs->peers[i]);
	return fs_all_waiting(fs);
}

/* Whether some up node said it takes less than size bytes: then no
 * copy may go, or the writer, told EMSGSIZE, would resend the rest. */
int fs_all_too_big(struct fs *fs, size_t size)
{
	int i, big = 0;

	for (i = 0; i < fs->nnodes && !big; i++) {
		struct peer *p = &fs->peers[i];
		struct peer_use *u = peer_used(p);

		pthread_mutex_lock(&p->lock);
		big = p->up && u && u->addr.max_message &&
		      size > u->addr.max_message;
		pthread_mutex_unlock(&p->lock);
	}
	return big;
}

/* Whether every node takes datagrams: only then may the group carry it. */
static int fs_all_datagram_only(struct fs *fs)
{
	int i;

	for (i = 0; i < fs->nnodes; i++)
		if (tp_peer_reliable(fs->tp, &fs->peers[i]))
			return 0;
	return 1;
}

/* One stream to the group and our own copy, when every node takes
 * datagrams and the group is joined: 0 or -errno of that send, which the
 * write is answered with before the doorbell, as a unicast datagram
 * write is; 1 when the group cannot carry it (copies instead). */
int fs_all_group(struct fs *fs, const char *name, const char *buf, size_t size)
{
	struct peer *self = &fs->peers[fs->cfg->local];
	struct tp_mcast_info mi;
	int rc;

	if (!fs_all_datagram_only(fs))
		return 1;
	tp_mcast_get(fs->tp, &mi);
	if (mi.state != TP_MCAST_JOINED)
		return 1;
	rc = tp_mcast_queue(fs->tp, name, buf, size);
	if (rc == -ENOTCONN)
		return 1; /* the group went: unicast copies */
	if (!rc)
		rc = tp_queue(fs->tp, self, name, buf, size);
	return rc;
}
