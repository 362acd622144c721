/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Private to the file system's files, from the top of their call graph
 * down; each calls only those below it (a lower file that needs a
 * higher one gets it through a hook set at open, as fs_mount.c gets the
 * operations table through fs->ops):
 *
 *   fs.c         the tree: inode numbers, node directories, attributes,
 *                listings; the one fuse_lowlevel_ops table; fs_open and
 *                fs_close
 *   fs_mount.c   the session: mount, loop, unmount (fs.h's fs_mount,
 *                fs_loop, fs_unmount)
 *   fs_status.c  the text of MOUNT/.status and MOUNT/NODE/.status
 *                (prefix fs_status_)
 *   fs_metrics.c the text of MOUNT/.metrics, Prometheus's (prefix
 *                fs_metrics_)
 *   fs_park.c    the receive side: fs_deliver and fs_announce, reads
 *                parked until a message comes, polls parked until one is
 *                queued, and the reaper thread, which ends interrupted or
 *                timed-out reads and writes (prefix fs_park_)
 *   fs_write.c   a write, from its request to its one reply: sent at
 *                once, or a struct fs_write MEETING its peer or awaiting
 *                its ACK; all/ as a parent with a child per copy;
 *                fs_peer_up and fs_peer_failed (prefix fs_write_)
 *   fs_all.c     MOUNT/all/: who a write to every node reaches and how,
 *                through the multicast group or one copy each (prefix
 *                fs_all_)
 *   fs_chan.c    channels: their inode slots, message queues and limits,
 *                and the files open on them (prefixes fs_chan_, fs_fh_)
 *
 * Threads, and what each calls:
 *   FUSE workers  every fs_op_* of fs.c, and through them fs_write_start,
 *                 fs_park_read, fs_park_poll, fs_status_render and
 *                 fs_metrics_render; an interrupt callback
 *                 (fs_park_interrupt, fs_write_interrupt) on the worker
 *                 that took INTERRUPT
 *   progress      the transport's thread: fs_deliver and fs_announce,
 *                 with no transport lock held (transport.h)
 *   bootstrap     fs_peer_up (tp_ops.peer_up, no lock held): sends the
 *                 writes MEETING that peer; fs_peer_failed
 *                 (tp_ops.peer_failed): all/ writes that waited for it
 *   completions   a reliable write's completion (fs_write_done) runs on
 *                 the progress thread when the ack comes, inside
 *                 tp_send_async on the writing worker, on the bootstrap
 *                 thread when the peer goes down or restarts, and in
 *                 tp_close
 *   reaper        fs_park's reaper: EINTR for interrupted reads and
 *                 writes, EOF for reads past read_timeout, and
 *                 fs_write_fail for writes not met within peer_timeout
 *                 (ENOTCONN or EHOSTUNREACH; all/ goes to those up)
 *   main          fs_open, fs_set_transport, fs_mount, fs_loop,
 *                 fs_unmount, fs_close
 *
 * Locks, in the order they nest (outer first):
 *   announce_lock -> fs->lock -> peer->lock
 * Each field says which guards it where it is declared: "fs->lock"; none
 * said is fixed once set (fs_open, or fs_set_transport before the mount,
 * or the open's answer for an open file).  The reaper sleeps on
 * reaper_cond with fs->lock.  peer->lock (peer.h) is taken under
 * fs->lock only by the .status rendering and the all/ checks (fs_all.c);
 * nothing takes fs->lock while holding a peer lock.
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
 *   - Under fs->lock the only transport calls are tp_info, tp_totals,
 *     tp_fabric (no lock), tp_mcast_get and tp_info_get (each a leaf
 *     lock of its own):
 *     a reliable write's
 *     completion, which takes fs->lock, may run inside tp_send_async, so
 *     sends go out with fs->lock dropped.
 *   - fuse_req_interrupt_func is never called under fs->lock: for a
 *     request already interrupted it calls the callback at once, and the
 *     callback takes fs->lock.  The callback only marks its waiter and
 *     wakes the reaper, which owns the EINTR reply.
 *   - Whoever unlinks a waiter or a MEETING write from its list under
 *     fs->lock owns its reply: every request is answered exactly once.
 *   - An open file is held (refs) by its open until RELEASE, by each
 *     request using it and by each read parked on it; the drop that
 *     takes refs to zero frees it, under fs->lock.  A hold needs no lock:
 *     it is taken only by a request on the open file, which holds it
 *     already.
 */
#ifndef IBFS_FS_INT_H
#define IBFS_FS_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>
#include <time.h>

#include "budget.h"
#include "freelist.h"
#include "fs.h"

/*
 * Messages up to this size are handed to a parked reader at once, larger
 * ones after the transport's acks (see fs_park_arrived).
 */
#define FS_ANSWER_NOW_MAX (64 * 1024)

/*
 * Freed queued messages and parked reads kept for the next (struct
 * freelist): one of each comes and goes with every message received, and
 * a burst leaves at most this many of each behind.
 */
#define FS_FREE_KEEP 128

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

/*
 * A read parked on a channel until a message, rm, a signal or a timeout.
 * Linked under fs->lock; once unlinked its fields are its taker's.
 */
struct fs_waiter {
	TAILQ_ENTRY(fs_waiter) chan_link; /* fs->lock */
	TAILQ_ENTRY(fs_waiter) all_link;  /* fs->lock */
	fuse_req_t req;
	struct fs_chan *chan;
	struct fs_fh *fh;
	size_t size;
	uint64_t deadline; /* monotonic ms; 0 = none */
	int interrupted;   /* fs->lock */
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

/* A write that waits: MEETING its peer or awaiting its ACK (fs_write.c). */
struct fs_write;

TAILQ_HEAD(fs_writeq, fs_write);

struct fs_node;

/* MOUNT/NODE/CHAN: a queue of messages and the reads parked on it. */
struct fs_chan {
	LIST_ENTRY(fs_chan) dir_link;  /* fs->lock */
	LIST_ENTRY(fs_chan) hash_link; /* fs->lock: in its node's buckets */
	fuse_ino_t ino;
	uint64_t generation; /* with ino, unique for the mount's life */
	struct fs_node *node;
	char name[CONFIG_NAME_MAX];
	TAILQ_HEAD(, fs_msg) msgs; /* fs->lock */
	size_t queued;		  /* fs->lock: payload bytes, the file's size */
	uint64_t cost;		  /* fs->lock: what its messages are charged */
	struct fs_waitq waiters;  /* fs->lock */
	LIST_HEAD(, fs_fh) opens; /* fs->lock: its open files (fs_chan_size) */
	struct fs_poller *polls;  /* fs->lock: parked, one per open file */
	unsigned npolls, cap_polls; /* fs->lock */
	struct timespec mtime;	    /* fs->lock */
	uint64_t nlookup;	    /* fs->lock */
	int nopen;		    /* fs->lock */
	int unlinked;		    /* fs->lock */
	int remote; /* fs->lock: made by a peer's message (max_channels) */
};

LIST_HEAD(fs_chan_list, fs_chan);

/* MOUNT/NODE: made when first used (fs_node_get: looked up, written to,
 * delivered from), so that a config node never used costs a pointer in
 * fs->nodes; MOUNT/all/'s at open.  Freed at fs_close alone. */
struct fs_node {
	struct peer *peer; /* NULL: MOUNT/all/ (fs_node_is_all) */
	fuse_ino_t ino;	   /* its directory's; its .status has the next */
	LIST_HEAD(, fs_chan) chans; /* fs->lock */
	/* fs->lock: its live channels by name (fs_chan_find): nbuckets, a
	 * power of two, grows to stay at least nchans */
	struct fs_chan_list *buckets;
	unsigned nbuckets; /* fs->lock */
	unsigned nchans;   /* fs->lock */
	unsigned nremote;  /* fs->lock: channels this peer's messages made */
	unsigned nparked;  /* fs->lock: reads parked on its channels */
	unsigned nwrites;  /* fs->lock: writes to it awaiting the ACK */
	unsigned nmeets;   /* fs->lock: writes MEETING it */
};

/* Per open file: a channel reader, or a snapshot of a .status or dir. */
struct fs_fh {
	LIST_ENTRY(fs_fh) link; /* fs->lock: in fs->fhs, freed at unmount */
	struct fs_chan *chan;
	int got;    /* fs->lock: a read returned data; empty means EOF */
	int follow; /* opened O_RDWR, a conversation: reads always wait */
	/* its open until RELEASE, the requests and parked reads using it:
	 * atomic, so that a request holds it without fs->lock */
	atomic_int refs;
	char *buf;
	size_t len;

	/* a channel's, for its size to this reader (fs_chan_size) */
	LIST_ENTRY(fs_fh) chan_link; /* fs->lock: in chan->opens */
	pid_t pid;		     /* the process that opened it */
	int reader;		     /* opened O_RDONLY */
	uint64_t nread;		     /* fs->lock: bytes read through it */
};

struct fs {
	const struct config *cfg;
	const struct fuse_lowlevel_ops *ops; /* fs.c's, for fs_mount.c */
	struct peer *peers;
	/* fs->lock: nnodes config nodes, then all; NULL until fs_node_get */
	struct fs_node **nodes;
	int nnodes;
	struct fs_node *all; /* MOUNT/all/: nodes[nnodes], made at open */
	struct tp *tp;
	time_t started;

	pthread_mutex_t lock;	/* what it guards says "fs->lock" */
	struct budget budget;	/* fs->lock: memory_limit, by node index */
	uint32_t hash_seed;	/* of channel names: a peer cannot aim them */
	struct fs_chan **chans; /* fs->lock: by inode, from chan_base */
	size_t nslots;		/* fs->lock */
	/* fs->lock: the slots below next_ino that a freed channel left,
	 * taken first (as many as nslots, at most) */
	size_t *free_slots;
	size_t nfree;
	fuse_ino_t chan_base;
	fuse_ino_t next_ino;	 /* fs->lock */
	uint64_t generations;	 /* fs->lock: channels ever made */
	struct fs_waitq waiters; /* fs->lock: every parked read */
	/* fs->lock: struct fs_msg and struct fs_waiter freed, for reuse
	 * (fs_chan_msg, fs_park_read) */
	struct freelist free_msgs;
	struct freelist free_waiters;
	struct fs_writeq writes; /* fs->lock: the writes MEETING */
	/* fs->lock: open files, which a stop never releases */
	LIST_HEAD(, fs_fh) fhs;

	/* What fs_deliver decided and fs_announce tells; announce_lock
	 * (taken before lock) is held across the telling, so that a stop
	 * cannot pass one still going on */
	pthread_mutex_t announce_lock;
	struct fs_waitq answers;	/* fs->lock: readers, via all_link */
	struct fuse_pollhandle **polls; /* fs->lock: pollers to notify */
	size_t npolls, cap_polls;	/* fs->lock */

	pthread_t reaper;
	pthread_cond_t reaper_cond; /* waited on with fs->lock */
	int reaper_running;	    /* main thread only */
	int stopping;		    /* fs->lock */

	struct fuse_session *se;
	int mounted;
	int sighandlers;
};

/*
 * Inode numbers.  The root and its .status have fixed ones; then each
 * config node has FS_NODE_SLOTS, its directory and then its .status, node
 * i's from FS_NODE_INO_BASE + i * FS_NODE_SLOTS, and MOUNT/all/ has the
 * slots of a node nnodes; channels take the numbers after all's
 * (chan_base), one each; a channel's number is reused once it is freed,
 * when the kernel holds no reference to it (fs_chan_maybe_free), so that
 * the table stays as large as the channels that live at once.
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

/* ---- fs_chan.c: channels, their queues and open files ---- */

/* Node i's directory (i == nnodes: all/), made on first use; NULL without
 * memory.  Under fs->lock. */
struct fs_node *fs_node_get(struct fs *fs, int i);

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

/* A message of len bytes at data, not queued yet, NULL without memory;
 * under fs->lock, as is fs_chan_msg_free, which frees m but not its
 * data. */
struct fs_msg *fs_chan_msg(struct fs *fs, void *data, size_t len);
void fs_chan_msg_free(struct fs *fs, struct fs_msg *m);

/* Queue message m on node's channel name, made if need be; 0 or the
 * refusals fs_deliver returns (fs.h). */
int fs_chan_queue(struct fs *fs, struct fs_node *node, const char *name,
		  struct fs_msg *m, struct fs_chan **out);

/* Take up to size bytes of c's head message into *out (*len bytes). */
int fs_chan_take(struct fs *fs, struct fs_chan *c, size_t size, char **out,
		 size_t *len);

/* Put m back at the head of c's queue: a reply refused it. */
void fs_chan_unread(struct fs *fs, struct fs_chan *c, struct fs_msg *m);

/* A new open file (not a channel's), held once, by its open, until
 * RELEASE; NULL without memory. */
struct fs_fh *fs_fh_new(void);

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

/* Drop every poll parked on c, telling none (under fs->lock or alone). */
void fs_chan_polls_drop(struct fs_chan *c);

/* Hold the open file of fi across a request (no lock needed). */
struct fs_fh *fs_fh_hold(struct fs *fs, struct fuse_file_info *fi);

/* Drop a hold on an open file, under fs->lock (_locked) or not (then
 * fs->lock is taken only by the last drop, which frees it); RELEASE drops
 * its open's. */
void fs_fh_drop_locked(struct fs *fs, struct fs_fh *fh);
void fs_fh_drop(struct fs *fs, struct fs_fh *fh);

/* Free an open file nobody uses any more (under fs->lock). */
void fs_fh_destroy(struct fs *fs, struct fs_fh *fh);

/* Free every channel (fs_close). */
void fs_chan_free_all(struct fs *fs);

/* ---- fs_park.c: the receive side, parked reads and polls, the reaper ---- */

/* Start the reaper (fs_open); 0 or -errno. */
int fs_park_start(struct fs *fs);

/*
 * Stop the reaper, answer every parked reader with ENOTCONN and every
 * write MEETING its peer (fs_write_stop), tell what fs_deliver left, and
 * drop the parked polls (they point into the session): fs_unmount,
 * before the session goes.
 */
void fs_park_stop(struct fs *fs);

/* Free what fs_park_start and the pollers left (fs_close). */
void fs_park_close(struct fs *fs);

/* Read a channel: a message now, EOF/EAGAIN, or park; drops fh's hold. */
void fs_park_read(struct fs *fs, fuse_req_t req, struct fs_fh *fh, size_t size,
		  int nonblock);

/*
 * POLLIN if c is readable now, else park ph on it for open file fh,
 * replacing fh's older handle (under fs->lock).
 */
unsigned fs_park_poll(struct fs_chan *c, struct fs_fh *fh,
		      struct fuse_pollhandle *ph);

/* Move the reads parked on fh onto q: RELEASE came (under fs->lock). */
void fs_park_release(struct fs *fs, struct fs_fh *fh, struct fs_waitq *q);

/* Move every read parked on c onto q: rm (under fs->lock). */
void fs_park_unlinked(struct fs *fs, struct fs_chan *c, struct fs_waitq *q);

/* Answer every waiter of q with err (0: EOF) and free it; no lock. */
void fs_park_end_all(struct fs *fs, struct fs_waitq *q, int err);

/* ---- fs_write.c: a write, from its request to its one reply ---- */

/*
 * write(2) of size bytes at buf on open channel c (NULL: EBADF): sent
 * and answered now, or a struct fs_write that waits, MEETING its peer
 * (O_NONBLOCK: EAGAIN instead) or awaiting its ACK.  No lock held.
 */
void fs_write_start(struct fs *fs, fuse_req_t req, struct fs_chan *c,
		    const char *buf, size_t size, int nonblock);

/*
 * Unlink the MEETING writes due by now (or interrupted) onto out (under
 * fs->lock); the earliest deadline still ahead, or next when that is
 * earlier (0: none).  The reaper's.
 */
uint64_t fs_write_due(struct fs *fs, uint64_t now, struct fs_writeq *out,
		      uint64_t next);

/* End every write of q (no lock held): EINTR when interrupted, else err
 * (-errno) when nonzero, else all/ goes to the nodes up and a unicast
 * write gets its peer's error (ENOTCONN or EHOSTUNREACH). */
void fs_write_fail(struct fs *fs, struct fs_writeq *q, int err);

/* Fail every MEETING write with ENOTCONN: the daemon stops. */
void fs_write_stop(struct fs *fs);

/* ---- fs_all.c: who MOUNT/all/ reaches and how ---- */

/* Whether an all/ write must still wait for a node to be met; takes
 * peer locks only, so it may run under fs->lock. */
int fs_all_waiting(struct fs *fs);

/* Ask every node not up to be met (no lock held); fs_all_waiting. */
int fs_all_meeting(struct fs *fs);

/* Whether some up node takes less than size bytes (peer locks only). */
int fs_all_too_big(struct fs *fs, size_t size);

/* The group and our own copy, when it can carry the write: 0 or -errno
 * to answer it with; 1 when it cannot (one copy per node instead). */
int fs_all_group(struct fs *fs, const char *name, const char *buf, size_t size);

/* ---- fs_status.c: the .status files ---- */

/*
 * The text of NODE/.status (node), or of MOUNT/.status (node NULL), into
 * *buf (malloc'ed, *len bytes).  Called under fs->lock, which it never
 * takes; it takes the peer's lock.  0 or -errno.
 */
int fs_status_render(struct fs *fs, struct fs_node *node, char **buf,
		     size_t *len);

/*
 * The bytes the daemon holds from malloc, every arena and every mmap'd
 * block, chunk headers included: .status's heap_bytes and .metrics's
 * ibfs_heap_bytes.  Any thread; mallinfo2 walks the free lists.
 */
size_t fs_heap_bytes(void);

/* ---- fs_metrics.c: MOUNT/.metrics ---- */

/*
 * The text of MOUNT/.metrics into *buf (malloc'ed, *len bytes), as
 * fs_status_render: under fs->lock, taking peer locks.  0 or -errno.
 */
int fs_metrics_render(struct fs *fs, char **buf, size_t *len);

#endif
