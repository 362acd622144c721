/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nullfs - the smallest useful FUSE file system, the "FUSE floor" for ibfs
 * (t_02 and scripts/bench/bench.sh).
 *
 * Uses the libfuse3 low-level API only (no ibfs code). The root directory
 * holds one file, /null: every read is answered at once with zeros (like
 * /dev/zero: reads never end, use head -c), every write is accepted whole
 * and dropped, truncation is a no-op. The file is opened direct_io so each
 * read(2) and write(2) makes one round trip through the FUSE kernel module,
 * as ibfs's datagram files do; benchmarks compare ibfs against this floor.
 * poll(2) on /null is answered by a FUSE_POLL round trip, always readable
 * and writable: without a poll operation the kernel stops asking after the
 * first ENOSYS and poll costs nothing, which would leave ibfs's POLL
 * requests out of a write, poll, read floor.  Served as ibfs is served: a
 * multi-threaded loop on one /dev/fuse fd with 10 idle threads.
 *
 *   nullfs [-f] [-s] [-o opt,...] MOUNTPOINT
 */
#define FUSE_USE_VERSION 34

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#define NULL_INO  2
#define NULL_NAME "null"
#define MAX_READ  (1 << 20)

/* Zeros served to every read, up to MAX_READ bytes. */
static char zeros[MAX_READ];

/* Fill *st with the attributes of inode ino; return 0 or -ENOENT. */
static int null_stat(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = getuid();
	st->st_gid = getgid();
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (ino == NULL_INO) {
		st->st_mode = S_IFREG | 0666;
		st->st_nlink = 1;
	} else {
		return -ENOENT;
	}
	return 0;
}

/* Look up a name in the root directory: only "null" exists. */
static void null_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;

	if (parent != FUSE_ROOT_ID || strcmp(name, NULL_NAME) != 0) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = NULL_INO;
	e.attr_timeout = 1.0;
	e.entry_timeout = 1.0;
	null_stat(e.ino, &e.attr);
	fuse_reply_entry(req, &e);
}

/* Report the attributes of the root or of /null. */
static void null_getattr(fuse_req_t req, fuse_ino_t ino,
			 struct fuse_file_info *fi)
{
	struct stat st;

	if (null_stat(ino, &st) != 0) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fuse_reply_attr(req, &st, 1.0);
}

/* Accept any attribute change (truncate, utimes) without keeping it. */
static void null_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
			 int to_set, struct fuse_file_info *fi)
{
	null_getattr(req, ino, fi);
}

/* Add one directory entry to buf if it fits; return the new size. */
static size_t dirbuf_add(fuse_req_t req, char *buf, size_t size, size_t used,
			 const char *name, fuse_ino_t ino, off_t next)
{
	struct stat st = {.st_ino = ino};
	size_t len;

	null_stat(ino, &st);
	len = fuse_add_direntry(req, buf + used, size - used, name, &st, next);
	return len > size - used ? used : used + len;
}

/* List the root directory: ".", "..", "null". */
static void null_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			 struct fuse_file_info *fi)
{
	static const char *const names[] = {".", "..", NULL_NAME};
	static const fuse_ino_t inos[] = {FUSE_ROOT_ID, FUSE_ROOT_ID, NULL_INO};
	char buf[512];
	size_t used = 0;
	off_t i;

	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (size > sizeof(buf))
		size = sizeof(buf);
	for (i = off; i < 3; i++) {
		size_t n = dirbuf_add(req, buf, size, used, names[i], inos[i],
				      i + 1);
		if (n == used)
			break;
		used = n;
	}
	fuse_reply_buf(req, buf, used);
}

/* Open /null with direct I/O so every read and write reaches us. */
static void null_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != NULL_INO) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	fi->direct_io = 1;
	fi->nonseekable = 0;
	fuse_reply_open(req, fi);
}

/* Answer a read with size zero bytes (at most MAX_READ). */
static void null_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	fuse_reply_buf(req, zeros, size < MAX_READ ? size : MAX_READ);
}

/* Accept a write whole and drop it. */
static void null_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		       size_t size, off_t off, struct fuse_file_info *fi)
{
	fuse_reply_write(req, size);
}

/* poll: always readable and writable; no notification is ever due. */
static void null_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		      struct fuse_pollhandle *ph)
{
	if (ph)
		fuse_pollhandle_destroy(ph);
	fuse_reply_poll(req, POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM);
}

static const struct fuse_lowlevel_ops null_ops = {
	.lookup = null_lookup,
	.getattr = null_getattr,
	.setattr = null_setattr,
	.readdir = null_readdir,
	.open = null_open,
	.read = null_read,
	.write = null_write,
	.poll = null_poll,
};

/* Print usage to stdout. */
static void usage(const char *prog)
{
	printf("usage: %s [options] MOUNTPOINT\n", prog);
	fuse_cmdline_help();
	fuse_lowlevel_help();
}

/* Parse options, mount, serve until unmounted or signalled. */
int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts;
	struct fuse_loop_config cfg;
	struct fuse_session *se;
	int ret = 1;

	if (fuse_parse_cmdline(&args, &opts) != 0)
		return 1;
	if (opts.show_help || !opts.mountpoint) {
		usage(argv[0]);
		ret = opts.show_help ? 0 : 1;
		goto out_args;
	}
	if (opts.show_version) {
		fuse_lowlevel_version();
		ret = 0;
		goto out_args;
	}
	se = fuse_session_new(&args, &null_ops, sizeof(null_ops), NULL);
	if (!se)
		goto out_args;
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_session_mount(se, opts.mountpoint) != 0)
		goto out_signals;
	fuse_daemonize(opts.foreground);
	if (opts.singlethread) {
		ret = fuse_session_loop(se);
	} else {
		/*
		 * The 3.2 struct, as fs.c uses: at FUSE_USE_VERSION 34 a
		 * fuse_loop_cfg_create() config is misread as clone_fd on and
		 * no idle threads, a thread per request (bench found it 30x
		 * slower than a null fs should be).
		 */
		cfg.clone_fd = 0;
		cfg.max_idle_threads = 10; /* as fs.c's loop */
		ret = fuse_session_loop_mt(se, &cfg);
	}
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
out_args:
	free(opts.mountpoint);
	fuse_opt_free_args(&args);
	return ret ? 1 : 0;
}
