/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Channels, the files of a node's directory, and the files open on them:
 * each channel a queue of the messages
 * its node sent on it, in order, with an inode slot of its own in
 * fs->chans, and a place in its node's hash buckets, by name.  A peer's
 * messages make channels up to max_channels, and the mounting user's
 * O_CREATs as many again of their own; each message is charged its
 * payload plus FS_MSG_OVERHEAD, against its channel's queue_limit and
 * against memory_limit (fs->budget: the sending peer's share of the
 * daemon).  A removed channel lives on, unlinked, until no lookup, open
 * or parked read refers to it.  An open file (struct fs_fh) is held by
 * its open until RELEASE, by each request using it and each read parked
 * on it, and freed by the last drop.  Everything here runs under fs->lock
 * (lock rules: the top of fs_int.h) but fs_fh_new, fs_fh_hold and
 * fs_fh_drop, which takes it only for the last drop, and
 * fs_chan_free_all, at close.  A struct fs_msg is made by fs_chan_msg
 * and goes back by fs_chan_msg_free alone, to fs->free_msgs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fs_int.h"
#include "util.h"

/* The bucket of name in node: seeded FNV-1a, so that a peer cannot
 * choose names that all fall in one. */
static struct fs_chan_list *fs_chan_bucket(const struct fs *fs,
					   const struct fs_node *node,
					   const char *name)
{
	uint32_t h = 2166136261u ^ fs->hash_seed;

	for (; *name; name++)
		h = (h ^ (uint8_t)*name) * 16777619u;
	h ^= h >> 15;
	return &node->buckets[h & (node->nbuckets - 1)];
}

/* Find a live (not unlinked) channel of node by name. */
struct fs_chan *fs_chan_find(struct fs *fs, struct fs_node *node,
			     const char *name)
{
	struct fs_chan *c;

	if (!node->nbuckets)
		return NULL;
	LIST_FOREACH (c, fs_chan_bucket(fs, node, name), hash_link)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/* Make room in node's buckets for one more channel: double them, moving
 * every live channel over, when they would hold more than one each. */
static int fs_chan_hash_grow(struct fs *fs, struct fs_node *node)
{
	unsigned n = node->nbuckets ? node->nbuckets * 2 : 16, i;
	struct fs_chan_list *old = node->buckets;
	struct fs_chan *c;

	if (node->nchans < node->nbuckets)
		return 0;
	node->buckets = calloc(n, sizeof(*node->buckets));
	if (!node->buckets) {
		node->buckets = old;
		return -ENOMEM;
	}
	node->nbuckets = n;
	for (i = 0; i < n; i++)
		LIST_INIT(&node->buckets[i]);
	LIST_FOREACH (c, &node->chans, dir_link)
		LIST_INSERT_HEAD(fs_chan_bucket(fs, node, c->name), c,
				 hash_link);
	free(old);
	return 0;
}

/*
 * A slot of fs->chans for a new channel: one a freed channel left, else
 * the next, the table doubling as needed; the free list grows with it,
 * so that giving a slot back never fails.
 */
static int fs_chan_slot_take(struct fs *fs, size_t *slot)
{
	size_t n = fs->nslots ? fs->nslots * 2 : 64;
	struct fs_chan **grown;
	size_t *free_grown;

	if (fs->nfree) {
		*slot = fs->free_slots[--fs->nfree];
		return 0;
	}
	*slot = fs_chan_slot(fs, fs->next_ino);
	if (*slot >= fs->nslots) {
		free_grown = realloc(fs->free_slots, n * sizeof(*free_grown));
		if (!free_grown)
			return -ENOMEM;
		fs->free_slots = free_grown;
		grown = realloc(fs->chans, n * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		memset(grown + fs->nslots, 0,
		       (n - fs->nslots) * sizeof(*grown));
		fs->chans = grown;
		fs->nslots = n;
	}
	fs->next_ino++;
	return 0;
}

/* Slot, its channel freed, for the next channel made. */
static void fs_chan_slot_give(struct fs *fs, size_t slot)
{
	fs->chans[slot] = NULL;
	fs->free_slots[fs->nfree++] = slot;
}

/*
 * Make a channel in node.  A peer's messages may create at most
 * max_channels (-ENOSPC beyond: the message is dropped), so no peer can
 * exhaust our memory; the mounting user's own O_CREATs as many again
 * (-ENOSPC to the open), counted apart, so that neither side can take
 * the other's: a local user cannot grow the daemon without bound either.
 */
int fs_chan_new(struct fs *fs, struct fs_node *node, const char *name,
		int remote, struct fs_chan **out)
{
	unsigned mine = remote ? node->nremote : node->nchans - node->nremote;
	struct fs_chan *c;
	size_t slot;
	int rc;

	if (mine >= fs->cfg->max_channels)
		return -ENOSPC;
	rc = fs_chan_hash_grow(fs, node);
	if (rc)
		return rc;
	rc = fs_chan_slot_take(fs, &slot);
	if (rc)
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c) {
		fs_chan_slot_give(fs, slot);
		return -ENOMEM;
	}
	c->ino = fs->chan_base + slot;
	/* the kernel tells a reused number apart by it (NFS export) */
	c->generation = ++fs->generations;
	c->node = node;
	snprintf(c->name, sizeof(c->name), "%s", name);
	TAILQ_INIT(&c->msgs);
	TAILQ_INIT(&c->waiters);
	LIST_INIT(&c->opens);
	clock_gettime(CLOCK_REALTIME, &c->mtime);
	LIST_INSERT_HEAD(&node->chans, c, dir_link);
	LIST_INSERT_HEAD(fs_chan_bucket(fs, node, name), c, hash_link);
	node->nchans++;
	c->remote = remote;
	node->nremote += remote;
	fs->chans[slot] = c;
	*out = c;
	return 0;
}

/* The budget slot of the peer whose messages c holds. */
static int fs_chan_peer(const struct fs *fs, const struct fs_chan *c)
{
	return c->node->peer ? c->node->peer->idx : fs->nnodes;
}

struct fs_node *fs_node_get(struct fs *fs, int i)
{
	struct fs_node *node = fs->nodes[i];

	if (node)
		return node;
	node = calloc(1, sizeof(*node));
	if (!node)
		return NULL;
	node->peer = i < fs->nnodes ? &fs->peers[i] : NULL;
	node->ino = fs_node_ino(i, FS_SLOT_DIR);
	LIST_INIT(&node->chans);
	fs->nodes[i] = node;
	return node;
}

/* m leaves c's queue: give back what it was charged. */
static void fs_chan_uncharge(struct fs *fs, struct fs_chan *c,
			     const struct fs_msg *m)
{
	uint64_t cost = fs_msg_cost(m->len);

	c->cost -= cost;
	budget_give(&fs->budget, fs_chan_peer(fs, c), cost);
}

/* Throw away every queued message (rm, shutdown). */
static void fs_chan_discard(struct fs *fs, struct fs_chan *c)
{
	struct fs_msg *m;

	while ((m = TAILQ_FIRST(&c->msgs))) {
		TAILQ_REMOVE(&c->msgs, m, link);
		fs_chan_uncharge(fs, c, m);
		free(m->data);
		fs_chan_msg_free(fs, m);
	}
	c->queued = 0;
}

/* Free an unlinked channel once no lookup or open refers to it. */
void fs_chan_maybe_free(struct fs *fs, struct fs_chan *c)
{
	if (!c->unlinked || c->nlookup || c->nopen || !TAILQ_EMPTY(&c->waiters))
		return;
	fs_chan_slot_give(fs, fs_chan_slot(fs, c->ino));
	fs_chan_discard(fs, c);
	fs_chan_polls_drop(c);
	free(c);
}

/* Take c out of its directory: rm, which discards its queue. */
void fs_chan_unlink(struct fs *fs, struct fs_chan *c)
{
	if (c->unlinked)
		return;
	LIST_REMOVE(c, dir_link);
	LIST_REMOVE(c, hash_link);
	c->node->nchans--;
	c->node->nremote -= c->remote;
	c->unlinked = 1;
	fs_chan_discard(fs, c);
}

/* The kernel dropped n of its references to c: free it at zero if gone. */
void fs_chan_forget(struct fs *fs, struct fs_chan *c, uint64_t n)
{
	c->nlookup = c->nlookup > n ? c->nlookup - n : 0;
	fs_chan_maybe_free(fs, c);
}

/* A message holding len bytes of data (which it owns once queued). */
struct fs_msg *fs_chan_msg(struct fs *fs, void *data, size_t len)
{
	struct fs_msg *m = freelist_get(&fs->free_msgs);

	if (m)
		*m = (struct fs_msg){.data = data, .len = len};
	return m;
}

/* m, out of every queue, is kept for the next (its data is not m's). */
void fs_chan_msg_free(struct fs *fs, struct fs_msg *m)
{
	freelist_put(&fs->free_msgs, m);
}

/*
 * Whether c takes a message costing cost more: within queue_limit (an
 * empty channel takes any one message, max_message being at most
 * queue_limit), then within the peer's memory_limit share (charged).
 */
static int fs_chan_charge(struct fs *fs, struct fs_chan *c, uint64_t cost)
{
	int rc;

	if (c->cost && c->cost + cost > fs->cfg->queue_limit)
		return -EAGAIN;
	rc = budget_take(&fs->budget, fs_chan_peer(fs, c), cost);
	if (!rc)
		c->cost += cost;
	return rc;
}

/*
 * Queue m on node's channel called name, making it if need be (a peer's
 * channel, within max_channels); under lock.  The refusals are
 * fs_deliver's (fs.h), one code per cause: -EINVAL when the name is no
 * name, -ENOSPC beyond max_channels, -EMSGSIZE when m is larger than
 * queue_limit, -EAGAIN while the channel holds too much to take m now,
 * -ENOBUFS past memory_limit or the peer's share of it.  A channel made
 * for a refused message goes again.
 */
int fs_chan_queue(struct fs *fs, struct fs_node *node, const char *name,
		  struct fs_msg *m, struct fs_chan **out)
{
	struct fs_chan *c = fs_chan_find(fs, node, name);
	int made = !c, rc;

	if (!c && util_name_problem(name))
		return -EINVAL;
	if (!c) {
		rc = fs_chan_new(fs, node, name, 1, &c);
		if (rc)
			return rc;
	}
	if (m->len > fs->cfg->queue_limit)
		rc = -EMSGSIZE; /* would never fit: not worth a retry */
	else
		rc = fs_chan_charge(fs, c, fs_msg_cost(m->len));
	if (rc) {
		if (made) {
			fs_chan_unlink(fs, c);
			fs_chan_maybe_free(fs, c);
		}
		return rc;
	}
	TAILQ_INSERT_TAIL(&c->msgs, m, link);
	c->queued += m->len;
	/* Coarse: a tick is fine for ls, and the precise clock may trap
	 * into the kernel (HPET) on every message. */
	clock_gettime(CLOCK_REALTIME_COARSE, &c->mtime);
	*out = c;
	return 0;
}

/*
 * Take up to size bytes of the head message for a reader.  Copies into
 * *out (malloc'ed) only when a short read splits a message; otherwise the
 * whole message buffer is handed over.
 */
int fs_chan_take(struct fs *fs, struct fs_chan *c, size_t size, char **out,
		 size_t *len)
{
	struct fs_msg *m = TAILQ_FIRST(&c->msgs);
	size_t left = m->len - m->off;

	if (left <= size && m->off == 0) {
		*out = m->data;
		*len = m->len;
	} else {
		size_t n = left < size ? left : size;

		*out = malloc(n ? n : 1);
		if (!*out)
			return -ENOMEM;
		memcpy(*out, m->data + m->off, n);
		*len = n;
		m->off += n;
		c->queued -= n;
		if (m->off < m->len)
			return 0;
		free(m->data);
		TAILQ_REMOVE(&c->msgs, m, link);
		fs_chan_uncharge(fs, c, m);
		fs_chan_msg_free(fs, m);
		return 0;
	}
	c->queued -= m->len;
	TAILQ_REMOVE(&c->msgs, m, link);
	fs_chan_uncharge(fs, c, m);
	fs_chan_msg_free(fs, m);
	return 0;
}

/* Put m, bytes a refused reply took, back at the head of c's queue:
 * charged again whatever the limits, as they were a moment ago. */
void fs_chan_unread(struct fs *fs, struct fs_chan *c, struct fs_msg *m)
{
	uint64_t cost = fs_msg_cost(m->len);

	TAILQ_INSERT_HEAD(&c->msgs, m, link);
	c->queued += m->len;
	c->cost += cost;
	budget_force(&fs->budget, fs_chan_peer(fs, c), cost);
}

/* A zeroed open file, held by its open. */
struct fs_fh *fs_fh_new(void)
{
	struct fs_fh *fh = calloc(1, sizeof(*fh));

	if (fh)
		atomic_init(&fh->refs, 1);
	return fh;
}

/* Attach an open file to chan, opened by req's process; under lock. */
struct fs_fh *fs_chan_open(struct fs *fs, struct fs_chan *chan, fuse_req_t req,
			   struct fuse_file_info *fi)
{
	struct fs_fh *fh = fs_fh_new();

	if (!fh)
		return NULL;
	LIST_INSERT_HEAD(&fs->fhs, fh, link);
	LIST_INSERT_HEAD(&chan->opens, fh, chan_link);
	fh->chan = chan;
	fh->pid = fuse_req_ctx(req)->pid;
	fh->reader = (fi->flags & O_ACCMODE) == O_RDONLY;
	fh->follow = (fi->flags & O_ACCMODE) == O_RDWR;
	chan->nopen++;
	fi->fh = (uintptr_t)fh;
	/* Message boundaries live in requests: no page cache, no seeking. */
	fi->direct_io = 1;
	fi->nonseekable = 1;
	return fh;
}

/*
 * The size a stat(2) of c shows: the bytes queued, plus, for a process
 * that opened c read-only, what that open read already (its largest, if
 * it opened c more than once).  tail -f takes a size smaller than what it
 * read for a truncation, and the kernel sends fstat(2) as a GETATTR with
 * no file handle, so the asker is known by its pid.  Any other process
 * (`[ -s ]`, ls) sees the bytes queued.
 */
uint64_t fs_chan_size(const struct fs_chan *c, const struct fs_fh *fh,
		      pid_t pid)
{
	const struct fs_fh *o;
	uint64_t read = 0;

	if (fh && fh->chan == c)
		return (fh->reader ? fh->nread : 0) + c->queued;
	if (!pid) /* the kernel's own, or from outside its pid namespace */
		return c->queued;
	LIST_FOREACH (o, &c->opens, chan_link)
		if (o->reader && o->pid == pid && o->nread > read)
			read = o->nread;
	return read + c->queued;
}

/* Drop every poll parked on c, telling none: c or the session goes. */
void fs_chan_polls_drop(struct fs_chan *c)
{
	unsigned i;

	for (i = 0; i < c->npolls; i++)
		fuse_pollhandle_destroy(c->polls[i].ph);
	free(c->polls);
	c->polls = NULL;
	c->npolls = c->cap_polls = 0;
}

/* Free an open file's state; under lock, nobody uses fh any more. */
void fs_fh_destroy(struct fs *fs, struct fs_fh *fh)
{
	if (fh->chan) {
		LIST_REMOVE(fh, chan_link);
		fh->chan->nopen--;
		fs_chan_maybe_free(fs, fh->chan);
	}
	free(fh->buf);
	free(fh);
}

/*
 * Hold fh across a request.  A reader killed while its READ is in flight
 * lets the kernel send RELEASE before we answer: the handle must outlive
 * both.
 */
struct fs_fh *fs_fh_hold(struct fs *fs, struct fuse_file_info *fi)
{
	struct fs_fh *fh = (struct fs_fh *)(uintptr_t)fi->fh;

	atomic_fetch_add(&fh->refs, 1);
	return fh;
}

/* Drop a hold; under lock.  The last drop, after RELEASE's, frees. */
void fs_fh_drop_locked(struct fs *fs, struct fs_fh *fh)
{
	if (atomic_fetch_sub(&fh->refs, 1) == 1)
		fs_fh_destroy(fs, fh);
}

/* Drop a hold without the lock held: only the last takes it, to free. */
void fs_fh_drop(struct fs *fs, struct fs_fh *fh)
{
	if (atomic_fetch_sub(&fh->refs, 1) != 1)
		return;
	pthread_mutex_lock(&fs->lock);
	fs_fh_destroy(fs, fh);
	pthread_mutex_unlock(&fs->lock);
}

/* Free every channel, linked or not, with its queue (fs_close). */
void fs_chan_free_all(struct fs *fs)
{
	size_t i;

	for (i = 0; i < fs->nslots; i++) {
		struct fs_chan *c = fs->chans[i];

		if (!c)
			continue;
		fs_chan_discard(fs, c);
		free(c);
	}
	freelist_drain(&fs->free_msgs);
	free(fs->chans);
	free(fs->free_slots);
	for (i = 0; i <= (size_t)fs->nnodes; i++)
		if (fs->nodes[i])
			free(fs->nodes[i]->buckets);
}
