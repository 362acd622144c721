/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The FUSE side of ibfs (low-level API).
 *
 *   MOUNT/               the root            FS_ROOT_INO
 *   MOUNT/.status        this node           FS_ROOT_STATUS_INO
 *   MOUNT/NODE/          one per config node fs_node_ino(i, FS_SLOT_DIR)
 *   MOUNT/NODE/.status   that peer           fs_node_ino(i, FS_SLOT_STATUS)
 *   MOUNT/NODE/CHAN      a channel           chan_base and up
 *
 * A write to NODE/CHAN is one message to NODE on CHAN.  Messages NODE sent
 * on CHAN queue in that file; a read takes one (or the rest of one).  The
 * first read on an open file waits for a message: it is parked, holding no
 * thread, and answered by fs_deliver from the progress thread, or by the
 * reaper thread when it is interrupted or times out.  Whoever unlinks a
 * waiter from the lists under fs->lock owns its reply, so every request is
 * answered exactly once, and never from the interrupt callback itself.
 * The .status text is fs_status.c's.  Who calls what and which lock
 * guards which field: the top of fs_int.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs_int.h"
#include "log.h"
#include "util.h"
#include "wire.h"

#define FS_STATUS_NAME ".status"
#define FS_MAX_WRITE   (1024 * 1024) /* the kernel's ceiling (256 pages) */

/*
 * Messages up to this size are handed to a parked reader at once, larger
 * ones after the transport's acks (see fs_deliver).
 */
#define FS_ANSWER_NOW_MAX (64 * 1024)

/* Classify an inode number; node/chan are filled where they apply. */
static enum fs_kind fs_ino_kind(struct fs *fs, fuse_ino_t ino,
				struct fs_node **node, struct fs_chan **chan)
{
	fuse_ino_t rel;

	*node = NULL;
	*chan = NULL;
	if (ino == FS_ROOT_INO)
		return FS_ROOT;
	if (ino == FS_ROOT_STATUS_INO)
		return FS_ROOT_STATUS;
	if (ino < FS_NODE_INO_BASE)
		return FS_NONE; /* 0: no inode has it */
	if (ino < fs->chan_base) {
		rel = ino - FS_NODE_INO_BASE;
		*node = &fs->nodes[rel / FS_NODE_SLOTS];
		return rel % FS_NODE_SLOTS == FS_SLOT_STATUS ? FS_DIR_STATUS
							     : FS_DIR;
	}
	rel = fs_chan_slot(fs, ino);
	if (rel < fs->nslots && fs->chans[rel]) {
		*chan = fs->chans[rel];
		*node = (*chan)->node;
		return FS_CHAN;
	}
	return FS_NONE;
}

/* Find a live (not unlinked) channel of node by name. */
static struct fs_chan *fs_chan_find(struct fs_node *node, const char *name)
{
	struct fs_chan *c;

	LIST_FOREACH (c, &node->chans, dir_link)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/*
 * Make a channel in node.  A peer's messages may create at most
 * max_channels (-ENOSPC beyond: the message is dropped), so no peer can
 * exhaust our memory.  The mounting user's own O_CREATs are not limited:
 * a script that sends on many channels to one peer makes them here.
 */
static int fs_chan_new(struct fs *fs, struct fs_node *node, const char *name,
		       int remote, struct fs_chan **out)
{
	struct fs_chan *c;
	size_t slot;

	if (remote && node->nremote >= fs->cfg->max_channels)
		return -ENOSPC;
	slot = fs_chan_slot(fs, fs->next_ino);
	if (slot >= fs->nslots) {
		size_t n = fs->nslots ? fs->nslots * 2 : 64;
		struct fs_chan **grown;

		grown = realloc(fs->chans, n * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		memset(grown + fs->nslots, 0,
		       (n - fs->nslots) * sizeof(*grown));
		fs->chans = grown;
		fs->nslots = n;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ino = fs->next_ino++;
	c->node = node;
	snprintf(c->name, sizeof(c->name), "%s", name);
	TAILQ_INIT(&c->msgs);
	TAILQ_INIT(&c->waiters);
	clock_gettime(CLOCK_REALTIME, &c->mtime);
	LIST_INSERT_HEAD(&node->chans, c, dir_link);
	node->nchans++;
	c->remote = remote;
	node->nremote += remote;
	fs->chans[slot] = c;
	*out = c;
	return 0;
}

/* Throw away every queued message (rm, shutdown). */
static void fs_chan_discard(struct fs_chan *c)
{
	struct fs_msg *m;

	while ((m = TAILQ_FIRST(&c->msgs))) {
		TAILQ_REMOVE(&c->msgs, m, link);
		free(m->data);
		free(m);
	}
	c->queued = 0;
}

/* Free an unlinked channel once no lookup or open refers to it. */
static void fs_chan_maybe_free(struct fs *fs, struct fs_chan *c)
{
	if (!c->unlinked || c->nlookup || c->nopen || !TAILQ_EMPTY(&c->waiters))
		return;
	fs->chans[fs_chan_slot(fs, c->ino)] = NULL;
	fs_chan_discard(c);
	if (c->ph)
		fuse_pollhandle_destroy(c->ph);
	free(c);
}

/* Take c out of its directory: rm, which discards its queue. */
static void fs_chan_unlink(struct fs_chan *c)
{
	if (c->unlinked)
		return;
	LIST_REMOVE(c, dir_link);
	c->node->nchans--;
	c->node->nremote -= c->remote;
	c->unlinked = 1;
	fs_chan_discard(c);
}

/* Free an open file's state; caller holds lock, nobody uses fh any more. */
static void fs_fh_destroy(struct fs *fs, struct fs_fh *fh)
{
	if (fh->chan) {
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
static struct fs_fh *fs_fh_hold(struct fs *fs, struct fuse_file_info *fi)
{
	struct fs_fh *fh = (struct fs_fh *)(uintptr_t)fi->fh;

	pthread_mutex_lock(&fs->lock);
	fh->refs++;
	pthread_mutex_unlock(&fs->lock);
	return fh;
}

/* Drop a hold; caller holds lock.  The last drop after RELEASE frees. */
static void fs_fh_drop_locked(struct fs *fs, struct fs_fh *fh)
{
	if (--fh->refs == 0 && fh->released)
		fs_fh_destroy(fs, fh);
}

/* Drop a hold without the lock held. */
static void fs_fh_drop(struct fs *fs, struct fs_fh *fh)
{
	pthread_mutex_lock(&fs->lock);
	fs_fh_drop_locked(fs, fh);
	pthread_mutex_unlock(&fs->lock);
}

/* A finished waiter: drop the hold on its file and free it. */
static void fs_waiter_free(struct fs *fs, struct fs_waiter *w)
{
	fs_fh_drop(fs, w->fh);
	free(w);
}

/* Park w on both wait lists; caller holds lock. */
static void fs_waiter_link(struct fs *fs, struct fs_waiter *w)
{
	TAILQ_INSERT_TAIL(&w->chan->waiters, w, chan_link);
	TAILQ_INSERT_TAIL(&fs->waiters, w, all_link);
	w->chan->node->nparked++;
}

/* Remove w from both wait lists; the caller now owns its reply. */
static void fs_waiter_unlink(struct fs *fs, struct fs_waiter *w)
{
	TAILQ_REMOVE(&w->chan->waiters, w, chan_link);
	TAILQ_REMOVE(&fs->waiters, w, all_link);
	w->chan->node->nparked--;
}

/*
 * Take up to size bytes of the head message for a reader.  Copies into
 * *out (malloc'ed) only when a short read splits a message; otherwise the
 * whole message buffer is handed over.
 */
static int fs_chan_take(struct fs_chan *c, size_t size, char **out, size_t *len)
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
		free(m);
		return 0;
	}
	c->queued -= m->len;
	TAILQ_REMOVE(&c->msgs, m, link);
	free(m);
	return 0;
}

/* Answer a reader from the head of c's queue; caller holds the lock. */
static int fs_read_now(struct fs_chan *c, struct fs_fh *fh, size_t size,
		       char **buf, size_t *len)
{
	int rc = fs_chan_take(c, size, buf, len);

	if (!rc)
		fh->got = 1;
	return rc;
}

/* The first reader parked on c that is not the reaper's; under lock. */
static struct fs_waiter *fs_chan_live_waiter(struct fs_chan *c)
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
static void fs_chan_feed(struct fs *fs, struct fs_chan *c, struct fs_waitq *out)
{
	struct fs_waiter *w;

	while (!TAILQ_EMPTY(&c->msgs) && (w = fs_chan_live_waiter(c))) {
		fs_waiter_unlink(fs, w);
		w->rc = fs_read_now(c, w->fh, w->size, &w->buf, &w->blen);
		TAILQ_INSERT_TAIL(out, w, all_link);
	}
}

static void fs_answer_all(struct fs *fs, struct fs_waitq *q);

/*
 * Reply to a reader with bytes taken from c.  If the kernel no longer
 * wants them (the read was interrupted meanwhile), put them back at the
 * head of the queue: the next reader gets them, nothing is lost.
 */
static void fs_reply_data(struct fs *fs, struct fs_chan *c, fuse_req_t req,
			  char *buf, size_t len)
{
	struct fs_waitq next = TAILQ_HEAD_INITIALIZER(next);
	struct fs_msg *m;

	if (fuse_reply_buf(req, buf, len) == 0 || !len) {
		free(buf);
		return;
	}
	m = calloc(1, sizeof(*m));
	pthread_mutex_lock(&fs->lock);
	if (!m || c->unlinked) {
		pthread_mutex_unlock(&fs->lock);
		free(m);
		free(buf);
		return;
	}
	m->data = buf;
	m->len = len;
	TAILQ_INSERT_HEAD(&c->msgs, m, link);
	c->queued += len;
	fs_chan_feed(fs, c, &next);
	pthread_mutex_unlock(&fs->lock);
	fs_answer_all(fs, &next);
}

/* Attributes of whatever ino is; -ENOENT when it is gone. */
static int fs_fill_attr(struct fs *fs, fuse_ino_t ino, struct stat *st)
{
	struct fs_node *node;
	struct fs_chan *chan;
	enum fs_kind k = fs_ino_kind(fs, ino, &node, &chan);

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec =
		fs->started;
	switch (k) {
	case FS_ROOT:
		st->st_mode = S_IFDIR | fs->cfg->dir_mode;
		st->st_nlink = 2 + fs->nnodes;
		break;
	case FS_DIR:
		st->st_mode = S_IFDIR | fs->cfg->dir_mode;
		st->st_nlink = 2;
		break;
	case FS_ROOT_STATUS:
	case FS_DIR_STATUS:
		st->st_mode = S_IFREG | (fs->cfg->file_mode & 0444);
		st->st_nlink = 1;
		st->st_mtim.tv_sec = time(NULL);
		break;
	case FS_CHAN:
		st->st_mode = S_IFREG | fs->cfg->file_mode;
		st->st_nlink = chan->unlinked ? 0 : 1;
		st->st_size = chan->queued;
		st->st_blocks = (chan->queued + 511) / 512;
		st->st_mtim = chan->mtime;
		st->st_ctim = chan->mtime;
		break;
	default:
		return -ENOENT;
	}
	return 0;
}

/* Reply with the part of buf that [off, off+size) covers. */
static void fs_reply_slice(fuse_req_t req, const char *buf, size_t len,
			   off_t off, size_t size)
{
	if ((size_t)off >= len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, buf + off,
			       len - off < size ? len - off : size);
}

/* Fill e for ino, counting a lookup for channels; caller holds lock. */
static int fs_entry(struct fs *fs, fuse_ino_t ino, struct fuse_entry_param *e)
{
	struct fs_node *node;
	struct fs_chan *chan;
	enum fs_kind k = fs_ino_kind(fs, ino, &node, &chan);
	int rc;

	memset(e, 0, sizeof(*e));
	rc = fs_fill_attr(fs, ino, &e->attr);
	if (rc)
		return rc;
	e->ino = ino;
	/*
	 * A channel's size moves with every arrival: its attributes are
	 * never cached.  Its name may be: channels go only by unlink through
	 * this mount, which drops the kernel's entry, and a new one is never
	 * hidden, since a failed lookup is not cached.  That spares a LOOKUP
	 * on every open of a known channel (echo > file, cat).
	 */
	if (k == FS_DIR || k == FS_CHAN)
		e->entry_timeout = 3600;
	if (k == FS_DIR)
		e->attr_timeout = 3600;
	if (chan)
		chan->nlookup++;
	return 0;
}

/* Session start: allow one write(2) of up to 1 MiB to be one request. */
static void fs_op_init(void *userdata, struct fuse_conn_info *conn)
{
	conn->max_write = FS_MAX_WRITE;
}

/* Name -> inode: node names in the root, channels in a node. */
static void fs_op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fuse_entry_param e;
	struct fs_node *node;
	struct fs_chan *chan;
	enum fs_kind k;
	fuse_ino_t ino = 0;
	int rc, i;

	pthread_mutex_lock(&fs->lock);
	k = fs_ino_kind(fs, parent, &node, &chan);
	if (k == FS_ROOT) {
		if (strcmp(name, FS_STATUS_NAME) == 0)
			ino = FS_ROOT_STATUS_INO;
		for (i = 0; !ino && i < fs->nnodes; i++)
			if (strcmp(name, fs->nodes[i].peer->conf->name) == 0)
				ino = fs->nodes[i].ino;
	} else if (k == FS_DIR) {
		if (strcmp(name, FS_STATUS_NAME) == 0)
			ino = fs_node_status_ino(node);
		else if ((chan = fs_chan_find(node, name)))
			ino = chan->ino;
	} else if (k != FS_NONE) {
		pthread_mutex_unlock(&fs->lock);
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	rc = ino ? fs_entry(fs, ino, &e) : -ENOENT;
	pthread_mutex_unlock(&fs->lock);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_entry(req, &e);
}

/* The kernel dropped n references: free unlinked channels at zero. */
static void fs_forget_one(struct fs *fs, fuse_ino_t ino, uint64_t n)
{
	struct fs_node *node;
	struct fs_chan *chan;

	if (fs_ino_kind(fs, ino, &node, &chan) != FS_CHAN)
		return;
	chan->nlookup = chan->nlookup > n ? chan->nlookup - n : 0;
	fs_chan_maybe_free(fs, chan);
}

/* FORGET for one inode. */
static void fs_op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct fs *fs = fuse_req_userdata(req);

	pthread_mutex_lock(&fs->lock);
	fs_forget_one(fs, ino, nlookup);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_none(req);
}

/* BATCH_FORGET. */
static void fs_op_forget_multi(fuse_req_t req, size_t count,
			       struct fuse_forget_data *forgets)
{
	struct fs *fs = fuse_req_userdata(req);
	size_t i;

	pthread_mutex_lock(&fs->lock);
	for (i = 0; i < count; i++)
		fs_forget_one(fs, forgets[i].ino, forgets[i].nlookup);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_none(req);
}

/* stat(2): a channel's size is the bytes queued, mtime the last arrival. */
static void fs_op_getattr(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct stat st;
	int rc;

	pthread_mutex_lock(&fs->lock);
	rc = fs_fill_attr(fs, ino, &st);
	pthread_mutex_unlock(&fs->lock);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st, 0);
}

/*
 * truncate and O_TRUNC are accepted and discard nothing (shell
 * redirections truncate); times are accepted for touch; ownership and
 * modes are ibfs's to decide.
 */
static void fs_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			  int to_set, struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node;
	struct fs_chan *chan;
	struct stat st;
	int rc;

	if (to_set &
	    (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	pthread_mutex_lock(&fs->lock);
	if ((to_set & FUSE_SET_ATTR_SIZE) &&
	    fs_ino_kind(fs, ino, &node, &chan) != FS_CHAN) {
		pthread_mutex_unlock(&fs->lock);
		fuse_reply_err(req, EPERM);
		return;
	}
	rc = fs_fill_attr(fs, ino, &st);
	pthread_mutex_unlock(&fs->lock);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st, 0);
}

/* Append one directory entry to a growing snapshot buffer. */
static int fs_dirbuf_add(fuse_req_t req, struct fs_fh *fh, const char *name,
			 fuse_ino_t ino, mode_t mode)
{
	struct stat st = {.st_ino = ino, .st_mode = mode};
	size_t need = fuse_add_direntry(req, NULL, 0, name, NULL, 0);
	char *grown = realloc(fh->buf, fh->len + need);

	if (!grown)
		return -ENOMEM;
	fh->buf = grown;
	fuse_add_direntry(req, fh->buf + fh->len, need, name, &st,
			  fh->len + need);
	fh->len += need;
	return 0;
}

/* opendir: snapshot the listing so readdir offsets stay stable. */
static void fs_op_opendir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node;
	struct fs_chan *chan;
	struct fs_fh *fh;
	enum fs_kind k;
	int rc = 0, i;

	fh = calloc(1, sizeof(*fh));
	if (!fh) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&fs->lock);
	k = fs_ino_kind(fs, ino, &node, &chan);
	if (k != FS_ROOT && k != FS_DIR) {
		rc = k == FS_NONE ? -ENOENT : -ENOTDIR;
		goto out;
	}
	rc = fs_dirbuf_add(req, fh, ".", ino, S_IFDIR);
	if (!rc)
		rc = fs_dirbuf_add(req, fh, "..", FS_ROOT_INO, S_IFDIR);
	if (!rc)
		rc = fs_dirbuf_add(req, fh, FS_STATUS_NAME,
				   k == FS_ROOT ? FS_ROOT_STATUS_INO
						: fs_node_status_ino(node),
				   S_IFREG);
	if (k == FS_ROOT) {
		for (i = 0; !rc && i < fs->nnodes; i++)
			rc = fs_dirbuf_add(req, fh,
					   fs->nodes[i].peer->conf->name,
					   fs->nodes[i].ino, S_IFDIR);
	} else {
		LIST_FOREACH (chan, &node->chans, dir_link)
			if (!rc)
				rc = fs_dirbuf_add(req, fh, chan->name,
						   chan->ino, S_IFREG);
	}
out:
	if (!rc)
		LIST_INSERT_HEAD(&fs->fhs, fh, link);
	pthread_mutex_unlock(&fs->lock);
	if (rc) {
		free(fh->buf);
		free(fh);
		fuse_reply_err(req, -rc);
		return;
	}
	fi->fh = (uintptr_t)fh;
	fuse_reply_open(req, fi);
}

/* readdir: serve the snapshot taken at opendir. */
static void fs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			  off_t off, struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_fh *fh = fs_fh_hold(fs, fi);

	fs_reply_slice(req, fh->buf, fh->len, off, size);
	fs_fh_drop(fs, fh);
}

/* releasedir and release of .status files: drop the snapshot. */
static void fs_op_releasedir(fuse_req_t req, fuse_ino_t ino,
			     struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_fh *fh = (struct fs_fh *)(uintptr_t)fi->fh;

	pthread_mutex_lock(&fs->lock);
	LIST_REMOVE(fh, link);
	fh->released = 1;
	if (fh->refs == 0)
		fs_fh_destroy(fs, fh);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_err(req, 0);
}

/* Attach an open file to chan; caller holds lock. */
static struct fs_fh *fs_chan_open(struct fs *fs, struct fs_chan *chan,
				  struct fuse_file_info *fi)
{
	struct fs_fh *fh = calloc(1, sizeof(*fh));

	if (!fh)
		return NULL;
	LIST_INSERT_HEAD(&fs->fhs, fh, link);
	fh->chan = chan;
	fh->follow = (fi->flags & O_ACCMODE) == O_RDWR;
	chan->nopen++;
	fi->fh = (uintptr_t)fh;
	/* Message boundaries live in requests: no page cache, no seeking. */
	fi->direct_io = 1;
	fi->nonseekable = 1;
	return fh;
}

/* open(2) of a channel or a .status file. */
static void fs_op_open(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node;
	struct fs_chan *chan;
	struct fs_fh *fh = NULL;
	enum fs_kind k;
	int rc = 0;

	pthread_mutex_lock(&fs->lock);
	k = fs_ino_kind(fs, ino, &node, &chan);
	switch (k) {
	case FS_CHAN:
		fh = fs_chan_open(fs, chan, fi);
		rc = fh ? 0 : -ENOMEM;
		break;
	case FS_ROOT_STATUS:
	case FS_DIR_STATUS:
		if ((fi->flags & O_ACCMODE) != O_RDONLY) {
			rc = -EACCES;
			break;
		}
		fh = calloc(1, sizeof(*fh));
		/* under fs->lock, which the rendering never takes */
		rc = fh ? fs_status_render(fs, node, &fh->buf, &fh->len)
			: -ENOMEM;
		if (!rc)
			LIST_INSERT_HEAD(&fs->fhs, fh, link);
		fi->fh = (uintptr_t)fh;
		fi->direct_io = 1;
		break;
	case FS_NONE:
		rc = -ENOENT;
		break;
	default:
		rc = -EISDIR;
	}
	pthread_mutex_unlock(&fs->lock);
	if (rc) {
		if (fh)
			free(fh->buf);
		free(fh);
		fuse_reply_err(req, -rc);
		return;
	}
	fuse_reply_open(req, fi);
}

/* O_CREAT in a node directory makes a channel (or opens the one there). */
static void fs_op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
			 mode_t mode, struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fuse_entry_param e;
	struct fs_node *node;
	struct fs_chan *chan;
	struct fs_fh *fh;
	enum fs_kind k;
	int rc = 0;

	pthread_mutex_lock(&fs->lock);
	k = fs_ino_kind(fs, parent, &node, &chan);
	if (k != FS_DIR) {
		rc = k == FS_ROOT ? -EPERM : -ENOTDIR;
		goto out;
	}
	if (util_name_problem(name)) {
		rc = name[0] == '.' ? -EPERM : -EINVAL;
		goto out;
	}
	chan = fs_chan_find(node, name);
	if (!chan) {
		rc = fs_chan_new(fs, node, name, 0, &chan);
		if (rc)
			goto out;
	} else if ((fi->flags & O_EXCL)) {
		rc = -EEXIST;
		goto out;
	}
	rc = fs_entry(fs, chan->ino, &e);
	if (rc)
		goto out;
	fh = fs_chan_open(fs, chan, fi);
	if (!fh) {
		chan->nlookup--;
		rc = -ENOMEM;
	}
out:
	pthread_mutex_unlock(&fs->lock);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_create(req, &e, fi);
}

/*
 * The interrupt callback: only mark the waiter and wake the reaper,
 * which owns the EINTR reply.  req stays valid while we run; a waiter
 * already answered is simply not found.
 */
static void fs_read_interrupt(fuse_req_t req, void *data)
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
static void fs_read_chan(struct fs *fs, fuse_req_t req, struct fs_fh *fh,
			 size_t size, int nonblock)
{
	struct fs_chan *c = fh->chan;
	struct fs_waiter *w;
	char *buf = NULL;
	size_t len = 0;
	int rc = 0;

	w = calloc(1, sizeof(*w));
	if (!w) {
		fs_fh_drop(fs, fh);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* Registered before the waiter is visible: see fs_read_interrupt. */
	fuse_req_interrupt_func(req, fs_read_interrupt, fs);
	pthread_mutex_lock(&fs->lock);
	if (!TAILQ_EMPTY(&c->msgs) && !fs_chan_live_waiter(c)) {
		rc = fs_read_now(c, fh, size, &buf, &len);
	} else if ((fh->got && !fh->follow) || c->unlinked || fs->stopping) {
		rc = fs->stopping && !fh->got ? -ENOTCONN : 0;
	} else if (nonblock) {
		rc = -EAGAIN;
	} else if (fuse_req_interrupted(req)) {
		rc = -EINTR;
	} else {
		w->req = req;
		w->chan = c;
		w->fh = fh;
		w->size = size;
		if (fs->cfg->read_timeout_ms > 0)
			w->deadline = util_now_ms() + fs->cfg->read_timeout_ms;
		fs_waiter_link(fs, w);
		if (w->deadline)
			pthread_cond_signal(&fs->reaper_cond);
		pthread_mutex_unlock(&fs->lock);
		return; /* the waiter keeps the hold on fh */
	}
	pthread_mutex_unlock(&fs->lock);
	free(w);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fs_reply_data(fs, c, req, buf, len);
	fs_fh_drop(fs, fh);
}

/* read(2): one message per call, or a .status snapshot. */
static void fs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_fh *fh = fs_fh_hold(fs, fi);

	if (fh->chan) {
		/* fi->flags are the file's flags now: fcntl may have
		 * changed O_NONBLOCK since open. */
		fs_read_chan(fs, req, fh, size, !!(fi->flags & O_NONBLOCK));
		/* fs_read_chan dropped the hold */
		return;
	}
	fs_reply_slice(req, fh->buf, fh->len, off, size);
	fs_fh_drop(fs, fh);
}

/* A reliable write in flight: whom to answer once the peer acked. */
struct fs_wreq {
	struct fs *fs;
	struct fs_node *node;
	fuse_req_t req;
};

/*
 * tp_send_async's completion (delivery = reliable): answer the write.
 * After unmount the session is gone and the kernel aborted the request:
 * nothing to answer then.
 */
static void fs_write_done(void *arg, int status, size_t len)
{
	struct fs_wreq *w = arg;
	struct fs *fs = w->fs;

	pthread_mutex_lock(&fs->lock);
	w->node->nwrites--;
	if (!fs->stopping) {
		if (status)
			fuse_reply_err(w->req, -status);
		else
			fuse_reply_write(w->req, len);
	}
	pthread_mutex_unlock(&fs->lock);
	free(w);
}

static void fs_write_chan(struct fs *fs, fuse_req_t req, struct fs_fh *fh,
			  const char *buf, size_t size, int nonblock);

/* write(2): one call is one message to the node on this channel. */
static void fs_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
			size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_fh *fh = fs_fh_hold(fs, fi);

	fs_write_chan(fs, req, fh, buf, size, !!(fi->flags & O_NONBLOCK));
	fs_fh_drop(fs, fh);
}

/* Send one message from a write request on an open channel. */
static void fs_write_chan(struct fs *fs, fuse_req_t req, struct fs_fh *fh,
			  const char *buf, size_t size, int nonblock)
{
	struct fs_chan *c = fh->chan;
	int rc;

	if (!c) {
		fuse_reply_err(req, EBADF);
		return;
	}
	/*
	 * delivery = reliable: the write is answered when the peer's daemon
	 * has queued the message, from the completion; the worker thread
	 * never waits (a writer to itself would starve its own reader).
	 */
	if (fs->tp && tp_peer_reliable(fs->tp, c->node->peer)) {
		struct fs_wreq *w = malloc(sizeof(*w));

		if (!w) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		w->fs = fs;
		w->node = c->node;
		w->req = req;
		pthread_mutex_lock(&fs->lock);
		c->node->nwrites++;
		pthread_mutex_unlock(&fs->lock);
		rc = tp_send_async(fs->tp, c->node->peer, c->name, buf, size,
				   nonblock ? TP_SEND_NONBLOCK : 0,
				   fs_write_done, w);
		if (rc) {
			pthread_mutex_lock(&fs->lock);
			c->node->nwrites--;
			pthread_mutex_unlock(&fs->lock);
			free(w);
			fuse_reply_err(req, -rc);
		}
		return;
	}
	/*
	 * name and node are fixed for the channel's life: no lock needed.
	 * The writer is answered before the doorbell: it writes its next
	 * message (or parks its read) while the kernel sends this one.
	 */
	if (!fs->tp) {
		fuse_reply_err(req, ENOTCONN);
		return;
	}
	rc = tp_queue(fs->tp, c->node->peer, c->name, buf, size);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_write(req, size);
	tp_flush(fs->tp);
}

/* Last close of an open file. */
static void fs_op_release(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_fh *fh = (struct fs_fh *)(uintptr_t)fi->fh;
	struct fs_waitq gone = TAILQ_HEAD_INITIALIZER(gone);
	struct fs_waiter *w, *next;

	pthread_mutex_lock(&fs->lock);
	LIST_REMOVE(fh, link);
	fh->released = 1;
	/* Reads its killed owner left parked must not take messages. */
	if (fh->chan) {
		for (w = TAILQ_FIRST(&fh->chan->waiters); w; w = next) {
			next = TAILQ_NEXT(w, chan_link);
			if (w->fh != fh)
				continue;
			fs_waiter_unlink(fs, w);
			TAILQ_INSERT_TAIL(&gone, w, all_link);
		}
	}
	if (fh->refs == 0)
		fs_fh_destroy(fs, fh);
	pthread_mutex_unlock(&fs->lock);
	while ((w = TAILQ_FIRST(&gone))) {
		TAILQ_REMOVE(&gone, w, all_link);
		fuse_reply_err(w->req, EINTR);
		fs_waiter_free(fs, w);
	}
	fuse_reply_err(req, 0);
}

/* rm NODE/CHAN: the channel and its queue go; its readers see EOF. */
static void fs_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_waitq woken = TAILQ_HEAD_INITIALIZER(woken);
	struct fs_waiter *w;
	struct fs_node *node;
	struct fs_chan *chan;
	int rc = 0;

	pthread_mutex_lock(&fs->lock);
	if (fs_ino_kind(fs, parent, &node, &chan) != FS_DIR) {
		rc = -EPERM;
	} else if (!(chan = fs_chan_find(node, name))) {
		rc = strcmp(name, FS_STATUS_NAME) == 0 ? -EPERM : -ENOENT;
	} else {
		fs_chan_unlink(chan);
		while ((w = TAILQ_FIRST(&chan->waiters))) {
			fs_waiter_unlink(fs, w);
			TAILQ_INSERT_TAIL(&woken, w, all_link);
		}
		fs_chan_maybe_free(fs, chan);
	}
	pthread_mutex_unlock(&fs->lock);
	while ((w = TAILQ_FIRST(&woken))) {
		TAILQ_REMOVE(&woken, w, all_link);
		fuse_reply_buf(w->req, NULL, 0);
		fs_waiter_free(fs, w);
	}
	fuse_reply_err(req, -rc);
}

/* poll/select/epoll: readable while a message is queued. */
static void fs_op_poll(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi, struct fuse_pollhandle *ph)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_fh *fh = fs_fh_hold(fs, fi);
	unsigned revents = POLLOUT | POLLWRNORM;

	if (!fh->chan) {
		if (ph)
			fuse_pollhandle_destroy(ph);
		fuse_reply_poll(req, POLLIN | POLLRDNORM);
		fs_fh_drop(fs, fh);
		return;
	}
	pthread_mutex_lock(&fs->lock);
	if (!TAILQ_EMPTY(&fh->chan->msgs) || fh->chan->unlinked) {
		revents |= POLLIN | POLLRDNORM;
		if (ph)
			fuse_pollhandle_destroy(ph);
	} else if (ph) {
		if (fh->chan->ph)
			fuse_pollhandle_destroy(fh->chan->ph);
		fh->chan->ph = ph;
	}
	fs_fh_drop_locked(fs, fh);
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_poll(req, revents);
}

/* Names are ibfs's: the tree has no room for these. */
static void fs_op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
			mode_t mode)
{
	fuse_reply_err(req, EPERM);
}

/* rmdir of a node: the config decides the nodes. */
static void fs_op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EPERM);
}

/* mknod: channels are made with open(O_CREAT). */
static void fs_op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
			mode_t mode, dev_t rdev)
{
	fuse_reply_err(req, EPERM);
}

/* A channel's name is its identity on the wire: no renames. */
static void fs_op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
			 fuse_ino_t newparent, const char *newname,
			 unsigned int flags)
{
	fuse_reply_err(req, EPERM);
}

/* No hard links. */
static void fs_op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		       const char *newname)
{
	fuse_reply_err(req, EPERM);
}

/* No symbolic links. */
static void fs_op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
			  const char *name)
{
	fuse_reply_err(req, EPERM);
}

/* fsync: a sent datagram is on the wire already; nothing to flush. */
static void fs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static const struct fuse_lowlevel_ops fs_ops = {
	.init = fs_op_init,
	.lookup = fs_op_lookup,
	.forget = fs_op_forget,
	.forget_multi = fs_op_forget_multi,
	.getattr = fs_op_getattr,
	.setattr = fs_op_setattr,
	.opendir = fs_op_opendir,
	.readdir = fs_op_readdir,
	.releasedir = fs_op_releasedir,
	.open = fs_op_open,
	.create = fs_op_create,
	.read = fs_op_read,
	.write = fs_op_write,
	.release = fs_op_release,
	.unlink = fs_op_unlink,
	.poll = fs_op_poll,
	.mkdir = fs_op_mkdir,
	.rmdir = fs_op_rmdir,
	.mknod = fs_op_mknod,
	.rename = fs_op_rename,
	.link = fs_op_link,
	.symlink = fs_op_symlink,
	.fsync = fs_op_fsync,
};

/* Answer reader w, chosen by fs_deliver, with what it took. */
static void fs_answer(struct fs *fs, struct fs_waiter *w)
{
	if (w->rc)
		fuse_reply_err(w->req, -w->rc);
	else
		fs_reply_data(fs, w->chan, w->req, w->buf, w->blen);
	fs_waiter_free(fs, w);
}

/* Answer, and empty, a list of readers (linked by all_link). */
static void fs_answer_all(struct fs *fs, struct fs_waitq *q)
{
	struct fs_waiter *w;

	while ((w = TAILQ_FIRST(q))) {
		TAILQ_REMOVE(q, w, all_link);
		fs_answer(fs, w);
	}
}

/* Keep ph for fs_announce (under fs->lock); -ENOMEM: tell it now. */
static int fs_poll_keep(struct fs *fs, struct fuse_pollhandle *ph)
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

/*
 * A message arrived: queue it, and answer the parked reader it goes to and
 * the poller.  A large message is answered by fs_announce instead, once
 * the transport has acked it: handing over a large message takes a while,
 * and on a busy CPU the woken reader runs ahead of the ack its writer
 * waits for.  A small one is answered at once, so that a reply the reader
 * writes at once can carry that ack.
 */
int fs_deliver(void *arg, struct peer *p, const char *chan, void *data,
	       size_t len)
{
	struct fs *fs = arg;
	struct fs_node *node = &fs->nodes[p->idx];
	struct fuse_pollhandle *ph = NULL;
	struct fs_waiter *w = NULL;
	int later = len > FS_ANSWER_NOW_MAX;
	struct fs_chan *c;
	struct fs_msg *m;
	int rc = 0;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOSPC;
	m->data = data;
	m->len = len;
	pthread_mutex_lock(&fs->lock);
	c = fs_chan_find(node, chan);
	if (!c && util_name_problem(chan))
		rc = -ENOSPC;
	else if (!c)
		rc = fs_chan_new(fs, node, chan, 1, &c);
	if (rc)
		goto out;
	if (c->queued + len > fs->cfg->queue_limit) {
		rc = -ENOSPC;
		goto out;
	}
	TAILQ_INSERT_TAIL(&c->msgs, m, link);
	c->queued += len;
	m = NULL;
	/* Coarse: a tick is fine for ls, and the precise clock may trap
	 * into the kernel (HPET) on every message. */
	clock_gettime(CLOCK_REALTIME_COARSE, &c->mtime);
	/* An interrupted waiter is the reaper's: skip it. */
	w = fs_chan_live_waiter(c);
	if (w) {
		fs_waiter_unlink(fs, w);
		w->rc = fs_read_now(c, w->fh, w->size, &w->buf, &w->blen);
		if (later)
			TAILQ_INSERT_TAIL(&fs->answers, w, all_link);
	}
	if (c->ph && !fs->stopping) {
		if (!later || fs_poll_keep(fs, c->ph))
			ph = c->ph;
		c->ph = NULL;
	}
out:
	pthread_mutex_unlock(&fs->lock);
	if (m) {
		free(m);
		return rc; /* the transport frees data and counts the drop */
	}
	if (w && !later)
		fs_answer(fs, w);
	if (ph) {
		fuse_lowlevel_notify_poll(ph);
		fuse_pollhandle_destroy(ph);
	}
	return 0;
}

/* tp_ops.announce: answer the readers and pollers fs_deliver chose. */
void fs_announce(void *arg)
{
	struct fs *fs = arg;
	struct fs_waitq answers = TAILQ_HEAD_INITIALIZER(answers);
	struct fuse_pollhandle **polls;
	struct fs_waiter *w;
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
	while ((w = TAILQ_FIRST(&answers))) {
		TAILQ_REMOVE(&answers, w, all_link);
		fs_answer(fs, w);
	}
	for (i = 0; i < n; i++) {
		fuse_lowlevel_notify_poll(polls[i]);
		fuse_pollhandle_destroy(polls[i]);
	}
	pthread_mutex_unlock(&fs->announce_lock);
	free(polls);
}

/* Add ms to a CLOCK_MONOTONIC timespec for pthread_cond_timedwait. */
static struct timespec fs_abstime(uint64_t deadline_ms)
{
	struct timespec ts = {
		.tv_sec = deadline_ms / 1000,
		.tv_nsec = (deadline_ms % 1000) * 1000000,
	};

	return ts;
}

/*
 * The reaper owns the replies to interrupted and timed-out reads: it
 * wakes on a signal from the interrupt callback or at the next deadline.
 */
static void *fs_reaper(void *arg)
{
	struct fs *fs = arg;
	struct fs_waitq done = TAILQ_HEAD_INITIALIZER(done);
	struct fs_waitq fed = TAILQ_HEAD_INITIALIZER(fed);
	struct fs_waiter *w, *tmp;
	uint64_t now, next;

	pthread_mutex_lock(&fs->lock);
	while (!fs->stopping) {
		now = util_now_ms();
		next = 0;
		for (w = TAILQ_FIRST(&fs->waiters); w; w = tmp) {
			tmp = TAILQ_NEXT(w, all_link);
			if (w->interrupted ||
			    (w->deadline && w->deadline <= now)) {
				fs_waiter_unlink(fs, w);
				TAILQ_INSERT_TAIL(&done, w, all_link);
			} else if (w->deadline &&
				   (!next || w->deadline < next)) {
				next = w->deadline;
			}
		}
		if (!TAILQ_EMPTY(&done)) {
			/* what arrived while they blocked goes to the next */
			TAILQ_FOREACH (w, &done, all_link)
				fs_chan_feed(fs, w->chan, &fed);
			pthread_mutex_unlock(&fs->lock);
			while ((w = TAILQ_FIRST(&done))) {
				TAILQ_REMOVE(&done, w, all_link);
				if (w->interrupted)
					fuse_reply_err(w->req, EINTR);
				else
					fuse_reply_buf(w->req, NULL, 0);
				fs_waiter_free(fs, w);
			}
			fs_answer_all(fs, &fed);
			pthread_mutex_lock(&fs->lock);
			continue;
		}
		if (next) {
			struct timespec ts = fs_abstime(next);

			pthread_cond_timedwait(&fs->reaper_cond, &fs->lock,
					       &ts);
		} else {
			pthread_cond_wait(&fs->reaper_cond, &fs->lock);
		}
	}
	pthread_mutex_unlock(&fs->lock);
	return NULL;
}

/* Build the tree and start the reaper. */
int fs_open(struct fs **out, const struct config *cfg, struct peer *peers)
{
	pthread_condattr_t ca;
	struct fs *fs;
	int i, rc;

	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	fs->cfg = cfg;
	fs->peers = peers;
	fs->nnodes = cfg->nnodes;
	fs->started = time(NULL);
	fs->nodes = calloc(cfg->nnodes, sizeof(*fs->nodes));
	if (!fs->nodes) {
		rc = -ENOMEM;
		goto err_fs;
	}
	for (i = 0; i < cfg->nnodes; i++) {
		fs->nodes[i].peer = &peers[i];
		fs->nodes[i].ino = fs_node_ino(i, FS_SLOT_DIR);
		LIST_INIT(&fs->nodes[i].chans);
	}
	/* channels are numbered after the last node's inodes */
	fs->chan_base = fs->next_ino = fs_node_ino(cfg->nnodes, FS_SLOT_DIR);
	TAILQ_INIT(&fs->waiters);
	TAILQ_INIT(&fs->answers);
	LIST_INIT(&fs->fhs);
	pthread_mutex_init(&fs->lock, NULL);
	pthread_mutex_init(&fs->announce_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&fs->reaper_cond, &ca);
	pthread_condattr_destroy(&ca);
	rc = -pthread_create(&fs->reaper, NULL, fs_reaper, fs);
	if (rc)
		goto err_lock;
	fs->reaper_running = 1;
	*out = fs;
	return 0;

err_lock:
	pthread_cond_destroy(&fs->reaper_cond);
	pthread_mutex_destroy(&fs->announce_lock);
	pthread_mutex_destroy(&fs->lock);
	free(fs->nodes);
err_fs:
	free(fs);
	return rc;
}

/* The transport exists now: writes may go out. */
void fs_set_transport(struct fs *fs, struct tp *tp)
{
	fs->tp = tp;
}

/* Explain a mount point that a killed ibfs left behind. */
static int fs_check_mountpoint(const char *mountpoint)
{
	struct stat st;

	if (stat(mountpoint, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			log_warnx("mount point %s is not a directory",
				  mountpoint);
			return -ENOTDIR;
		}
		return 0;
	}
	if (errno == ENOTCONN) {
		log_warnx("mount point %s is still held by an ibfs that died; "
			  "clear it with: fusermount3 -u %s (or umount -l %s)",
			  mountpoint, mountpoint, mountpoint);
		return -ENOTCONN;
	}
	log_warn("mount point %s", mountpoint);
	return -errno;
}

/* Session, signal handlers, mount: in that order, undone in reverse. */
int fs_mount(struct fs *fs, struct fuse_args *args, const char *mountpoint)
{
	int rc;

	rc = fs_check_mountpoint(mountpoint);
	if (rc)
		return rc;
	fs->se = fuse_session_new(args, &fs_ops, sizeof(fs_ops), fs);
	if (!fs->se)
		return -EINVAL;
	if (fuse_set_signal_handlers(fs->se)) {
		rc = -EIO;
		goto err_session;
	}
	fs->sighandlers = 1;
	if (fuse_session_mount(fs->se, mountpoint)) {
		log_warnx("cannot mount on %s", mountpoint);
		rc = -EIO;
		goto err_signals;
	}
	fs->mounted = 1;
	return 0;

err_signals:
	fuse_remove_signal_handlers(fs->se);
	fs->sighandlers = 0;
err_session:
	fuse_session_destroy(fs->se);
	fs->se = NULL;
	return rc;
}

/* Worker threads serve requests until umount or SIGINT/SIGTERM. */
int fs_loop(struct fs *fs)
{
	struct fuse_loop_config lc = {
		.clone_fd = 0,
		.max_idle_threads = 10,
	};

	int rc = fuse_session_loop_mt(fs->se, &lc);

	/* A positive value is the signal that ended the loop: a clean stop. */
	if (rc > 0)
		log_info("signal %d: shutting down", rc);
	return rc < 0 ? -EIO : 0;
}

/* Stop the reaper and answer every parked reader: the daemon is going. */
static void fs_stop_readers(struct fs *fs)
{
	struct fs_waiter *w;

	pthread_mutex_lock(&fs->lock);
	fs->stopping = 1;
	pthread_cond_signal(&fs->reaper_cond);
	pthread_mutex_unlock(&fs->lock);
	if (fs->reaper_running)
		pthread_join(fs->reaper, NULL);
	fs->reaper_running = 0;
	pthread_mutex_lock(&fs->lock);
	while ((w = TAILQ_FIRST(&fs->waiters))) {
		fs_waiter_unlink(fs, w);
		pthread_mutex_unlock(&fs->lock);
		fuse_reply_err(w->req, ENOTCONN);
		fs_waiter_free(fs, w);
		pthread_mutex_lock(&fs->lock);
	}
	pthread_mutex_unlock(&fs->lock);
	/* readers a message was chosen for get it; none are chosen now */
	fs_announce(fs);
}

/*
 * Stop serving: answer parked readers, drop poll handles (they point into
 * the session), unmount and destroy the session.  Messages may still be
 * delivered afterwards; they only queue.
 */
void fs_unmount(struct fs *fs)
{
	size_t i;

	if (!fs)
		return;
	fs_stop_readers(fs);
	pthread_mutex_lock(&fs->lock);
	for (i = 0; i < fs->nslots; i++)
		if (fs->chans[i] && fs->chans[i]->ph) {
			fuse_pollhandle_destroy(fs->chans[i]->ph);
			fs->chans[i]->ph = NULL;
		}
	pthread_mutex_unlock(&fs->lock);
	if (fs->mounted)
		fuse_session_unmount(fs->se);
	fs->mounted = 0;
	if (fs->sighandlers)
		fuse_remove_signal_handlers(fs->se);
	fs->sighandlers = 0;
	if (fs->se)
		fuse_session_destroy(fs->se);
	fs->se = NULL;
}

/* Free the tree; the transport that delivers into it is closed already. */
void fs_close(struct fs *fs)
{
	struct fs_fh *fh;
	size_t i;

	if (!fs)
		return;
	fs_unmount(fs);
	while ((fh = LIST_FIRST(&fs->fhs))) {
		LIST_REMOVE(fh, link);
		free(fh->buf);
		free(fh);
	}
	for (i = 0; i < fs->nslots; i++) {
		struct fs_chan *c = fs->chans[i];

		if (!c)
			continue;
		fs_chan_discard(c);
		free(c);
	}
	free(fs->chans);
	for (i = 0; i < fs->npolls; i++)
		fuse_pollhandle_destroy(fs->polls[i]);
	free(fs->polls);
	pthread_cond_destroy(&fs->reaper_cond);
	pthread_mutex_destroy(&fs->announce_lock);
	pthread_mutex_destroy(&fs->lock);
	free(fs->nodes);
	free(fs);
}
