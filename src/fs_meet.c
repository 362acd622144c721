/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writes to a peer not met yet.  Peers are met on demand (bootstrap.c):
 * the first send to one finds it not up, which asks the bootstrap to dial
 * it.  Its writer is parked here, holding no FUSE thread, with a copy of
 * its message, until the peer is up (fs_peer_up, on the bootstrap thread,
 * sends it) or peer_timeout passes (the reaper answers ENOTCONN, or
 * EHOSTUNREACH when the peer's address or route would not resolve); a
 * signal ends the wait with EINTR, nothing sent.  A write to all/ waits
 * here too, for every node that is being met (fs_all.c); at peer_timeout
 * it goes to the nodes that are up.  So
 * `ibfs ... && echo hi > MNT/beta/chat` works from a cold start, and
 * Ctrl-C on one that waits for a dead peer returns at once.
 *
 * Locks: the meets list and every node's nmeets are under fs->lock; a
 * peer's up flag and last error are read under its own lock, inside
 * fs->lock (fs_int.h's order).  Replies go out with no lock held.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs_int.h"
#include "util.h"

/* Link m, waking the reaper for its deadline (under fs->lock). */
static void fs_meet_link(struct fs *fs, struct fs_meet *m)
{
	TAILQ_INSERT_TAIL(&fs->meets, m, link);
	m->node->nmeets++;
	pthread_cond_signal(&fs->reaper_cond);
}

/* Unlink m (under fs->lock). */
static void fs_meet_unlink(struct fs *fs, struct fs_meet *m)
{
	TAILQ_REMOVE(&fs->meets, m, link);
	m->node->nmeets--;
}

/* Why m may not wait (under fs->lock): ENOTCONN when the daemon stops,
 * EINTR for a signal, else 0. */
static int fs_meet_refused(struct fs *fs, struct fs_meet *m)
{
	if (fs->stopping)
		return ENOTCONN;
	return fuse_req_interrupted(m->req) ? EINTR : 0;
}

/* Whether m may go now (under fs->lock: peer locks only): its peer is
 * up, or, for all/, no node is still being met. */
static int fs_meet_ready(struct fs *fs, struct fs_meet *m)
{
	return fs_node_is_all(m->node) ? !fs_all_waiting(fs)
				       : peer_is_up(m->node->peer);
}

/*
 * Send m now; parked again (same deadline) if its peer went meanwhile.
 * Whether it may go is looked at again under fs->lock before it is
 * linked, since a wake-up (fs_meet_wake) may have passed meanwhile.
 */
static void fs_meet_send(struct fs *fs, struct fs_meet *m)
{
	int err, ready;

	do {
		if (fs_chan_send(fs, m->req, m->node, m->chan, m->buf, m->len,
				 0) != -ENOTCONN) {
			free(m);
			return;
		}
		pthread_mutex_lock(&fs->lock);
		err = fs_meet_refused(fs, m);
		ready = !err && fs_meet_ready(fs, m);
		if (!err && !ready)
			fs_meet_link(fs, m);
		pthread_mutex_unlock(&fs->lock);
	} while (ready);
	if (err) {
		fuse_reply_err(m->req, err);
		free(m);
	}
}

/*
 * The interrupt callback: only mark the meet and wake the reaper, which
 * owns the EINTR reply (as fs_park_interrupt does for reads).  A meet
 * already sent or answered is simply not found.
 */
static void fs_meet_interrupt(fuse_req_t req, void *data)
{
	struct fs *fs = data;
	struct fs_meet *m;

	pthread_mutex_lock(&fs->lock);
	TAILQ_FOREACH (m, &fs->meets, link)
		if (m->req == req) {
			m->interrupted = 1;
			pthread_cond_signal(&fs->reaper_cond);
			break;
		}
	pthread_mutex_unlock(&fs->lock);
}

/* Park a write until its peer is met (see the top of this file). */
void fs_meet_park(struct fs *fs, fuse_req_t req, struct fs_node *node,
		  const char *name, const char *buf, size_t size, int nonblock)
{
	struct fs_meet *m;
	int up, err;

	if (nonblock) {
		fuse_reply_err(req, EAGAIN); /* the meeting goes on */
		return;
	}
	m = malloc(sizeof(*m) + size);
	if (!m) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	m->req = req;
	m->node = node;
	snprintf(m->chan, sizeof(m->chan), "%s", name);
	m->deadline = util_now_ms() + (uint64_t)fs->cfg->peer_timeout_ms;
	m->interrupted = 0;
	m->len = size;
	memcpy(m->buf, buf, size);
	/* Registered before the meet is visible, never under fs->lock: for
	 * a request interrupted already it runs at once. */
	fuse_req_interrupt_func(req, fs_meet_interrupt, fs);
	pthread_mutex_lock(&fs->lock);
	err = fs_meet_refused(fs, m);
	if (err) {
		pthread_mutex_unlock(&fs->lock);
		fuse_reply_err(req, err);
		free(m);
		return;
	}
	/* Up since the send failed: fs_peer_up found nothing to send. */
	up = fs_meet_ready(fs, m);
	if (!up)
		fs_meet_link(fs, m);
	pthread_mutex_unlock(&fs->lock);
	if (up)
		fs_meet_send(fs, m);
}

/*
 * Try again what waited for p, in the order it was written: the writes
 * to p when it came up, and the all/ writes either way (bootstrap
 * thread).
 */
static void fs_meet_wake(struct fs *fs, struct peer *p, int up)
{
	struct fs_meetq q = TAILQ_HEAD_INITIALIZER(q);
	struct fs_meet *m, *tmp;
	int all;

	pthread_mutex_lock(&fs->lock);
	/* all/ writes only once no node is being met: a cold start of N
	 * nodes would else retry every one of them N times */
	all = fs->all && fs->all->nmeets && !fs_all_waiting(fs);
	for (m = TAILQ_FIRST(&fs->meets); m; m = tmp) {
		tmp = TAILQ_NEXT(m, link);
		if (fs_node_is_all(m->node) ? !all : !up || m->node->peer != p)
			continue;
		fs_meet_unlink(fs, m);
		TAILQ_INSERT_TAIL(&q, m, link);
	}
	pthread_mutex_unlock(&fs->lock);
	while ((m = TAILQ_FIRST(&q))) {
		TAILQ_REMOVE(&q, m, link);
		fs_meet_send(fs, m);
	}
}

/* tp_ops.peer_up: send what waited for p. */
void fs_peer_up(void *arg, struct peer *p)
{
	fs_meet_wake(arg, p, 1);
}

/* tp_ops.peer_failed: an all/ write may stop waiting for p. */
void fs_peer_failed(void *arg, struct peer *p)
{
	fs_meet_wake(arg, p, 0);
}

/* The meets due by now, onto out; the next deadline (under fs->lock). */
uint64_t fs_meet_due(struct fs *fs, uint64_t now, struct fs_meetq *out,
		     uint64_t next)
{
	struct fs_meet *m, *tmp;

	for (m = TAILQ_FIRST(&fs->meets); m; m = tmp) {
		tmp = TAILQ_NEXT(m, link);
		if (m->interrupted || m->deadline <= now) {
			fs_meet_unlink(fs, m);
			TAILQ_INSERT_TAIL(out, m, link);
		} else if (!next || m->deadline < next) {
			next = m->deadline;
		}
	}
	return next;
}

/* What a writer learns of a peer never met: EHOSTUNREACH when its name
 * or route would not resolve, else ENOTCONN. */
static int fs_meet_errno(struct peer *p)
{
	int err;

	pthread_mutex_lock(&p->lock);
	err = p->last_err == EHOSTUNREACH ? EHOSTUNREACH : ENOTCONN;
	pthread_mutex_unlock(&p->lock);
	return err;
}

/* Answer and free every meet of q (no lock held): EINTR for a signal. */
void fs_meet_fail_all(struct fs *fs, struct fs_meetq *q, int err)
{
	struct fs_meet *m;
	int e;

	while ((m = TAILQ_FIRST(q))) {
		TAILQ_REMOVE(q, m, link);
		if (m->interrupted)
			e = EINTR;
		else if (err)
			e = err;
		else if (fs_node_is_all(m->node))
			e = fs_all_send(fs, m->req, m->chan, m->buf, m->len, 1);
		else
			e = fs_meet_errno(m->node->peer);
		if (e)
			fuse_reply_err(m->req, e);
		free(m);
	}
}
