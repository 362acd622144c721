/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A write(2) to a channel, from the request to its one reply.  Most
 * writes finish at once: a datagram to a peer that is up is answered
 * before the doorbell, and needs no object.  A write that may wait is
 * one struct fs_write, in one of these states (docs/architecture.md
 * draws them; fs_write_set moves it):
 *
 *   NEW      held by the thread sending it, on no list.
 *   MEETING  its peer is not up yet (peers are met on demand: the send
 *            that found it down asked the bootstrap to dial it), or, for
 *            all/, some node is still idle.  It holds a copy of the
 *            message, on fs->writes, holding no FUSE thread, until the
 *            peer is up (fs_peer_up sends it), peer_timeout passes (the
 *            reaper fails it: ENOTCONN, or EHOSTUNREACH when the peer's
 *            address or route would not resolve; all/ goes to the nodes
 *            up) or a signal comes (EINTR, nothing sent).
 *   ACK      handed to the transport with a completion: a reliable write
 *            waits for the peer's ack (fs_write_done answers it); an all/
 *            write waits for its children, one reliable copy per node
 *            up, and is answered by the last, with the first error.
 *   DONE     answered, through fs_write_reply and nowhere else; freed.
 *
 * An all/ copy (a child: parent set) answers nothing itself.  So
 * `ibfs ... && echo hi > MNT/beta/chat` works from a cold start, Ctrl-C on
 * one that waits for a dead peer returns at once, and the worker thread
 * never waits (a writer to itself would starve its own reader).
 *
 * Threads: FUSE workers (fs_write_start), the bootstrap thread
 * (fs_peer_up, fs_peer_failed), the reaper (fs_write_due, fs_write_fail),
 * and wherever the transport completes a reliable send (fs_write_done:
 * the progress thread, inside tp_send_async, the bootstrap thread,
 * tp_close).  Locks: fs->lock guards fs->writes and every field marked so
 * in struct fs_write; a peer's up flag and last error are read under its
 * own lock, inside fs->lock (fs_int.h's order).  No lock is held across a
 * send: a completion may run inside tp_send_async and takes fs->lock.
 * Replies go out with no lock held, but a completion's, which answers
 * under fs->lock so that a stop cannot pass it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs_int.h"
#include "util.h"

/* Where a write is (see the top of this file and fs_write_set). */
enum fs_write_state {
	FS_WRITE_NEW,	  /* held by the thread sending it, on no list */
	FS_WRITE_MEETING, /* on fs->writes, until its peer is up */
	FS_WRITE_ACK,	  /* with the transport, until its completion */
	FS_WRITE_DONE,	  /* answered (or a copy counted): freed next */
};

struct fs_write {
	TAILQ_ENTRY(fs_write) link; /* fs->writes while MEETING (fs->lock) */
	struct fs *fs;
	struct fs_write *parent; /* an all/ copy's write: it answers */
	fuse_req_t req;		 /* NULL for an all/ copy */
	struct fs_node *node;
	enum fs_write_state state; /* fs->lock */
	int interrupted;	   /* fs->lock: the reaper answers EINTR */
	int left; /* all/, ACK: copies not done, +1 while sending (fs->lock) */
	int err;  /* all/, ACK: the first copy's failure, -errno (fs->lock) */
	uint64_t deadline; /* MEETING: monotonic ms, then it fails */
	char chan[CONFIG_NAME_MAX];
	size_t len;
	char buf[]; /* MEETING's copy of the message */
};

/* The one reply a write gets: rc 0 is size bytes written, else -errno. */
static void fs_write_reply(fuse_req_t req, int rc, size_t size)
{
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_write(req, size);
}

/* A write for req to node's channel name, with a copy of copy bytes of
 * buf (0: none, it is sent at once); NULL without memory. */
static struct fs_write *fs_write_new(struct fs *fs, fuse_req_t req,
				     struct fs_node *node, const char *name,
				     const char *buf, size_t size, size_t copy)
{
	struct fs_write *w = malloc(sizeof(*w) + copy);

	if (!w)
		return NULL;
	memset(w, 0, sizeof(*w));
	w->fs = fs;
	w->req = req;
	w->node = node;
	snprintf(w->chan, sizeof(w->chan), "%s", name);
	w->len = size;
	memcpy(w->buf, buf, copy);
	return w;
}

/*
 * Move w to state to (under fs->lock): the one place that keeps
 * fs->writes and its node's counts, meeting_writes and waiting_writes in
 * .status (an all/ write and its copies are in neither count).  Whoever
 * moves a write off MEETING owns its reply.
 */
static void fs_write_set(struct fs *fs, struct fs_write *w,
			 enum fs_write_state to)
{
	if (w->state == FS_WRITE_MEETING) {
		TAILQ_REMOVE(&fs->writes, w, link);
		w->node->nmeets--;
	} else if (w->state == FS_WRITE_ACK && !w->parent) {
		w->node->nwrites--;
	}
	w->state = to;
	if (to == FS_WRITE_MEETING) {
		TAILQ_INSERT_TAIL(&fs->writes, w, link);
		w->node->nmeets++;
		pthread_cond_signal(&fs->reaper_cond); /* its deadline */
	} else if (to == FS_WRITE_ACK && !w->parent) {
		w->node->nwrites++;
	}
}

/* An all/ copy ended with status: the first failure is the write's; a
 * node that went down meanwhile is skipped, as one never up (fs->lock). */
static void fs_write_fold(struct fs_write *p, int status)
{
	if (status && status != -ENOTCONN && !p->err)
		p->err = status;
}

/*
 * A reliable send or an all/ copy completed (tp_send_async's done):
 * answer the write, or count the copy into its parent, whose last copy
 * answers it.  After unmount the session is gone and the kernel aborted the
 * request: nothing to answer then.
 */
static void fs_write_done(void *arg, int status, size_t len)
{
	struct fs_write *w = arg, *p = w->parent;
	struct fs *fs = w->fs;
	int last = 1;

	pthread_mutex_lock(&fs->lock);
	if (w != p)
		fs_write_set(fs, w, FS_WRITE_DONE);
	if (p) {
		fs_write_fold(p, status);
		last = --p->left == 0;
		if (last)
			fs_write_set(fs, p, FS_WRITE_DONE);
		if (last && !fs->stopping)
			fs_write_reply(p->req, p->err, p->len);
	} else if (!fs->stopping) {
		fs_write_reply(w->req, status, len);
	}
	pthread_mutex_unlock(&fs->lock);
	if (w != p)
		free(w);
	if (p && last)
		free(p);
}

/*
 * delivery = reliable: w goes to the transport, awaiting the ack, and is
 * answered by fs_write_done.  -ENOTCONN, w still the caller's, while the
 * peer is not up; else 0, w consumed.
 */
static int fs_write_reliable(struct fs *fs, struct fs_write *w, const char *buf,
			     int nonblock)
{
	int rc;

	pthread_mutex_lock(&fs->lock);
	fs_write_set(fs, w, FS_WRITE_ACK);
	pthread_mutex_unlock(&fs->lock);
	rc = tp_send_async(fs->tp, w->node->peer, w->chan, buf, w->len,
			   nonblock ? TP_SEND_NONBLOCK : 0, fs_write_done, w);
	if (!rc)
		return 0;
	pthread_mutex_lock(&fs->lock);
	fs_write_set(fs, w, FS_WRITE_NEW);
	pthread_mutex_unlock(&fs->lock);
	if (rc == -ENOTCONN)
		return rc;
	fs_write_reply(w->req, rc, w->len);
	free(w);
	return 0;
}

/* A reliable copy of all/'s write w for node i, or NULL without memory. */
static struct fs_write *fs_write_kid(struct fs *fs, struct fs_write *w, int i,
				     const char *buf)
{
	struct fs_node *node;

	pthread_mutex_lock(&fs->lock);
	node = fs_node_get(fs, i);
	pthread_mutex_unlock(&fs->lock);
	return node ? fs_write_new(fs, NULL, node, w->chan, buf, w->len, 0)
		    : NULL;
}

/*
 * all/ as one copy per node that is up, each a child of w, by its
 * node's delivery; a reliable copy holds the answer until its ack, and
 * w is answered by its last copy, with the first error.
 */
static void fs_write_copies(struct fs *fs, struct fs_write *w, const char *buf)
{
	struct fs_write *kid;
	int i, rc;

	w->parent = w; /* its own last copy answers it */
	w->left = 1;
	pthread_mutex_lock(&fs->lock);
	fs_write_set(fs, w, FS_WRITE_ACK);
	pthread_mutex_unlock(&fs->lock);
	for (i = 0; i < fs->nnodes; i++) {
		struct peer *p = &fs->peers[i];

		if (!peer_is_up(p))
			continue;
		if (!tp_peer_reliable(fs->tp, p)) {
			rc = tp_queue(fs->tp, p, w->chan, buf, w->len);
		} else if (!(kid = fs_write_kid(fs, w, i, buf))) {
			rc = -ENOMEM;
		} else {
			kid->parent = w;
			pthread_mutex_lock(&fs->lock);
			fs_write_set(fs, kid, FS_WRITE_ACK);
			w->left++;
			pthread_mutex_unlock(&fs->lock);
			rc = tp_send_async(fs->tp, p, w->chan, buf, w->len, 0,
					   fs_write_done, kid);
			if (!rc)
				continue; /* its done counts it */
			fs_write_done(kid, rc, w->len);
			continue;
		}
		pthread_mutex_lock(&fs->lock);
		fs_write_fold(w, rc);
		pthread_mutex_unlock(&fs->lock);
	}
	fs_write_done(w, 0, w->len); /* w's own: the sending is over */
	tp_flush(fs->tp);
}

/*
 * A write to all/ (fs_all.c says who gets it and how): -ENOTCONN, w
 * still the caller's, while a node is being met and force is not set
 * (the wait is over: send to those up); else 0, w answered or consumed.
 */
static int fs_write_all(struct fs *fs, struct fs_write *w, const char *buf,
			int force)
{
	int rc;

	if (fs_all_meeting(fs) && !force)
		return -ENOTCONN;
	rc = fs_all_group(fs, w->chan, buf, w->len);
	if (rc <= 0) {
		fs_write_reply(w->req, rc, w->len);
		tp_flush(fs->tp);
	} else if (fs_all_too_big(fs, w->len)) {
		/* no copy at all, or the writer, told EMSGSIZE, would
		 * resend the rest */
		fs_write_reply(w->req, -EMSGSIZE, w->len);
	} else {
		fs_write_copies(fs, w, buf);
		return 0;
	}
	free(w);
	return 0;
}

/*
 * delivery = datagram: answered before the doorbell, so that the writer
 * writes its next message (or parks its read) while the kernel sends
 * this one; needs no struct fs_write.  -ENOTCONN, req not answered,
 * while the peer is not up; else 0.
 */
static int fs_write_datagram(struct fs *fs, fuse_req_t req,
			     struct fs_node *node, const char *name,
			     const char *buf, size_t size)
{
	int rc = tp_queue(fs->tp, node->peer, name, buf, size);

	if (rc == -ENOTCONN)
		return rc;
	fs_write_reply(req, rc, size);
	tp_flush(fs->tp);
	return 0;
}

/*
 * Send w now, from buf: 0 once it is answered or handed to a
 * completion (w consumed); -ENOTCONN, w still the caller's, while its
 * peer is not up (for all/: a node is being met).
 */
static int fs_write_send(struct fs *fs, struct fs_write *w, const char *buf,
			 int nonblock)
{
	if (fs_node_is_all(w->node))
		return fs_write_all(fs, w, buf, 0);
	if (tp_peer_reliable(fs->tp, w->node->peer))
		return fs_write_reliable(fs, w, buf, nonblock);
	if (fs_write_datagram(fs, w->req, w->node, w->chan, buf, w->len))
		return -ENOTCONN;
	free(w);
	return 0;
}

/* Why w may not wait (under fs->lock): -ENOTCONN when the daemon stops,
 * -EINTR for a signal, else 0. */
static int fs_write_refused(struct fs *fs, struct fs_write *w)
{
	if (fs->stopping)
		return -ENOTCONN;
	return fuse_req_interrupted(w->req) ? -EINTR : 0;
}

/* Whether w may go now (under fs->lock: peer locks only): its peer is
 * up, or, for all/, no node is still being met. */
static int fs_write_ready(struct fs *fs, struct fs_write *w)
{
	return fs_node_is_all(w->node) ? !fs_all_waiting(fs)
				       : peer_is_up(w->node->peer);
}

/*
 * Send a MEETING write (unlinked); linked again, same deadline, if its
 * peer went meanwhile.  Whether it may go is looked at again under
 * fs->lock before it is linked, since a wake-up (fs_write_wake) may have
 * passed meanwhile.
 */
static void fs_write_go(struct fs *fs, struct fs_write *w)
{
	int err, ready;

	do {
		if (fs_write_send(fs, w, w->buf, 0) != -ENOTCONN)
			return;
		pthread_mutex_lock(&fs->lock);
		err = fs_write_refused(fs, w);
		ready = !err && fs_write_ready(fs, w);
		if (!err && !ready)
			fs_write_set(fs, w, FS_WRITE_MEETING);
		pthread_mutex_unlock(&fs->lock);
	} while (ready);
	if (err) {
		fs_write_reply(w->req, err, w->len);
		free(w);
	}
}

/*
 * The interrupt callback: only mark a MEETING write and wake the reaper,
 * which owns the EINTR reply (as fs_park_interrupt does for reads).  A
 * write already sent or answered is simply not found.
 */
static void fs_write_interrupt(fuse_req_t req, void *data)
{
	struct fs *fs = data;
	struct fs_write *w;

	pthread_mutex_lock(&fs->lock);
	TAILQ_FOREACH (w, &fs->writes, link)
		if (w->req == req) {
			w->interrupted = 1;
			pthread_cond_signal(&fs->reaper_cond);
			break;
		}
	pthread_mutex_unlock(&fs->lock);
}

/* A write whose peer is not up starts MEETING (see the top of this
 * file); O_NONBLOCK writers get EAGAIN, the meeting goes on. */
static void fs_write_meet(struct fs *fs, fuse_req_t req, struct fs_node *node,
			  const char *name, const char *buf, size_t size,
			  int nonblock)
{
	struct fs_write *w;
	int up, err;

	if (nonblock) {
		fuse_reply_err(req, EAGAIN);
		return;
	}
	w = fs_write_new(fs, req, node, name, buf, size, size);
	if (!w) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	w->deadline = util_now_ms() + (uint64_t)fs->cfg->peer_timeout_ms;
	/* Registered before w is visible, never under fs->lock: for a
	 * request interrupted already it runs at once. */
	fuse_req_interrupt_func(req, fs_write_interrupt, fs);
	pthread_mutex_lock(&fs->lock);
	err = fs_write_refused(fs, w);
	/* Up since the send failed: fs_peer_up found nothing to send. */
	up = !err && fs_write_ready(fs, w);
	if (!err && !up)
		fs_write_set(fs, w, FS_WRITE_MEETING);
	pthread_mutex_unlock(&fs->lock);
	if (err) {
		fs_write_reply(req, err, size);
		free(w);
	} else if (up) {
		fs_write_go(fs, w);
	}
}

/*
 * Send a write request's bytes to c's node: a datagram answered at once,
 * a reliable write answered by its ack, or a write that waits for its
 * peer.  name and node are fixed for the channel's life: no lock needed.
 */
void fs_write_start(struct fs *fs, fuse_req_t req, struct fs_chan *c,
		    const char *buf, size_t size, int nonblock)
{
	struct fs_node *node = c ? c->node : NULL;
	struct fs_write *w;

	if (!c) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (!fs->tp) {
		fuse_reply_err(req, ENOTCONN);
		return;
	}
	/* the hot path: a datagram to a peer that is up, no object */
	if (!fs_node_is_all(node) && !tp_peer_reliable(fs->tp, node->peer)) {
		if (!fs_write_datagram(fs, req, node, c->name, buf, size))
			return;
	} else {
		w = fs_write_new(fs, req, node, c->name, buf, size, 0);
		if (!w) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		if (fs_write_send(fs, w, buf, nonblock) != -ENOTCONN)
			return;
		free(w);
	}
	fs_write_meet(fs, req, node, c->name, buf, size, nonblock);
}

/*
 * Try again what waited for p, in the order it was written: the writes
 * to p when it came up, and the all/ writes either way (bootstrap
 * thread).
 */
static void fs_write_wake(struct fs *fs, struct peer *p, int up)
{
	struct fs_writeq q = TAILQ_HEAD_INITIALIZER(q);
	struct fs_write *w, *tmp;
	int all;

	pthread_mutex_lock(&fs->lock);
	/* all/ writes only once no node is being met: a cold start of N
	 * nodes would else retry every one of them N times */
	all = fs->all && fs->all->nmeets && !fs_all_waiting(fs);
	for (w = TAILQ_FIRST(&fs->writes); w; w = tmp) {
		tmp = TAILQ_NEXT(w, link);
		if (fs_node_is_all(w->node) ? !all : !up || w->node->peer != p)
			continue;
		fs_write_set(fs, w, FS_WRITE_NEW);
		TAILQ_INSERT_TAIL(&q, w, link);
	}
	pthread_mutex_unlock(&fs->lock);
	while ((w = TAILQ_FIRST(&q))) {
		TAILQ_REMOVE(&q, w, link);
		fs_write_go(fs, w);
	}
}

/* tp_ops.peer_up: send what waited for p. */
void fs_peer_up(void *arg, struct peer *p)
{
	fs_write_wake(arg, p, 1);
}

/* tp_ops.peer_failed: an all/ write may stop waiting for p. */
void fs_peer_failed(void *arg, struct peer *p)
{
	fs_write_wake(arg, p, 0);
}

/* The MEETING writes due by now or interrupted, onto out; the earliest
 * deadline still ahead, or next when earlier (under fs->lock). */
uint64_t fs_write_due(struct fs *fs, uint64_t now, struct fs_writeq *out,
		      uint64_t next)
{
	struct fs_write *w, *tmp;

	for (w = TAILQ_FIRST(&fs->writes); w; w = tmp) {
		tmp = TAILQ_NEXT(w, link);
		if (w->interrupted || w->deadline <= now) {
			fs_write_set(fs, w, FS_WRITE_NEW);
			TAILQ_INSERT_TAIL(out, w, link);
		} else if (!next || w->deadline < next) {
			next = w->deadline;
		}
	}
	return next;
}

/* What a writer learns of a peer never met: EHOSTUNREACH when its name
 * or route would not resolve, else ENOTCONN. */
static int fs_write_unmet(struct peer *p)
{
	int err;

	pthread_mutex_lock(&p->lock);
	err = p->last_err == EHOSTUNREACH ? -EHOSTUNREACH : -ENOTCONN;
	pthread_mutex_unlock(&p->lock);
	return err;
}

/* End the writes of q (no lock held): EINTR for a signal, else err when
 * nonzero (-errno), else all/ goes to the nodes up and a unicast write
 * gets its peer's error. */
void fs_write_fail(struct fs *fs, struct fs_writeq *q, int err)
{
	struct fs_write *w;
	int e;

	while ((w = TAILQ_FIRST(q))) {
		TAILQ_REMOVE(q, w, link);
		if (w->interrupted)
			e = -EINTR;
		else if (err)
			e = err;
		else if (fs_node_is_all(w->node))
			e = fs_write_all(fs, w, w->buf, 1);
		else
			e = fs_write_unmet(w->node->peer);
		if (!e)
			continue; /* all/ went: w is answered or sending */
		fs_write_reply(w->req, e, w->len);
		free(w);
	}
}

/* The daemon stops (the reaper is gone): every MEETING write fails with
 * ENOTCONN; those awaiting an ack the transport's close completes. */
void fs_write_stop(struct fs *fs)
{
	struct fs_writeq q = TAILQ_HEAD_INITIALIZER(q);

	pthread_mutex_lock(&fs->lock);
	fs_write_due(fs, UINT64_MAX, &q, 0);
	pthread_mutex_unlock(&fs->lock);
	fs_write_fail(fs, &q, -ENOTCONN);
}
