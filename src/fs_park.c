/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The receive side of the file system, holding no thread: messages
 * delivered (fs_deliver), reads parked until one comes, polls parked
 * until one is queued, and the reaper thread, which ends what waits past
 * its deadline or was interrupted (waiting writes are fs_write.c's; the
 * reaper only times them).  A parked read is answered by fs_deliver
 * (through fs_park_arrived) from the progress thread, by fs_announce for
 * a large message, by rm or RELEASE, or by the reaper when it is
 * interrupted or times out.  Whoever unlinks a waiter from the lists
 * under fs->lock owns its reply, so every request is answered exactly
 * once, and never from the interrupt callback itself.  Lock rules: the
 * top of fs_int.h.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "fs_int.h"
#include "util.h"

/* Whom a delivery wakes once fs->lock is dropped (fs_park_arrived). */
struct fs_park_wake {
	struct fs_waiter *reader; /* answer now: a small message */
	struct fs_poller *polls;  /* notify now (malloc'ed), npolls of them */
	unsigned npolls;
};

/* A waiter for a read to park, zeroed, from fs->free_waiters (under
 * lock); NULL without memory.  fs_park_free gives it back. */
static struct fs_waiter *fs_park_waiter(struct fs *fs)
{
	struct fs_waiter *w = freelist_get(&fs->free_waiters);

	if (w)
		memset(w, 0, sizeof(*w));
	return w;
}

/* A finished waiter: drop the hold on its file and keep it for the next. */
static void fs_park_free(struct fs *fs, struct fs_waiter *w)
{
	pthread_mutex_lock(&fs->lock);
	fs_fh_drop_locked(fs, w->fh);
	freelist_put(&fs->free_waiters, w);
	pthread_mutex_unlock(&fs->lock);
}

/* Park w on both wait lists; caller holds lock. */
static void fs_park_link(struct fs *fs, struct fs_waiter *w)
{
	TAILQ_INSERT_TAIL(&w->chan->waiters, w, chan_link);
	TAILQ_INSERT_TAIL(&fs->waiters, w, all_link);
	w->chan->node->nparked++;
}

/* Remove w from both wait lists; the caller now owns its reply. */
static void fs_park_unlink(struct fs *fs, struct fs_waiter *w)
{
	TAILQ_REMOVE(&w->chan->waiters, w, chan_link);
	TAILQ_REMOVE(&fs->waiters, w, all_link);
	w->chan->node->nparked--;
}

/* Answer an unlinked waiter with err, or EOF when err is 0; free it. */
static void fs_park_end(struct fs *fs, struct fs_waiter *w, int err)
{
	if (err)
		fuse_reply_err(w->req, err);
	else
		fuse_reply_buf(w->req, NULL, 0);
	fs_park_free(fs, w);
}

/* End, and empty, a list of unlinked waiters (linked by all_link). */
void fs_park_end_all(struct fs *fs, struct fs_waitq *q, int err)
{
	struct fs_waiter *w;

	while ((w = TAILQ_FIRST(q))) {
		TAILQ_REMOVE(q, w, all_link);
		fs_park_end(fs, w, err);
	}
}

/* Answer a reader from the head of c's queue; caller holds the lock. */
static int fs_park_read_now(struct fs *fs, struct fs_chan *c, struct fs_fh *fh,
			    size_t size, char **buf, size_t *len)
{
	int rc = fs_chan_take(fs, c, size, buf, len);

	if (!rc) {
		fh->got = 1;
		fh->nread += *len;
	}
	return rc;
}

/* The first reader parked on c that is not the reaper's; under lock. */
static struct fs_waiter *fs_park_live(struct fs_chan *c)
{
	struct fs_waiter *w;

	TAILQ_FOREACH (w, &c->waiters, chan_link)
		if (!w->interrupted)
			return w;
	return NULL;
}

/*
 * Hand c's queued messages to its live parked readers, in order, onto out
 * (via all_link), for the caller to answer after unlocking.  Messages wait
 * beside a parked reader only while a reader ahead of it was the reaper's
 * or a reply came back refused: whoever ends that calls this.  Under lock.
 */
static void fs_park_feed(struct fs *fs, struct fs_chan *c, struct fs_waitq *out)
{
	struct fs_waiter *w;

	while (!TAILQ_EMPTY(&c->msgs) && (w = fs_park_live(c))) {
		fs_park_unlink(fs, w);
		w->rc = fs_park_read_now(fs, c, w->fh, w->size, &w->buf,
					 &w->blen);
		TAILQ_INSERT_TAIL(out, w, all_link);
	}
}

static void fs_park_answer_all(struct fs *fs, struct fs_waitq *q);

/*
 * Reply to a reader of open file fh with bytes taken from c.  If the
 * kernel no longer wants them (the read was interrupted meanwhile), put
 * them back at the head of the queue: the next reader gets them, nothing
 * is lost, and fh did not read them.
 */
static void fs_park_reply(struct fs *fs, struct fs_chan *c, struct fs_fh *fh,
			  fuse_req_t req, char *buf, size_t len)
{
	struct fs_waitq next = TAILQ_HEAD_INITIALIZER(next);
	struct fs_msg *m;

	if (fuse_reply_buf(req, buf, len) == 0 || !len) {
		free(buf);
		return;
	}
	pthread_mutex_lock(&fs->lock);
	fh->nread -= len;
	m = c->unlinked ? NULL : fs_chan_msg(fs, buf, len);
	if (!m) {
		pthread_mutex_unlock(&fs->lock);
		free(buf);
		return;
	}
	fs_chan_unread(fs, c, m);
	fs_park_feed(fs, c, &next);
	pthread_mutex_unlock(&fs->lock);
	fs_park_answer_all(fs, &next);
}

/* Answer reader w, chosen by a delivery or a feed, with what it took. */
static void fs_park_answer(struct fs *fs, struct fs_waiter *w)
{
	if (w->rc)
		fuse_reply_err(w->req, -w->rc);
	else
		fs_park_reply(fs, w->chan, w->fh, w->req, w->buf, w->blen);
	fs_park_free(fs, w);
}

/* Answer, and empty, a list of readers (linked by all_link). */
static void fs_park_answer_all(struct fs *fs, struct fs_waitq *q)
{
	struct fs_waiter *w;

	while ((w = TAILQ_FIRST(q))) {
		TAILQ_REMOVE(q, w, all_link);
		fs_park_answer(fs, w);
	}
}

/*
 * The interrupt callback: only mark the waiter and wake the reaper,
 * which owns the EINTR reply.  req stays valid while we run; a waiter
 * already answered is simply not found.
 */
static void fs_park_interrupt(fuse_req_t req, void *data)
{
	struct fs *fs = data;
	struct fs_waiter *w;

	pthread_mutex_lock(&fs->lock);
	TAILQ_FOREACH (w, &fs->waiters, all_link)
		if (w->req == req) {
			w->interrupted = 1;
			pthread_cond_signal(&fs->reaper_cond);
			break;
		}
	pthread_mutex_unlock(&fs->lock);
}

/* Read a channel: a message now, EOF/EAGAIN, or park until one comes. */
void fs_park_read(struct fs *fs, fuse_req_t req, struct fs_fh *fh, size_t size,
		  int nonblock)
{
	struct fs_chan *c = fh->chan;
	struct fs_waiter *w;
	char *buf = NULL;
	size_t len = 0;
	int rc = 0;

	/* Registered before the waiter is visible: see fs_park_interrupt. */
	fuse_req_interrupt_func(req, fs_park_interrupt, fs);
	pthread_mutex_lock(&fs->lock);
	if (!TAILQ_EMPTY(&c->msgs) && !fs_park_live(c)) {
		rc = fs_park_read_now(fs, c, fh, size, &buf, &len);
	} else if ((fh->got && !fh->follow) || c->unlinked || fs->stopping) {
		rc = fs->stopping && !fh->got ? -ENOTCONN : 0;
	} else if (nonblock) {
		rc = -EAGAIN;
	} else if (fuse_req_interrupted(req)) {
		rc = -EINTR;
	} else if (!(w = fs_park_waiter(fs))) {
		rc = -ENOMEM;
	} else {
		w->req = req;
		w->chan = c;
		w->fh = fh;
		w->size = size;
		if (fs->cfg->read_timeout_ms > 0)
			w->deadline = util_now_ms() + fs->cfg->read_timeout_ms;
		fs_park_link(fs, w);
		if (w->deadline)
			pthread_cond_signal(&fs->reaper_cond);
		pthread_mutex_unlock(&fs->lock);
		return; /* the waiter keeps the hold on fh */
	}
	pthread_mutex_unlock(&fs->lock);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fs_park_reply(fs, c, fh, req, buf, len);
	fs_fh_drop(fs, fh);
}

/*
 * Readable while a message is queued (or c is gone); else keep ph until
 * one comes.  Every open file polling c keeps its own handle, so that
 * every poller wakes; a newer handle from the same open file replaces
 * its older one (the kernel wakes all of that file's pollers with
 * either).  Out of memory, say readable: a wake-up too early, not lost.
 */
unsigned fs_park_poll(struct fs_chan *c, struct fs_fh *fh,
		      struct fuse_pollhandle *ph)
{
	struct fs_poller *v;
	unsigned i, cap;

	if (!TAILQ_EMPTY(&c->msgs) || c->unlinked)
		goto ready;
	if (!ph)
		return 0;
	for (i = 0; i < c->npolls; i++)
		if (c->polls[i].fh == fh) {
			fuse_pollhandle_destroy(c->polls[i].ph);
			c->polls[i].ph = ph;
			return 0;
		}
	if (c->npolls == c->cap_polls) {
		cap = c->cap_polls ? c->cap_polls * 2 : 2;
		v = realloc(c->polls, cap * sizeof(*v));
		if (!v)
			goto ready;
		c->polls = v;
		c->cap_polls = cap;
	}
	c->polls[c->npolls++] = (struct fs_poller){.fh = fh, .ph = ph};
	return 0;
ready:
	if (ph)
		fuse_pollhandle_destroy(ph);
	return POLLIN | POLLRDNORM;
}

/* fh is released: the handle it parked on its channel goes with it. */
static void fs_park_poll_forget(struct fs_chan *c, struct fs_fh *fh)
{
	unsigned i;

	for (i = 0; i < c->npolls; i++)
		if (c->polls[i].fh == fh) {
			fuse_pollhandle_destroy(c->polls[i].ph);
			c->polls[i] = c->polls[--c->npolls];
			return;
		}
}

/* Reads a killed owner left parked must not take messages, nor its
 * polls be told. */
void fs_park_release(struct fs *fs, struct fs_fh *fh, struct fs_waitq *q)
{
	struct fs_waiter *w, *next;

	fs_park_poll_forget(fh->chan, fh);
	for (w = TAILQ_FIRST(&fh->chan->waiters); w; w = next) {
		next = TAILQ_NEXT(w, chan_link);
		if (w->fh != fh)
			continue;
		fs_park_unlink(fs, w);
		TAILQ_INSERT_TAIL(q, w, all_link);
	}
}

/* c was removed: its readers are to see EOF. */
void fs_park_unlinked(struct fs *fs, struct fs_chan *c, struct fs_waitq *q)
{
	struct fs_waiter *w;

	while ((w = TAILQ_FIRST(&c->waiters))) {
		fs_park_unlink(fs, w);
		TAILQ_INSERT_TAIL(q, w, all_link);
	}
}

/* Keep ph for fs_announce (under fs->lock); -ENOMEM: tell it now. */
static int fs_park_keep_poll(struct fs *fs, struct fuse_pollhandle *ph)
{
	struct fuse_pollhandle **v;
	size_t cap;

	if (fs->npolls == fs->cap_polls) {
		cap = fs->cap_polls ? fs->cap_polls * 2 : 8;
		v = realloc(fs->polls, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		fs->polls = v;
		fs->cap_polls = cap;
	}
	fs->polls[fs->npolls++] = ph;
	return 0;
}

/* Tell a poller its file is readable; the handle is spent. */
static void fs_park_notify(struct fuse_pollhandle *ph)
{
	fuse_lowlevel_notify_poll(ph);
	fuse_pollhandle_destroy(ph);
}

/*
 * Hand c's parked polls to wake, but those a large message leaves to
 * fs_announce (fs_park_arrived); those announce cannot keep are told now.
 */
static void fs_park_polls_take(struct fs *fs, struct fs_chan *c, int later,
			       struct fs_park_wake *wake)
{
	unsigned i, n = 0;

	for (i = 0; i < c->npolls; i++)
		if (!later || fs_park_keep_poll(fs, c->polls[i].ph))
			c->polls[n++] = c->polls[i];
	c->npolls = 0;
	if (!n)
		return;
	wake->polls = c->polls;
	wake->npolls = n;
	c->polls = NULL;
	c->cap_polls = 0;
}

/*
 * A message arrived on c: the parked reader it goes to and every poller.
 * A large message is answered by fs_announce instead, once the transport
 * has acked it: handing over a large message takes a while, and on a busy
 * CPU the woken reader runs ahead of the ack its writer waits for.  A
 * small one is answered at once, so that a reply the reader writes at
 * once can carry that ack.
 */
static void fs_park_arrived(struct fs *fs, struct fs_chan *c, size_t len,
			    struct fs_park_wake *wake)
{
	int later = len > FS_ANSWER_NOW_MAX;
	/* An interrupted waiter is the reaper's: skip it. */
	struct fs_waiter *w = fs_park_live(c);

	if (w) {
		fs_park_unlink(fs, w);
		w->rc = fs_park_read_now(fs, c, w->fh, w->size, &w->buf,
					 &w->blen);
		if (later)
			TAILQ_INSERT_TAIL(&fs->answers, w, all_link);
		else
			wake->reader = w;
	}
	if (c->npolls && !fs->stopping)
		fs_park_polls_take(fs, c, later, wake);
}

/* The reader first, then the pollers, as fs_park_arrived chose them. */
static void fs_park_tell(struct fs *fs, struct fs_park_wake *wake)
{
	unsigned i;

	if (wake->reader)
		fs_park_answer(fs, wake->reader);
	for (i = 0; i < wake->npolls; i++)
		fs_park_notify(wake->polls[i].ph);
	free(wake->polls);
}

/*
 * tp_ops.deliver: queue a message, and wake the parked reader it goes to
 * and the pollers (fs_park_arrived says when).
 */
int fs_deliver(void *arg, struct peer *p, const char *chan, void *data,
	       size_t len)
{
	struct fs *fs = arg;
	struct fs_park_wake wake = {0};
	struct fs_msg *m;
	struct fs_chan *c;
	int rc = -ENOMEM;

	pthread_mutex_lock(&fs->lock);
	m = fs_chan_msg(fs, data, len);
	if (m)
		rc = fs_node_get(fs, p->idx)
			     ? fs_chan_queue(fs, fs->nodes[p->idx], chan, m, &c)
			     : -ENOMEM;
	if (!rc)
		fs_park_arrived(fs, c, len, &wake);
	else if (m)
		fs_chan_msg_free(fs, m);
	pthread_mutex_unlock(&fs->lock);
	if (rc)
		return rc; /* the transport frees data and counts the drop:
			    * its cause is rc (fs.h) */
	fs_park_tell(fs, &wake);
	return 0;
}

/* tp_ops.announce: answer the readers and pollers fs_park_arrived
 * left. */
void fs_announce(void *arg)
{
	struct fs *fs = arg;
	struct fs_waitq answers = TAILQ_HEAD_INITIALIZER(answers);
	struct fuse_pollhandle **polls;
	size_t i, n;

	pthread_mutex_lock(&fs->announce_lock);
	pthread_mutex_lock(&fs->lock);
	if (TAILQ_EMPTY(&fs->answers) && !fs->npolls) {
		pthread_mutex_unlock(&fs->lock);
		pthread_mutex_unlock(&fs->announce_lock);
		return;
	}
	TAILQ_CONCAT(&answers, &fs->answers, all_link);
	polls = fs->polls;
	n = fs->npolls;
	fs->polls = NULL;
	fs->npolls = fs->cap_polls = 0;
	pthread_mutex_unlock(&fs->lock);
	fs_park_answer_all(fs, &answers);
	for (i = 0; i < n; i++)
		fs_park_notify(polls[i]);
	pthread_mutex_unlock(&fs->announce_lock);
	free(polls);
}

/* Add ms to a CLOCK_MONOTONIC timespec for pthread_cond_timedwait. */
static struct timespec fs_park_abstime(uint64_t deadline_ms)
{
	struct timespec ts = {
		.tv_sec = deadline_ms / 1000,
		.tv_nsec = (deadline_ms % 1000) * 1000000,
	};

	return ts;
}

/*
 * Unlink the interrupted and timed-out waiters onto done (under lock);
 * the earliest deadline still ahead, 0 for none.
 */
static uint64_t fs_park_due(struct fs *fs, uint64_t now, struct fs_waitq *done)
{
	struct fs_waiter *w, *tmp;
	uint64_t next = 0;

	for (w = TAILQ_FIRST(&fs->waiters); w; w = tmp) {
		tmp = TAILQ_NEXT(w, all_link);
		if (w->interrupted || (w->deadline && w->deadline <= now)) {
			fs_park_unlink(fs, w);
			TAILQ_INSERT_TAIL(done, w, all_link);
		} else if (w->deadline && (!next || w->deadline < next)) {
			next = w->deadline;
		}
	}
	return next;
}

/*
 * Answer the waiters fs_park_due took, EINTR or EOF, and hand what came
 * meanwhile to the readers behind them.  Entered and left under lock,
 * which it drops for the replies.
 */
static void fs_park_reap(struct fs *fs, struct fs_waitq *done)
{
	struct fs_waitq fed = TAILQ_HEAD_INITIALIZER(fed);
	struct fs_waiter *w;

	/* what arrived while they blocked goes to the next */
	TAILQ_FOREACH (w, done, all_link)
		fs_park_feed(fs, w->chan, &fed);
	pthread_mutex_unlock(&fs->lock);
	while ((w = TAILQ_FIRST(done))) {
		TAILQ_REMOVE(done, w, all_link);
		fs_park_end(fs, w, w->interrupted ? EINTR : 0);
	}
	fs_park_answer_all(fs, &fed);
	pthread_mutex_lock(&fs->lock);
}

/*
 * The reaper owns the replies to interrupted and timed-out reads, and
 * ends the writes fs_write_due hands it: it wakes on a signal from an
 * interrupt callback or at the next deadline.
 */
static void *fs_park_reaper(void *arg)
{
	struct fs *fs = arg;
	struct fs_waitq done = TAILQ_HEAD_INITIALIZER(done);
	struct fs_writeq late = TAILQ_HEAD_INITIALIZER(late);
	uint64_t next, now;

	pthread_setname_np(pthread_self(), "ibfs-reaper");
	pthread_mutex_lock(&fs->lock);
	while (!fs->stopping) {
		now = util_now_ms();
		next = fs_park_due(fs, now, &done);
		next = fs_write_due(fs, now, &late, next);
		if (!TAILQ_EMPTY(&done)) {
			fs_park_reap(fs, &done);
			continue;
		}
		if (!TAILQ_EMPTY(&late)) {
			pthread_mutex_unlock(&fs->lock);
			fs_write_fail(fs, &late, 0);
			pthread_mutex_lock(&fs->lock);
			continue;
		}
		if (next) {
			struct timespec ts = fs_park_abstime(next);

			pthread_cond_timedwait(&fs->reaper_cond, &fs->lock,
					       &ts);
		} else {
			pthread_cond_wait(&fs->reaper_cond, &fs->lock);
		}
	}
	pthread_mutex_unlock(&fs->lock);
	return NULL;
}

/* The reaper's condition runs on the monotonic clock, as deadlines do. */
int fs_park_start(struct fs *fs)
{
	pthread_condattr_t ca;
	int rc;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&fs->reaper_cond, &ca);
	pthread_condattr_destroy(&ca);
	rc = -pthread_create(&fs->reaper, NULL, fs_park_reaper, fs);
	if (rc) {
		pthread_cond_destroy(&fs->reaper_cond);
		return rc;
	}
	fs->reaper_running = 1;
	return 0;
}

/* Stop the reaper and answer every parked reader and every write that
 * waits for its peer: the daemon is going. */
void fs_park_stop(struct fs *fs)
{
	struct fs_waiter *w;
	size_t i;

	pthread_mutex_lock(&fs->lock);
	fs->stopping = 1;
	pthread_cond_signal(&fs->reaper_cond);
	pthread_mutex_unlock(&fs->lock);
	if (fs->reaper_running)
		pthread_join(fs->reaper, NULL);
	fs->reaper_running = 0;
	pthread_mutex_lock(&fs->lock);
	while ((w = TAILQ_FIRST(&fs->waiters))) {
		fs_park_unlink(fs, w);
		pthread_mutex_unlock(&fs->lock);
		fs_park_end(fs, w, ENOTCONN);
		pthread_mutex_lock(&fs->lock);
	}
	pthread_mutex_unlock(&fs->lock);
	fs_write_stop(fs);
	/* readers a message was chosen for get it; none are chosen now */
	fs_announce(fs);
	/* parked polls point into the session, which goes next */
	pthread_mutex_lock(&fs->lock);
	for (i = 0; i < fs->nslots; i++)
		if (fs->chans[i])
			fs_chan_polls_drop(fs->chans[i]);
	pthread_mutex_unlock(&fs->lock);
}

/* Pollers an announce never told, the waiters kept, and the reaper's
 * condition. */
void fs_park_close(struct fs *fs)
{
	size_t i;

	for (i = 0; i < fs->npolls; i++)
		fuse_pollhandle_destroy(fs->polls[i]);
	free(fs->polls);
	freelist_drain(&fs->free_waiters);
	pthread_cond_destroy(&fs->reaper_cond);
}
