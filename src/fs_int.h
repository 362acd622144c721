/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private to the file system's files:
 *
 *   fs.c         the tree: inode numbers, node directories, attributes,
 *                listings, open files; the one fuse_lowlevel_ops table and
 *                fs.h's public API
 *   fs_chan.c    channels: their inode slots, message queues and limits,
 *                and the write that sends a message (prefix fs_chan_)
 *   fs_park.c    reads parked until a message comes, polls parked until
 *                one is queued, reliable writes waiting for the peer's ack,
 *                and the reaper thread that ends interrupted or timed-out
 *                reads (prefix fs_park_)
 *   fs_meet.c    writes to a peer not met yet, parked until it is up or
 *                peer_timeout passes (prefix fs_meet_)
 *   fs_all.c     MOUNT/all/: one write to every node, through the
 *                multicast group or one copy each (prefix fs_all_)
 *   fs_status.c  the text of MOUNT/.status and MOUNT/NODE/.status
 *                (prefix fs_status_)
 *   fs_metrics.c the text of MOUNT/.metrics, Prometheus's (prefix
 *                fs_metrics_)
 *   fs_mount.c   the session: mount, loop, unmount (fs.h's fs_mount,
 *                fs_loop, fs_unmount)
 *
 * Threads, and what each calls:
 *   FUSE workers  every fs_op_* of fs.c, and through them fs_chan_write,
 *                 fs_park_read, fs_park_write, fs_park_poll,
 *                 fs_status_render and fs_metrics_render; the interrupt
 *                 callback (fs_park_interrupt) on the worker that took
 *                 INTERRUPT
 *   progress      the transport's thread: fs_deliver and fs_announce,
 *                 with no transport lock held (transport.h)
 *   bootstrap     fs_peer_up (tp_ops.peer_up, no lock held): sends the
 *                 writes fs_meet parked for that peer; fs_peer_failed
 *                 (tp_ops.peer_failed): all/ writes that waited for it
 *   completions   a reliable write's completion (fs_park's write_done)
 *                 runs on the progress thread when the ack comes, inside
 *                 tp_send_async on the writing worker, on the bootstrap
 *                 thread when the peer goes down or restarts, and in
 *                 tp_close
 *   reaper        fs_park's reaper: EINTR for interrupted reads, EOF for
 *                 those past read_timeout, ENOTCONN or EHOSTUNREACH for
 *                 writes whose peer was not met within peer_timeout
 *   main          fs_open, fs_set_transport, fs_mount, fs_loop,
 *                 fs_unmount, fs_close
 *
 * Locks, in the order they nest (outer first):
 *   announce_lock -> fs->lock -> peer->lock
 *
 *   fs->lock guards the channel table (chans, nslots, next_ino); the
 *     budget; every channel but its ino, node and name, which are fixed
 *     for its life; every node's chans, buckets, nbuckets, nchans,
 *     nremote, nparked and nwrites; every
 *     open file's refs, released and got; the meets list and every
 *     node's nmeets; both waiter lists, answers,
 *     polls (npolls, cap_polls), stopping, and the fhs list.  The reaper
 *     sleeps on reaper_cond with it.
 *   announce_lock is held across fs_announce's telling, taken before
 *     fs->lock, so that a stop cannot pass a telling still going on.
 *   peer->lock (peer.h) is taken under fs->lock only by the .status
 *     rendering; nothing takes fs->lock while holding a peer lock.
 *
 *   Fixed once fs_open returns: cfg, peers, nodes, nnodes, chan_base,
 *   hash_seed, started; tp once fs_set_transport set it, before the
 *   mount.  An open file's chan, follow, buf and len are fixed once its
 *   open is answered.
 *
 * Rules:
 *   - The .status rendering (fs_status_render) runs under fs->lock, taken
 *     by the open handler, and never takes fs->lock itself: it would
 *     deadlock.
 *   - Replies and poll notifications go out with fs->lock dropped: a
 *     refused reply takes the lock again to put its bytes back.  The one
 *     exception is a reliable write's completion, which answers under
 *     fs->lock so that a stop (which sets stopping under it) cannot pass
 *     it and destroy the session while it answers.
 *   - Under fs->lock the only transport calls are tp_info, tp_totals
 *     and tp_mcast_get, which take no lock: a reliable write's completion,
 * which takes fs->lock, may run inside tp_send_async, so sends go out with
 *     fs->lock dropped.
 *   - fuse_req_interrupt_func is never called under fs->lock: for a
 *     request already interrupted it calls the callback at once, and the
 *     callback takes fs->lock.  The callback only marks its waiter and
 *     wakes the reaper, which owns the EINTR reply.
 *   - Whoever unlinks a waiter from the wait lists under fs->lock owns its
 *     reply: every request is answered exactly once.
 *   - An open file is held (refs) by each request using it and by each
 *     read parked on it; it is freed at the last drop after RELEASE.
 */
#ifndef IBFS_FS_INT_H
#define IBFS_FS_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>
#include <time.h>

#include "budget.h"
#include "fs.h"

/*
 * Messages up to this size are handed to a parked reader at once, larger
 * ones after the transport's acks (see fs_park_arrived).
 */
#define FS_ANSWER_NOW_MAX (64 * 1024)

/* One message queued on a channel. */
struct fs_msg {
	TAILQ_ENTRY(fs_msg) link;
	char *data;
	size_t len;
	size_t off; /* bytes already read by a short read */
};

/*
 * The heap a queued message holds beyond its payload: its struct fs_msg,
 * and an allocator chunk's header and rounding for each of its two
 * blocks (32 bytes: glibc's smallest chunk on 64 bits).  Every queued
 * message is charged its payload plus this, against queue_limit and
 * memory_limit alike, so that empty messages are not free.
 */
#define FS_MSG_OVERHEAD (sizeof(struct fs_msg) + 2 * 32)

/* What a queued message of len payload bytes is charged. */
static inline uint64_t fs_msg_cost(size_t len)
{
	return (uint64_t)len + FS_MSG_OVERHEAD;
}

struct fs_chan;
struct fs_fh;

/* A read parked on a channel until a message, rm, a signal or a timeout. */
struct fs_waiter {
	TAILQ_ENTRY(fs_waiter) chan_link;
	TAILQ_ENTRY(fs_waiter) all_link;
	fuse_req_t req;
	struct fs_chan *chan;
	struct fs_fh *fh;
	size_t size;
	uint64_t deadline; /* monotonic ms; 0 = none */
	int interrupted;
	/* chosen by fs_deliver, answered by fs_announce */
	char *buf;
	size_t blen;
	int rc;
};

TAILQ_HEAD(fs_waitq, fs_waiter);

/*
 * A poll parked on a channel: the open file it came on and its handle.
 * The kernel's handle names the open file (one per open, shared by every
 * poller of it), so a channel keeps one per open file, the newest.
 */
struct fs_poller {
	struct fs_fh *fh;
	struct fuse_pollhandle *ph;
};

struct fs_node;

/* A write waiting for its peer to be met: the message, copied. */
struct fs_meet {
	TAILQ_ENTRY(fs_meet) link;
	fuse_req_t req;
	struct fs_node *node;
	char chan[CONFIG_NAME_MAX];
	uint64_t deadline; /* monotonic ms: then ENOTCONN or EHOSTUNREACH */
	int interrupted;   /* a signal: the reaper answers EINTR */
	size_t len;
	char buf[];
};

TAILQ_HEAD(fs_meetq, fs_meet);

struct fs_node;

/* MOUNT/NODE/CHAN: a queue of messages and the reads parked on it. */
struct fs_chan {
	LIST_ENTRY(fs_chan) dir_link;
	LIST_ENTRY(fs_chan) hash_link; /* in its node's buckets */
	fuse_ino_t ino;
	struct fs_node *node;
	char name[CONFIG_NAME_MAX];
	TAILQ_HEAD(, fs_msg) msgs;
	size_t queued; /* payload bytes: the file's size */
	uint64_t cost; /* what its messages are charged (fs_msg_cost) */
	struct fs_waitq waiters;
	LIST_HEAD(, fs_fh) opens; /* its open files (fs_chan_size) */
	struct fs_poller *polls;  /* parked polls, one per open file */
	unsigned npolls, cap_polls;
	struct timespec mtime;
	uint64_t nlookup;
	int nopen;
	int unlinked;
	int remote; /* made by a peer's message: counts against max_channels */
};

LIST_HEAD(fs_chan_list, fs_chan);

/* MOUNT/NODE: one per config node, in config order, then MOUNT/all/. */
struct fs_node {
	struct peer *peer; /* NULL: MOUNT/all/ (fs_node_is_all) */
	fuse_ino_t ino;	   /* its directory's; its .status has the next */
	LIST_HEAD(, fs_chan) chans;
	/* its live channels by name (fs_chan_find): nbuckets, a power of
	 * two, grows to stay at least nchans */
	struct fs_chan_list *buckets;
	unsigned nbuckets;
	unsigned nchans;
	unsigned nremote; /* channels this peer's messages created */
	unsigned nparked; /* reads parked on its channels (.status) */
	unsigned nwrites; /* reliable writes to it awaiting the ack */
	unsigned nmeets;  /* writes waiting for it to be met */
};

/* Per open file: a channel reader, or a snapshot of a .status or dir. */
struct fs_fh {
	LIST_ENTRY(fs_fh) link; /* in fs->fhs: freed at unmount if still open */
	struct fs_chan *chan;
	int got;      /* a read on this open returned data: empty means EOF */
	int follow;   /* opened O_RDWR, a conversation: reads always wait */
	int refs;     /* requests and parked reads using it */
	int released; /* RELEASE came: free at the last drop */
	char *buf;
	size_t len;

	/* a channel's, for its size to this reader (fs_chan_size) */
	LIST_ENTRY(fs_fh) chan_link; /* in chan->opens */
	pid_t pid;		     /* the process that opened it */
	int reader;		     /* opened O_RDONLY */
	uint64_t nread;		     /* bytes read through it */
};

struct fs {
	const struct config *cfg;
	struct peer *peers;
	struct fs_node *nodes; /* nnodes config nodes, then all */
	int nnodes;
	struct fs_node *all; /* MOUNT/all/: &nodes[nnodes] */
	struct tp *tp;
	time_t started;

	pthread_mutex_t lock; /* guards every channel, queue and waiter */
	struct budget budget; /* memory_limit, by node index (budget.h) */
	uint32_t hash_seed;   /* of channel names: a peer cannot aim them */
	struct fs_chan **chans;
	size_t nslots;
	fuse_ino_t chan_base;
	fuse_ino_t next_ino;
	struct fs_waitq waiters;
	struct fs_meetq meets;	/* writes waiting for their peer */
	LIST_HEAD(, fs_fh) fhs; /* open files, which a stop never releases */

	/* What fs_deliver decided and fs_announce tells; announce_lock
	 * (taken before lock) keeps a stop from passing a telling */
	pthread_mutex_t announce_lock;
	struct fs_waitq answers;	/* readers to answer, via all_link */
	struct fuse_pollhandle **polls; /* pollers to notify */
	size_t npolls, cap_polls;

	pthread_t reaper;
	pthread_cond_t reaper_cond;
	int reaper_running;
	int stopping;

	struct fuse_session *se;
	int mounted;
	int sighandlers;
};

/*
 * Inode numbers.  The root and its .status have fixed ones; then each
 * config node has FS_NODE_SLOTS, its directory and then its .status, node
 * i's from FS_NODE_INO_BASE + i * FS_NODE_SLOTS, and MOUNT/all/ has the
 * slots of a node nnodes; channels take the numbers after all's
 * (chan_base), one each, never reused.
 */
#define FS_ROOT_INO	    FUSE_ROOT_ID /* 1 */
#define FS_ROOT_STATUS_INO  2
#define FS_ROOT_METRICS_INO 3
#define FS_NODE_INO_BASE    4

/* A node's inodes, by offset from its first. */
enum fs_node_slot {
	FS_SLOT_DIR,	/* MOUNT/NODE/ */
	FS_SLOT_STATUS, /* MOUNT/NODE/.status */
	FS_NODE_SLOTS,
};

/* What an inode number names. */
enum fs_kind {
	FS_NONE, /* nothing (any more) */
	FS_ROOT,
	FS_ROOT_STATUS,
	FS_ROOT_METRICS,
	FS_DIR,
	FS_DIR_STATUS,
	FS_CHAN,
};

/* The inode of node idx's slot; idx == nnodes gives chan_base. */
static inline fuse_ino_t fs_node_ino(int idx, enum fs_node_slot slot)
{
	return FS_NODE_INO_BASE + (fuse_ino_t)idx * FS_NODE_SLOTS + slot;
}

/* Whether node is MOUNT/all/, which is no peer. */
static inline int fs_node_is_all(const struct fs_node *node)
{
	return !node->peer;
}

/* The inode of a node's .status, beside its directory's. */
static inline fuse_ino_t fs_node_status_ino(const struct fs_node *node)
{
	return node->ino - FS_SLOT_DIR + FS_SLOT_STATUS;
}

/* The index of channel inode ino in fs->chans (ino >= chan_base). */
static inline size_t fs_chan_slot(const struct fs *fs, fuse_ino_t ino)
{
	return ino - fs->chan_base;
}

/* Whom a delivery wakes once fs->lock is dropped (fs_park_arrived). */
struct fs_park_wake {
	struct fs_waiter *reader; /* answer now: a small message */
	struct fs_poller *polls;  /* notify now (malloc'ed), npolls of them */
	unsigned npolls;
};

/* ---- fs.c: the tree ---- */

/* The one fuse_lowlevel_ops table (fs_mount.c makes the session). */
const struct fuse_lowlevel_ops *fs_lowlevel_ops(void);

/* Drop a hold on an open file without fs->lock held. */
void fs_fh_drop(struct fs *fs, struct fs_fh *fh);

/* ---- fs_chan.c: channels and their queues ---- */

/* The live (not unlinked) channel of node called name, or NULL: one
 * hash bucket's chain, whatever the number of channels. */
struct fs_chan *fs_chan_find(struct fs *fs, struct fs_node *node,
			     const char *name);

/* Make channel name in node (remote: a peer's message made it); -ENOSPC
 * past max_channels of that kind (fs_chan.c). */
int fs_chan_new(struct fs *fs, struct fs_node *node, const char *name,
		int remote, struct fs_chan **out);

/* Free c if it is unlinked and nothing refers to it any more. */
void fs_chan_maybe_free(struct fs *fs, struct fs_chan *c);

/* rm: take c out of its directory and discard its queue. */
void fs_chan_unlink(struct fs *fs, struct fs_chan *c);

/* FORGET of n lookups of c. */
void fs_chan_forget(struct fs *fs, struct fs_chan *c, uint64_t n);

/* A message of len bytes at data, not queued yet; no lock needed. */
struct fs_msg *fs_chan_msg(void *data, size_t len);

/* Queue message m on node's channel name, made if need be; 0 or the
 * refusals fs_deliver returns (fs.h). */
int fs_chan_queue(struct fs *fs, struct fs_node *node, const char *name,
		  struct fs_msg *m, struct fs_chan **out);

/* Take up to size bytes of c's head message into *out (*len bytes). */
int fs_chan_take(struct fs *fs, struct fs_chan *c, size_t size, char **out,
		 size_t *len);

/* Put m back at the head of c's queue: a reply refused it. */
void fs_chan_unread(struct fs *fs, struct fs_chan *c, struct fs_msg *m);

/* An open file on chan for req, set up in fi; NULL without memory. */
struct fs_fh *fs_chan_open(struct fs *fs, struct fs_chan *chan, fuse_req_t req,
			   struct fuse_file_info *fi);

/*
 * c's st_size for a stat(2) by process pid, or through open file fh
 * (NULL: not known): the bytes queued, plus what the asker's own
 * read-only open of c read so far, so that tail -f sees a size that
 * never shrinks (under fs->lock).
 */
uint64_t fs_chan_size(const struct fs_chan *c, const struct fs_fh *fh,
		      pid_t pid);

/* Send a write request's bytes to c's node (fs->lock not held). */
void fs_chan_write(struct fs *fs, fuse_req_t req, struct fs_chan *c,
		   const char *buf, size_t size, int nonblock);

/*
 * Send buf to node's channel name for req, answering it (or handing it to
 * a reliable completion); -ENOTCONN, with req not answered, when the peer
 * is not up.  fs->lock not held.
 */
int fs_chan_send(struct fs *fs, fuse_req_t req, struct fs_node *node,
		 const char *name, const char *buf, size_t size, int nonblock);

/* Answer a datagram write (rc 0: size bytes), then tp_flush. */
void fs_chan_answer(struct fs *fs, fuse_req_t req, int rc, size_t size);

/* Free every channel (fs_close). */
void fs_chan_free_all(struct fs *fs);

/* ---- fs_park.c: parked reads, polls and reliable writes ---- */

/* Start the reaper (fs_open); 0 or -errno. */
int fs_park_start(struct fs *fs);

/*
 * Stop the reaper, answer every parked reader with ENOTCONN, tell what
 * fs_deliver left, and drop the parked polls (they point into the
 * session): fs_unmount, before the session goes.
 */
void fs_park_stop(struct fs *fs);

/* Free what fs_park_start and the pollers left (fs_close). */
void fs_park_close(struct fs *fs);

/* Read a channel: a message now, EOF/EAGAIN, or park; drops fh's hold. */
void fs_park_read(struct fs *fs, fuse_req_t req, struct fs_fh *fh, size_t size,
		  int nonblock);

/*
 * Send a reliable write to node's channel name; answered once the peer
 * acked it.  -ENOTCONN, req not answered, when the peer is not up.
 */
int fs_park_write(struct fs *fs, fuse_req_t req, struct fs_node *node,
		  const char *name, const char *buf, size_t size, int nonblock);

/*
 * POLLIN if c is readable now, else park ph on it for open file fh,
 * replacing fh's older handle (under fs->lock).
 */
unsigned fs_park_poll(struct fs_chan *c, struct fs_fh *fh,
		      struct fuse_pollhandle *ph);

/* Drop every poll parked on c, telling none (under fs->lock or alone). */
void fs_park_poll_drop(struct fs_chan *c);

/* Move the reads parked on fh onto q: RELEASE came (under fs->lock). */
void fs_park_release(struct fs *fs, struct fs_fh *fh, struct fs_waitq *q);

/* Move every read parked on c onto q: rm (under fs->lock). */
void fs_park_unlinked(struct fs *fs, struct fs_chan *c, struct fs_waitq *q);

/* Answer every waiter of q with err (0: EOF) and free it; no lock. */
void fs_park_end_all(struct fs *fs, struct fs_waitq *q, int err);

/*
 * A message of len bytes was queued on c (under fs->lock): choose the
 * reader and the poller it wakes, into *wake now or fs->answers and
 * fs->polls for fs_announce when it is large.
 */
void fs_park_arrived(struct fs *fs, struct fs_chan *c, size_t len,
		     struct fs_park_wake *wake);

/* Answer and notify what fs_park_arrived chose; fs->lock dropped. */
void fs_park_tell(struct fs *fs, struct fs_park_wake *wake);

/* Answer the readers and pollers fs_park_arrived left for later. */
void fs_park_announce(struct fs *fs);

/* ---- fs_meet.c: writes to peers not met yet ---- */

/*
 * node's peer is not up: park the write (a copy of buf) until it is, for
 * peer_timeout at most; O_NONBLOCK writers get EAGAIN.  fs->lock not held.
 */
void fs_meet_park(struct fs *fs, fuse_req_t req, struct fs_node *node,
		  const char *name, const char *buf, size_t size, int nonblock);

/*
 * Unlink the meets due by now (or interrupted) onto out (under
 * fs->lock); the earliest deadline still ahead, or next when that is
 * earlier (0: none).
 */
uint64_t fs_meet_due(struct fs *fs, uint64_t now, struct fs_meetq *out,
		     uint64_t next);

/* Answer every meet of q: EINTR when interrupted, else err when nonzero,
 * else its peer's error; no lock held. */
void fs_meet_fail_all(struct fs *fs, struct fs_meetq *q, int err);

/* ---- fs_all.c: MOUNT/all/ ---- */

/*
 * Send a write to every node (see fs_all.c), answering req; -ENOTCONN,
 * req not answered, while a node is still being met, unless force (the
 * wait is over: send to those up).  fs->lock not held.
 */
int fs_all_send(struct fs *fs, fuse_req_t req, const char *name,
		const char *buf, size_t size, int force);

/* Whether an all/ write must still wait for a node to be met; takes
 * peer locks only, so it may run under fs->lock. */
int fs_all_waiting(struct fs *fs);

/* ---- fs_status.c: the .status files ---- */

/*
 * The text of NODE/.status (node), or of MOUNT/.status (node NULL), into
 * *buf (malloc'ed, *len bytes).  Called under fs->lock, which it never
 * takes; it takes the peer's lock.  0 or -errno.
 */
int fs_status_render(struct fs *fs, struct fs_node *node, char **buf,
		     size_t *len);

/* ---- fs_metrics.c: MOUNT/.metrics ---- */

/*
 * The text of MOUNT/.metrics into *buf (malloc'ed, *len bytes), as
 * fs_status_render: under fs->lock, taking peer locks.  0 or -errno.
 */
int fs_metrics_render(struct fs *fs, char **buf, size_t *len);

#endif
