/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * MOUNT/all/: one write is one message to every node of the config, this
 * one included.  It arrives where a unicast from this node would, in
 * MOUNT/SENDER/CHAN on every node, so readers need not care how it came.
 *
 * How it goes:
 *   - delivery = datagram everywhere, group joined: one stream of
 *     datagrams to the multicast group (tp_mcast_queue), plus one unicast
 *     copy to ourselves, since our own copy from the group is dropped
 *     (not every device loops one back);
 *   - not joined (multicast = no, or the join failed): one unicast copy
 *     per node that is up, with one doorbell;
 *   - some node has delivery = reliable: one copy per node that is up,
 *     each by its node's delivery; the write is answered once every
 *     reliable copy is acknowledged, with the first error if one failed.
 *
 * Who gets it: a receiver takes datagrams only from a sender it has met
 * (the source filter), and peers are met on demand.  So a write to all/
 * first asks every node that is not up to be met, and waits (parked, as
 * fs_meet.c parks a unicast write) while any of them is still idle:
 * neither up nor failed.  A node that fails (down, connection refused)
 * ends its part of the wait; at peer_timeout the message goes to those
 * up.  Once met, later writes go at once, until sessions idle out.  At
 * 10,000 nodes that first write costs N sessions: docs/scale.md.
 *
 * Threads: FUSE workers (fs_all_send from fs_chan_send), the bootstrap
 * thread and the reaper (through fs_meet.c).  No lock is held across a
 * send; the reliable fan-out answers under fs->lock, as fs_park's write
 * completion does.
 */
#include <errno.h>
#include <stdlib.h>

#include "fs_int.h"

/* A reliable all/ write in flight: answered when its last copy is done. */
struct fs_all_fan {
	struct fs *fs;
	fuse_req_t req;
	size_t len;
	int left; /* copies not done, plus one while they are being sent */
	int err;  /* the first copy's failure, -errno */
};

/* Whether some node is idle, neither up nor failed: an all/ write waits
 * for it (peer locks only, so fs->lock may be held). */
int fs_all_waiting(struct fs *fs)
{
	int i, idle = 0;

	for (i = 0; i < fs->nnodes && !idle; i++) {
		struct peer *p = fs->nodes[i].peer;

		pthread_mutex_lock(&p->lock);
		idle = !p->up && !p->last_err;
		pthread_mutex_unlock(&p->lock);
	}
	return idle;
}

/* Ask every node that is not up to be met (no lock held: the bootstrap's
 * need hook); whether the write must wait for one. */
static int fs_all_meeting(struct fs *fs)
{
	int i;

	for (i = 0; i < fs->nnodes; i++)
		if (!peer_is_up(fs->nodes[i].peer))
			tp_peer_need(fs->tp, fs->nodes[i].peer);
	return fs_all_waiting(fs);
}

/* One copy done: the last one answers the write (under fs->lock). */
static void fs_all_fan_done(void *arg, int status, size_t len)
{
	struct fs_all_fan *fan = arg;
	struct fs *fs = fan->fs;
	int last;

	pthread_mutex_lock(&fs->lock);
	/* a node that went down meanwhile is skipped, as one never up */
	if (status && status != -ENOTCONN && !fan->err)
		fan->err = status;
	last = --fan->left == 0;
	if (last && !fs->stopping) {
		if (fan->err)
			fuse_reply_err(fan->req, -fan->err);
		else
			fuse_reply_write(fan->req, fan->len);
	}
	pthread_mutex_unlock(&fs->lock);
	if (last)
		free(fan);
}

/* Whether some up node said it takes less than size bytes: then no
 * copy may go, or the writer, told EMSGSIZE, would resend the rest. */
static int fs_all_too_big(struct fs *fs, size_t size)
{
	int i, big = 0;

	for (i = 0; i < fs->nnodes && !big; i++) {
		struct peer *p = fs->nodes[i].peer;

		pthread_mutex_lock(&p->lock);
		big = p->up && p->addr.max_message &&
		      size > p->addr.max_message;
		pthread_mutex_unlock(&p->lock);
	}
	return big;
}

/*
 * One copy per node that is up, each by its delivery; a reliable copy
 * holds the answer until its ack.  A node that went down meanwhile is
 * skipped, as one that was never up.
 */
static void fs_all_copies(struct fs *fs, fuse_req_t req, const char *name,
			  const char *buf, size_t size)
{
	struct fs_all_fan *fan;
	int i, rc;

	/* our own max_message is tp_msg_check's: every copy fails alike */
	if (fs_all_too_big(fs, size)) {
		fuse_reply_err(req, EMSGSIZE);
		return;
	}
	fan = calloc(1, sizeof(*fan));
	if (!fan) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fan->fs = fs;
	fan->req = req;
	fan->len = size;
	fan->left = 1;
	for (i = 0; i < fs->nnodes; i++) {
		struct peer *p = fs->nodes[i].peer;

		if (!peer_is_up(p))
			continue;
		pthread_mutex_lock(&fs->lock);
		fan->left++;
		pthread_mutex_unlock(&fs->lock);
		if (tp_peer_reliable(fs->tp, p)) {
			rc = tp_send_async(fs->tp, p, name, buf, size, 0,
					   fs_all_fan_done, fan);
			if (!rc)
				continue; /* done answers for this copy */
		} else {
			rc = tp_queue(fs->tp, p, name, buf, size);
		}
		fs_all_fan_done(fan, rc, size);
	}
	fs_all_fan_done(fan, 0, size);
	tp_flush(fs->tp);
}

/* Whether every node takes datagrams: only then may the group carry it. */
static int fs_all_datagram_only(struct fs *fs)
{
	int i;

	for (i = 0; i < fs->nnodes; i++)
		if (tp_peer_reliable(fs->tp, fs->nodes[i].peer))
			return 0;
	return 1;
}

/* One stream to the group and our own copy; answered before the
 * doorbell, as a unicast datagram write is. */
static int fs_all_group(struct fs *fs, fuse_req_t req, const char *name,
			const char *buf, size_t size)
{
	struct peer *self = fs->nodes[fs->cfg->local].peer;
	int rc;

	rc = tp_mcast_queue(fs->tp, name, buf, size);
	if (rc == -ENOTCONN)
		return rc; /* the group went: unicast copies */
	if (!rc)
		rc = tp_queue(fs->tp, self, name, buf, size);
	fs_chan_answer(fs, req, rc, size);
	return 0;
}

/* Send a write to all/ (see the top of this file); -ENOTCONN, req not
 * answered, while a node is being met and force is not set. */
int fs_all_send(struct fs *fs, fuse_req_t req, const char *name,
		const char *buf, size_t size, int force)
{
	struct tp_mcast_info mi;

	if (fs_all_meeting(fs) && !force)
		return -ENOTCONN;
	if (fs_all_datagram_only(fs)) {
		tp_mcast_get(fs->tp, &mi);
		if (mi.state == TP_MCAST_JOINED &&
		    !fs_all_group(fs, req, name, buf, size))
			return 0;
	}
	fs_all_copies(fs, req, name, buf, size);
	return 0;
}
