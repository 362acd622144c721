/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The FUSE side of ibfs (low-level API): the tree and its operations.
 *
 *   MOUNT/               the root            FS_ROOT_INO
 *   MOUNT/.status        this node           FS_ROOT_STATUS_INO
 *   MOUNT/NODE/          one per config node fs_node_ino(i, FS_SLOT_DIR)
 *   MOUNT/NODE/.status   that peer           fs_node_ino(i, FS_SLOT_STATUS)
 *   MOUNT/NODE/CHAN      a channel           chan_base and up
 *   MOUNT/all/           every node at once  fs_node_ino(nnodes, ...)
 *
 * A write to NODE/CHAN is one message to NODE on CHAN; one to all/CHAN is
 * one message to every node (fs_all.c), read there in MOUNT/ME/CHAN.
 * Messages NODE sent on CHAN queue in that file; a read takes one (or the
 * rest of one).  The first read on an open file waits for a message: it
 * is parked, holding no thread (fs_park.c).  The .status text is
 * fs_status.c's; the session's life fs_mount.c's.  Who calls what and
 * which lock guards which field: the top of fs_int.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs_int.h"
#include "log.h"
#include "util.h"

#define FS_STATUS_NAME ".status"
#define FS_ALL_NAME    CONFIG_NAME_ALL /* a node name the config refuses */
#define FS_MAX_WRITE   (1024 * 1024)   /* the kernel's ceiling (256 pages) */

/* MOUNT/.metrics: .status for Prometheus (fs_metrics.c) */
#define FS_METRICS_NAME ".metrics"

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
	if (ino == FS_ROOT_METRICS_INO)
		return FS_ROOT_METRICS;
	if (ino < FS_NODE_INO_BASE)
		return FS_NONE; /* 0: no inode has it */
	if (ino < fs->chan_base) {
		rel = ino - FS_NODE_INO_BASE;
		*node = fs_node_get(fs, (int)(rel / FS_NODE_SLOTS));
		if (!*node) /* no memory: as if it were not there */
			return FS_NONE;
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

/* Attributes of whatever ino is; -ENOENT when it is gone. */
static int fs_fill_attr(struct fs *fs, fuse_ino_t ino, struct stat *st)
{
	struct fs_node *node;
	struct fs_chan *chan;
	enum fs_kind k = fs_ino_kind(fs, ino, &node, &chan);

	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = fs->cfg->uid; /* -o uid=, gid= */
	st->st_gid = fs->cfg->gid;
	st->st_atim.tv_sec = st->st_mtim.tv_sec = st->st_ctim.tv_sec =
		fs->started;
	switch (k) {
	case FS_ROOT:
		st->st_mode = S_IFDIR | fs->cfg->dir_mode;
		st->st_nlink = 3 + fs->nnodes; /* and all/ */
		break;
	case FS_DIR:
		st->st_mode = S_IFDIR | fs->cfg->dir_mode;
		st->st_nlink = 2;
		break;
	case FS_ROOT_STATUS:
	case FS_ROOT_METRICS:
	case FS_DIR_STATUS:
		st->st_mode = S_IFREG | (fs->cfg->file_mode & 0444);
		st->st_nlink = 1;
		st->st_mtim.tv_sec = time(NULL);
		break;
	case FS_CHAN:
		/* all/'s channels are written, never read: nothing queues */
		st->st_mode = S_IFREG | (fs->cfg->file_mode &
					 (fs_node_is_all(node) ? 0222 : 0777));
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
	if (chan) {
		chan->nlookup++;
		e->generation = chan->generation;
	}
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
		else if (strcmp(name, FS_METRICS_NAME) == 0)
			ino = FS_ROOT_METRICS_INO;
		else if (strcmp(name, FS_ALL_NAME) == 0)
			ino = fs->all->ino;
		for (i = 0; !ino && i < fs->nnodes; i++)
			if (strcmp(name, fs->peers[i].conf->name) == 0)
				ino = fs_node_ino(i, FS_SLOT_DIR);
	} else if (k == FS_DIR) {
		if (strcmp(name, FS_STATUS_NAME) == 0)
			ino = fs_node_status_ino(node);
		else if ((chan = fs_chan_find(fs, node, name)))
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

	if (fs_ino_kind(fs, ino, &node, &chan) == FS_CHAN)
		fs_chan_forget(fs, chan, n);
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

/*
 * Reply with ino's attributes, a channel's size as req's process sees it
 * (fs_chan_size; fi: the open file, when the kernel names it); with
 * chan_only, EPERM unless ino is a channel (truncate).
 */
static void fs_reply_attr(fuse_req_t req, fuse_ino_t ino, int chan_only,
			  struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node;
	struct fs_chan *chan;
	struct stat st;
	enum fs_kind k;
	int rc;

	pthread_mutex_lock(&fs->lock);
	k = fs_ino_kind(fs, ino, &node, &chan);
	if (chan_only && k != FS_CHAN)
		rc = -EPERM;
	else
		rc = fs_fill_attr(fs, ino, &st);
	if (!rc && k == FS_CHAN)
		st.st_size = (off_t)fs_chan_size(
			chan, fi ? (struct fs_fh *)(uintptr_t)fi->fh : NULL,
			fuse_req_ctx(req)->pid);
	pthread_mutex_unlock(&fs->lock);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_attr(req, &st, 0);
}

/* stat(2): a channel's size is the bytes queued (to its own reader, plus
 * what it read: fs_chan_size), mtime the last arrival. */
static void fs_op_getattr(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	fs_reply_attr(req, ino, 0, fi);
}

/*
 * truncate and O_TRUNC are accepted and discard nothing (shell
 * redirections truncate); times are accepted for touch; ownership and
 * modes are ibfs's to decide.
 */
static void fs_op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			  int to_set, struct fuse_file_info *fi)
{
	if (to_set &
	    (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	fs_reply_attr(req, ino, !!(to_set & FUSE_SET_ATTR_SIZE), fi);
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

	fh = fs_fh_new();
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
	if (!rc && k == FS_ROOT)
		rc = fs_dirbuf_add(req, fh, FS_METRICS_NAME,
				   FS_ROOT_METRICS_INO, S_IFREG);
	if (k == FS_ROOT) {
		for (i = 0; !rc && i < fs->nnodes; i++)
			rc = fs_dirbuf_add(req, fh, fs->peers[i].conf->name,
					   fs_node_ino(i, FS_SLOT_DIR),
					   S_IFDIR);
		if (!rc)
			rc = fs_dirbuf_add(req, fh, FS_ALL_NAME, fs->all->ino,
					   S_IFDIR);
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
	fs_fh_drop_locked(fs, fh); /* its open's */
	pthread_mutex_unlock(&fs->lock);
	fuse_reply_err(req, 0);
}

/* all/'s channels open write-only: no message ever queues there (a
 * mode the kernel checks, but root passes it). */
static int fs_open_check(const struct fs_node *node, struct fuse_file_info *fi)
{
	if (fs_node_is_all(node) && (fi->flags & O_ACCMODE) != O_WRONLY)
		return -EACCES;
	return 0;
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
		rc = fs_open_check(node, fi);
		if (rc)
			break;
		fh = fs_chan_open(fs, chan, req, fi);
		rc = fh ? 0 : -ENOMEM;
		break;
	case FS_ROOT_STATUS:
	case FS_ROOT_METRICS:
	case FS_DIR_STATUS:
		if ((fi->flags & O_ACCMODE) != O_RDONLY) {
			rc = -EACCES;
			break;
		}
		fh = fs_fh_new();
		/* under fs->lock, which the rendering never takes */
		if (!fh)
			rc = -ENOMEM;
		else if (k == FS_ROOT_METRICS)
			rc = fs_metrics_render(fs, &fh->buf, &fh->len);
		else
			rc = fs_status_render(fs, node, &fh->buf, &fh->len);
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
	rc = fs_open_check(node, fi);
	if (rc)
		goto out;
	chan = fs_chan_find(fs, node, name);
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
	fh = fs_chan_open(fs, chan, req, fi);
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

/* read(2): one message per call, or a .status snapshot. */
static void fs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_fh *fh = fs_fh_hold(fs, fi);

	if (fh->chan) {
		/* fi->flags are the file's flags now: fcntl may have
		 * changed O_NONBLOCK since open. */
		fs_park_read(fs, req, fh, size, !!(fi->flags & O_NONBLOCK));
		/* fs_park_read dropped the hold */
		return;
	}
	fs_reply_slice(req, fh->buf, fh->len, off, size);
	fs_fh_drop(fs, fh);
}

/* write(2): one call is one message to the node on this channel. */
static void fs_op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
			size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_fh *fh = fs_fh_hold(fs, fi);

	fs_write_start(fs, req, fh->chan, buf, size,
		       !!(fi->flags & O_NONBLOCK));
	fs_fh_drop(fs, fh);
}

/* Last close of an open file. */
static void fs_op_release(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_fh *fh = (struct fs_fh *)(uintptr_t)fi->fh;
	struct fs_waitq gone = TAILQ_HEAD_INITIALIZER(gone);

	pthread_mutex_lock(&fs->lock);
	LIST_REMOVE(fh, link);
	/* Reads its killed owner left parked must not take messages. */
	if (fh->chan)
		fs_park_release(fs, fh, &gone);
	fs_fh_drop_locked(fs, fh); /* its open's */
	pthread_mutex_unlock(&fs->lock);
	fs_park_end_all(fs, &gone, EINTR);
	fuse_reply_err(req, 0);
}

/* rm NODE/CHAN: the channel and its queue go; its readers see EOF. */
static void fs_op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_waitq woken = TAILQ_HEAD_INITIALIZER(woken);
	struct fs_node *node;
	struct fs_chan *chan;
	int rc = 0;

	pthread_mutex_lock(&fs->lock);
	if (fs_ino_kind(fs, parent, &node, &chan) != FS_DIR) {
		rc = -EPERM;
	} else if (!(chan = fs_chan_find(fs, node, name))) {
		rc = strcmp(name, FS_STATUS_NAME) == 0 ? -EPERM : -ENOENT;
	} else {
		fs_chan_unlink(fs, chan);
		fs_park_unlinked(fs, chan, &woken);
		fs_chan_maybe_free(fs, chan);
	}
	pthread_mutex_unlock(&fs->lock);
	fs_park_end_all(fs, &woken, 0);
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
	revents |= fs_park_poll(fh->chan, fh, ph);
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

/* The one operations table: all FUSE asks of the tree goes through it. */
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

/* Build the tree and start the reaper. */
int fs_open(struct fs **out, const struct config *cfg, struct peer *peers)
{
	struct fs *fs = calloc(1, sizeof(*fs));
	int rc = -ENOMEM;

	if (!fs)
		return -ENOMEM;
	/* one directory per config node, numbered in config order, each
	 * made when first used; then all/ (no peer) */
	fs->nodes = calloc(cfg->nnodes + 1, sizeof(*fs->nodes));
	fs->peers = peers;
	fs->nnodes = cfg->nnodes;
	if (!fs->nodes || !(fs->all = fs_node_get(fs, cfg->nnodes)))
		goto err_nodes;
	if (budget_init(&fs->budget, cfg->memory_limit, cfg->nnodes))
		goto err_nodes;
	fs->hash_seed = util_random32((uint32_t)(uintptr_t)fs);
	fs->cfg = cfg;
	fs->started = time(NULL);
	fs->ops = &fs_ops;
	/* channels are numbered after all/'s inodes */
	fs->chan_base = fs->next_ino =
		fs_node_ino(cfg->nnodes + 1, FS_SLOT_DIR);
	TAILQ_INIT(&fs->waiters);
	freelist_init(&fs->free_msgs, sizeof(struct fs_msg), FS_FREE_KEEP);
	freelist_init(&fs->free_waiters, sizeof(struct fs_waiter),
		      FS_FREE_KEEP);
	TAILQ_INIT(&fs->writes);
	TAILQ_INIT(&fs->answers);
	LIST_INIT(&fs->fhs);
	pthread_mutex_init(&fs->lock, NULL);
	pthread_mutex_init(&fs->announce_lock, NULL);
	rc = fs_park_start(fs);
	if (rc)
		goto err_lock;
	*out = fs;
	return 0;

err_lock:
	pthread_mutex_destroy(&fs->announce_lock);
	pthread_mutex_destroy(&fs->lock);
	budget_free(&fs->budget);
err_nodes:
	if (fs->nodes)
		free(fs->all);
	free(fs->nodes);
	free(fs);
	return rc;
}

/* The transport exists now: writes may go out. */
void fs_set_transport(struct fs *fs, struct tp *tp)
{
	fs->tp = tp;
}

/* Free the tree; the transport that delivers into it is closed already. */
void fs_close(struct fs *fs)
{
	struct fs_fh *fh;
	int i;

	if (!fs)
		return;
	fs_unmount(fs);
	while ((fh = LIST_FIRST(&fs->fhs))) {
		LIST_REMOVE(fh, link);
		free(fh->buf);
		free(fh);
	}
	fs_chan_free_all(fs);
	fs_park_close(fs);
	pthread_mutex_destroy(&fs->announce_lock);
	pthread_mutex_destroy(&fs->lock);
	budget_free(&fs->budget);
	for (i = 0; i <= fs->nnodes; i++)
		free(fs->nodes[i]);
	free(fs->nodes);
	free(fs);
}
