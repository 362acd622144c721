/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for the FUSE side on the host: the test includes fs.c to
 * reach its fs_ops table (fs_chan.c, fs_park.c and fs_status.c come from
 * the library), and drives the operations with fake requests
 * (fake_fuse.c) over a fake transport (fake_tp.c).  Each test states one
 * line of README's Semantics table; after each, every request must have
 * had exactly one reply.  Node beta is this node; alpha and gamma peers.
 * The .status text line by line is test_fs_status.c's.
 */
#include "../../src/fs.c"

#include <stdio.h>

#include "unit.h"
#include "fake_fuse.c"
#include "fake_tp.c"

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define THREE_NODES                                                            \
	"[node alpha]\naddr = 10.0.2.15\n"                                     \
	"[node beta]\naddr = 10.0.2.16\n"                                      \
	"[node gamma]\naddr = 10.0.2.17\n"

#define STR_(x)	    #x
#define STR(x)	    STR_(x)
#define ALPHA	    0
#define BETA	    1
#define MAX_MESSAGE 4096

static struct {
	struct config cfg;
	struct peer *peers;
	struct fs *fs;
	struct tp tp;
	fuse_ino_t alpha;	 /* MOUNT/alpha */
	fuse_ino_t alpha_status; /* MOUNT/alpha/.status */
} t;

/* A fresh fs over a fake transport, every peer up. */
static int setup(void **state)
{
	char err[CONFIG_ERR_MAX];
	int i;

	memset(&t.cfg, 0, sizeof(t.cfg));
	if (config_load_string(THREE_NODES, "t.ini", &t.cfg, err,
			       sizeof(err)) ||
	    config_select_local(&t.cfg, "beta", err, sizeof(err)) ||
	    peer_table_open(&t.peers, &t.cfg))
		return -1;
	for (i = 0; i < t.cfg.nnodes; i++)
		t.peers[i].up = 1;
	fake_tp_init(&t.tp, MAX_MESSAGE);
	if (fs_open(&t.fs, &t.cfg, t.peers))
		return -1;
	fs_set_transport(t.fs, &t.tp);
	t.alpha = fs_node_ino(ALPHA, FS_SLOT_DIR);
	t.alpha_status = fs_node_ino(ALPHA, FS_SLOT_STATUS);
	return 0;
}

/* Close the fs, then hold it to the one-reply rule. */
static int teardown(void **state)
{
	int i;

	fs_close(t.fs);
	t.fs = NULL;
	for (i = 0; i < t.tp.nsent; i++)
		if (t.tp.sent[i].done)
			fail_msg("reliable send %d never completed", i);
	fake_check_replies();
	fake_reset();
	fake_tp_free(&t.tp);
	peer_table_close(t.peers, t.cfg.nnodes);
	config_free(&t.cfg);
	return 0;
}

/* A request to the fs under test. */
static fuse_req_t req(void)
{
	return fake_req(t.fs);
}

/* What r got, in words, for a failure message. */
static const char *got(fuse_req_t r, char *buf, size_t len)
{
	int n = fake_nreplies(r);

	if (n == 0)
		return "no reply (parked)";
	if (n > 1)
		snprintf(buf, len, "%d replies", n);
	else if (r->kind == REPLY_ERR)
		snprintf(buf, len, "error %d (%s)", r->err, strerror(r->err));
	else if (r->kind == REPLY_BUF)
		snprintf(buf, len, "%zu bytes \"%.40s\"", r->len, r->data);
	else
		snprintf(buf, len, "reply kind %d", r->kind);
	return buf;
}

/* Fail at the caller's line, saying what was wanted and what came. */
static void mismatch(fuse_req_t r, const char *want, const char *file, int line)
{
	char buf[128];

	print_error("want %s, got %s\n", want, got(r, buf, sizeof(buf)));
	_fail(file, line);
}

/* r was answered once, with error e (0: success without data). */
static void check_err(fuse_req_t r, int e, const char *file, int line)
{
	char want[64];

	if (fake_nreplies(r) != 1 || r->kind != REPLY_ERR || r->err != e) {
		snprintf(want, sizeof(want), "error %d (%s)", e, strerror(e));
		mismatch(r, want, file, line);
	}
}
#define assert_err(r, e) check_err(r, e, __FILE__, __LINE__)

/* r was answered once, with exactly the bytes of s ("" = EOF). */
static void check_data(fuse_req_t r, const char *s, const char *file, int line)
{
	char want[80];

	if (fake_nreplies(r) != 1 || r->kind != REPLY_BUF ||
	    r->len != strlen(s) || memcmp(r->data, s, r->len)) {
		snprintf(want, sizeof(want), *s ? "\"%.40s\"" : "EOF%s", s);
		mismatch(r, want, file, line);
	}
}
#define assert_data(r, s) check_data(r, s, __FILE__, __LINE__)

/* r has no reply yet: it is parked. */
static void check_parked(fuse_req_t r, const char *file, int line)
{
	if (fake_nreplies(r) != 0)
		mismatch(r, "no reply yet (parked)", file, line);
}
#define assert_parked(r) check_parked(r, __FILE__, __LINE__)

/* An fs_deliver result: 0 or -errno, named when it is not the one. */
static void check_rc(int rc, int want, const char *file, int line)
{
	if (rc != want) {
		print_error("want rc %d (%s), got %d (%s)\n", want,
			    want ? strerror(-want) : "ok", rc,
			    rc ? strerror(-rc) : "ok");
		_fail(file, line);
	}
}
#define assert_rc(rc, want) check_rc(rc, want, __FILE__, __LINE__)

/* Wait, bounded, for a reply another thread owes r. */
static void check_replied(fuse_req_t r, const char *file, int line)
{
	if (fake_wait(r))
		mismatch(r, "a reply within " STR(FAKE_WAIT_MS) " ms", file,
			 line);
}
#define wait_reply(r) check_replied(r, __FILE__, __LINE__)

/* LOOKUP name in parent; the errno it failed with, or 0 and *ino. */
static int lookup(fuse_ino_t parent, const char *name, fuse_ino_t *ino)
{
	fuse_req_t r = req();

	fs_ops.lookup(r, parent, name);
	assert_int_equal(fake_nreplies(r), 1);
	if (r->kind == REPLY_ERR)
		return r->err;
	assert_int_equal(r->kind, REPLY_ENTRY);
	if (ino)
		*ino = r->entry.ino;
	return 0;
}

/* LOOKUP that must succeed; the inode. */
static fuse_ino_t lookup_ok(fuse_ino_t parent, const char *name)
{
	fuse_ino_t ino = 0;

	assert_int_equal(lookup(parent, name, &ino), 0);
	return ino;
}

/* CREATE name in parent with flags; the errno, or 0 with *fi filled. */
static int create(fuse_ino_t parent, const char *name, int flags,
		  struct fuse_file_info *fi)
{
	struct fuse_file_info mine = {.flags = flags | O_CREAT};
	fuse_req_t r = req();

	fs_ops.create(r, parent, name, 0600, &mine);
	assert_int_equal(fake_nreplies(r), 1);
	if (r->kind == REPLY_ERR)
		return r->err;
	assert_int_equal(r->kind, REPLY_CREATE);
	if (fi)
		*fi = r->fi;
	return 0;
}

/* OPEN ino with flags; the errno, or 0 with *fi filled. */
static int open_ino(fuse_ino_t ino, int flags, struct fuse_file_info *fi)
{
	struct fuse_file_info mine = {.flags = flags};
	fuse_req_t r = req();

	fs_ops.open(r, ino, &mine);
	assert_int_equal(fake_nreplies(r), 1);
	if (r->kind == REPLY_ERR)
		return r->err;
	assert_int_equal(r->kind, REPLY_OPEN);
	*fi = r->fi;
	return 0;
}

/* Open alpha/name (made if need be) with flags. */
static void open_chan(const char *name, int flags, struct fuse_file_info *fi)
{
	assert_int_equal(create(t.alpha, name, flags, fi), 0);
}

/* READ of up to size bytes on an open file; the request, maybe parked. */
static fuse_req_t read_fi(struct fuse_file_info *fi, size_t size)
{
	fuse_req_t r = req();

	fs_ops.read(r, 0, size, 0, fi);
	return r;
}

/* RELEASE of an open file. */
static void release(struct fuse_file_info *fi)
{
	fuse_req_t r = req();

	fs_ops.release(r, 0, fi);
	assert_err(r, 0);
}

/* A message of len bytes of s from peer idx on chan; fs_deliver's rc. */
static int deliver_len(int idx, const char *chan, const char *s, size_t len)
{
	char *data = malloc(len ? len : 1);
	int rc;

	assert_non_null(data);
	memcpy(data, s, len);
	rc = fs_deliver(t.fs, &t.peers[idx], chan, data, len);
	if (rc)
		free(data); /* the transport's part */
	return rc;
}

/* The string s as a message from alpha on chan. */
static int deliver(const char *chan, const char *s)
{
	return deliver_len(ALPHA, chan, s, strlen(s));
}

/* GETATTR's st_size of ino. */
static off_t size_of(fuse_ino_t ino)
{
	fuse_req_t r = req();

	fs_ops.getattr(r, ino, NULL);
	assert_int_equal(fake_nreplies(r), 1);
	assert_int_equal(r->kind, REPLY_ATTR);
	return r->attr.st_size;
}

/* WRITE of s on an open file; the request. */
static fuse_req_t write_fi(struct fuse_file_info *fi, const char *s)
{
	fuse_req_t r = req();

	fs_ops.write(r, 0, s, strlen(s), 0, fi);
	return r;
}

/* The whole text of an open .status or directory snapshot. */
static char *slurp(struct fuse_file_info *fi, int dir)
{
	fuse_req_t r = req();

	if (dir)
		fs_ops.readdir(r, 0, 65536, 0, fi);
	else
		fs_ops.read(r, 0, 65536, 0, fi);
	assert_int_equal(fake_nreplies(r), 1);
	assert_int_equal(r->kind, REPLY_BUF);
	return r->data;
}

/* ---- the tree ---- */

/* The root holds .status and one directory per node; each its .status. */
static void test_tree_lookup(void **state)
{
	fuse_ino_t ino;
	fuse_req_t r;

	assert_int_equal(lookup_ok(FS_ROOT_INO, ".status"), FS_ROOT_STATUS_INO);
	ino = lookup_ok(FS_ROOT_INO, "gamma");
	assert_int_not_equal(lookup_ok(FS_ROOT_INO, "alpha"), ino);
	assert_int_not_equal(lookup_ok(ino, ".status"), ino);
	r = req();
	fs_ops.getattr(r, ino, NULL);
	assert_int_equal(r->kind, REPLY_ATTR);
	assert_int_equal(r->attr.st_mode, S_IFDIR | 0700);
	r = req();
	fs_ops.getattr(r, lookup_ok(ino, ".status"), NULL);
	assert_int_equal(r->attr.st_mode, S_IFREG | 0400);
	r = req();
	fs_ops.getattr(r, FS_ROOT_INO, NULL);
	assert_int_equal(r->attr.st_nlink, 2 + 3);
}

/* Unknown nodes and channels are ENOENT; inside a file, ENOTDIR. */
static void test_tree_unknown(void **state)
{
	fuse_req_t r;

	assert_int_equal(lookup(FS_ROOT_INO, "nosuch", NULL), ENOENT);
	assert_int_equal(lookup(t.alpha, "nosuch", NULL), ENOENT);
	assert_int_equal(lookup(t.alpha, ".hidden", NULL), ENOENT);
	assert_int_equal(lookup(FS_ROOT_STATUS_INO, "x", NULL), ENOTDIR);
	r = req();
	fs_ops.getattr(r, 100000, NULL);
	assert_err(r, ENOENT);
	r = req();
	fs_ops.lookup(r, 100000, "x");
	assert_err(r, ENOENT);
}

/* A message on a new channel makes it; its size is the bytes queued. */
static void test_tree_channel_from_message(void **state)
{
	fuse_ino_t ino;

	assert_int_equal(lookup(t.alpha, "chat", NULL), ENOENT);
	assert_rc(deliver("chat", "hello"), 0);
	ino = lookup_ok(t.alpha, "chat");
	assert_int_equal(size_of(ino), 5);
	/* alpha's channel is not gamma's */
	assert_int_equal(lookup(lookup_ok(FS_ROOT_INO, "gamma"), "chat", NULL),
			 ENOENT);
}

/* O_CREAT in a node dir makes a channel; in the root it is EPERM. */
static void test_tree_create(void **state)
{
	struct fuse_file_info fi;

	assert_int_equal(create(t.alpha, "chat", O_WRONLY, &fi), 0);
	assert_int_not_equal(fi.fh, 0);
	assert_true(fi.direct_io);
	assert_true(fi.nonseekable);
	assert_int_not_equal(lookup_ok(t.alpha, "chat"), 0);
	assert_int_equal(create(FS_ROOT_INO, "chat", O_WRONLY, NULL), EPERM);
	assert_int_equal(create(FS_ROOT_STATUS_INO, "x", O_WRONLY, NULL),
			 ENOTDIR);
	assert_int_equal(create(t.alpha, "chat", O_WRONLY | O_EXCL, NULL),
			 EEXIST);
	release(&fi);
}

/* A name starting with '.' is EPERM; one over 63 bytes EINVAL. */
static void test_tree_create_bad_names(void **state)
{
	char name[80];
	struct fuse_file_info fi;

	assert_int_equal(create(t.alpha, ".hidden", O_WRONLY, NULL), EPERM);
	assert_int_equal(create(t.alpha, ".status", O_WRONLY, NULL), EPERM);
	memset(name, 'n', 64);
	name[64] = '\0';
	assert_int_equal(create(t.alpha, name, O_WRONLY, NULL), EINVAL);
	name[63] = '\0';
	assert_int_equal(create(t.alpha, name, O_WRONLY, &fi), 0);
	release(&fi);
}

/* The tree is ibfs's: namespace changes and chmod/chown are EPERM. */
static void test_tree_eperm(void **state)
{
	struct stat st = {0};
	fuse_req_t r[8];
	int i;

	for (i = 0; i < 8; i++)
		r[i] = req();
	fs_ops.mkdir(r[0], t.alpha, "d", 0700);
	fs_ops.rmdir(r[1], FS_ROOT_INO, "alpha");
	fs_ops.mknod(r[2], t.alpha, "n", S_IFREG | 0600, 0);
	fs_ops.rename(r[3], t.alpha, "a", t.alpha, "b", 0);
	fs_ops.link(r[4], FS_ROOT_STATUS_INO, t.alpha, "l");
	fs_ops.symlink(r[5], "/x", t.alpha, "s");
	fs_ops.setattr(r[6], t.alpha, &st, FUSE_SET_ATTR_MODE, NULL);
	fs_ops.setattr(r[7], FS_ROOT_STATUS_INO, &st, FUSE_SET_ATTR_UID, NULL);
	for (i = 0; i < 8; i++)
		assert_err(r[i], EPERM);
}

/* rm .status and rm in the root are EPERM; rm of nothing ENOENT. */
static void test_tree_unlink_errors(void **state)
{
	fuse_req_t r[3];
	int i;

	for (i = 0; i < 3; i++)
		r[i] = req();
	fs_ops.unlink(r[0], t.alpha, ".status");
	fs_ops.unlink(r[1], FS_ROOT_INO, "alpha");
	fs_ops.unlink(r[2], t.alpha, "nosuch");
	assert_err(r[0], EPERM);
	assert_err(r[1], EPERM);
	assert_err(r[2], ENOENT);
}

/* Truncating a channel discards nothing; truncating .status is EPERM. */
static void test_tree_truncate(void **state)
{
	struct stat st = {0};
	fuse_ino_t ino;
	fuse_req_t r;

	assert_rc(deliver("chat", "hello"), 0);
	ino = lookup_ok(t.alpha, "chat");
	r = req();
	fs_ops.setattr(r, ino, &st, FUSE_SET_ATTR_SIZE, NULL);
	assert_int_equal(r->kind, REPLY_ATTR);
	assert_int_equal(r->attr.st_size, 5);
	assert_int_equal(size_of(ino), 5);
	r = req();
	fs_ops.setattr(r, FS_ROOT_STATUS_INO, &st, FUSE_SET_ATTR_SIZE, NULL);
	assert_err(r, EPERM);
}

/* .status is read-only (EACCES), a directory EISDIR, nothing ENOENT. */
static void test_tree_open_errors(void **state)
{
	struct fuse_file_info fi;

	assert_int_equal(open_ino(FS_ROOT_STATUS_INO, O_WRONLY, &fi), EACCES);
	assert_int_equal(open_ino(lookup_ok(t.alpha, ".status"), O_RDWR, &fi),
			 EACCES);
	assert_int_equal(open_ino(t.alpha, O_RDONLY, &fi), EISDIR);
	assert_int_equal(open_ino(100000, O_RDONLY, &fi), ENOENT);
}

/* The status files say who this node is, and each peer's state. */
static void test_tree_status_files(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;
	char *s;

	atomic_store(&t.tp.totals.drops[DROP_QUEUE_FULL], 7);
	assert_int_equal(open_ino(FS_ROOT_STATUS_INO, O_RDONLY, &fi), 0);
	s = slurp(&fi, 0);
	assert_non_null(strstr(s, "node=beta\n"));
	assert_non_null(strstr(s, "device=fake0\n"));
	assert_non_null(strstr(s, "drop_queue_full=7\n"));
	r = req();
	fs_ops.write(r, FS_ROOT_STATUS_INO, "x", 1, 0, &fi);
	assert_err(r, EBADF);
	release(&fi);

	t.peers[ALPHA].up = 0;
	assert_rc(deliver("chat", "x"), 0);
	assert_int_equal(open_ino(t.alpha_status, O_RDONLY, &fi), 0);
	s = slurp(&fi, 0);
	assert_non_null(strstr(s, "name=alpha\n"));
	assert_non_null(strstr(s, "state=down\n"));
	assert_non_null(strstr(s, "channels=1\n"));
	release(&fi);
}

/*
 * NODE/.status shows every counter of peer.h's tables, in their order,
 * each with its own value; the per-stream gauges only there.  Known
 * values: the k-th line of the counter part says k.
 */
static void test_tree_status_counters(void **state)
{
	struct peer_counters *c = &t.peers[ALPHA].cnt;
	struct fuse_file_info fi;
	char want[4096], *s, *at;
	size_t n = 0;
	int i, k = 0;

#define SET(name, comment)                                                     \
	atomic_store(&c->name, ++k);                                           \
	n += snprintf(want + n, sizeof(want) - n, #name "=%d\n", k);
	PEER_COUNTERS_TRAFFIC(SET)
	for (i = 0; i < DROP_MAX; i++) {
		atomic_store(&c->drops[i], ++k);
		n += snprintf(want + n, sizeof(want) - n, "drop_%s=%d\n",
			      peer_drop_names[i], k);
	}
	PEER_COUNTERS_REL(SET)
	PEER_GAUGES_STREAM(SET)
#undef SET
	assert_true(n < sizeof(want));
	assert_int_equal(open_ino(t.alpha_status, O_RDONLY, &fi), 0);
	s = slurp(&fi, 0);
	at = strstr(s, "msgs_tx=");
	assert_non_null(at);
	assert_string_equal(at, want);
	assert_non_null(strstr(s, "drop_malformed=6\n"));
	assert_non_null(strstr(s, "rel_rto_ms=20\n"));
	release(&fi);
	/* the stream gauges are per peer: never in the root's totals */
	assert_int_equal(open_ino(FS_ROOT_STATUS_INO, O_RDONLY, &fi), 0);
	s = slurp(&fi, 0);
	assert_null(strstr(s, "rel_srtt_ms="));
	assert_non_null(strstr(s, "rel_rtos=0\n"));
	release(&fi);
}

/* ls: the root lists .status and the nodes, a node its channels. */
static void test_tree_readdir(void **state)
{
	struct fuse_file_info fi = {0};
	fuse_req_t r;

	r = req();
	fs_ops.opendir(r, FS_ROOT_INO, &fi);
	assert_int_equal(r->kind, REPLY_OPEN);
	assert_string_equal(slurp(&r->fi, 1),
			    ".\n..\n.status\nalpha\nbeta\ngamma\n");
	fs_ops.releasedir(req(), FS_ROOT_INO, &r->fi);
	assert_rc(deliver("chat", "x"), 0);
	r = req();
	fs_ops.opendir(r, t.alpha, &fi);
	assert_string_equal(slurp(&r->fi, 1), ".\n..\n.status\nchat\n");
	fs_ops.releasedir(req(), t.alpha, &r->fi);
	r = req();
	fs_ops.opendir(r, FS_ROOT_STATUS_INO, &fi);
	assert_err(r, ENOTDIR);
}

/* ---- queue limits ---- */

/* A channel holding queue_limit bytes refuses more: -ENOSPC, nothing
 * queued. */
static void test_limit_queue(void **state)
{
	struct fuse_file_info fi;
	fuse_ino_t ino;

	t.cfg.queue_limit = 10;
	assert_rc(deliver("chat", "123456"), 0);
	assert_rc(deliver("chat", "78901"), -ENOSPC);
	ino = lookup_ok(t.alpha, "chat");
	assert_int_equal(size_of(ino), 6);
	assert_rc(deliver("chat", "7890"), 0); /* exactly the limit */
	assert_int_equal(size_of(ino), 10);
	assert_rc(deliver("chat", "x"), -ENOSPC);
	open_chan("chat", O_RDONLY, &fi);
	assert_data(read_fi(&fi, 100), "123456");
	assert_data(read_fi(&fi, 100), "7890");
	assert_data(read_fi(&fi, 100), "");	 /* nothing else was queued */
	assert_rc(deliver("chat", "abcdef"), 0); /* room again */
	release(&fi);
}

/* A peer makes at most max_channels channels; more are refused. */
static void test_limit_channels_remote(void **state)
{
	fuse_req_t r;

	t.cfg.max_channels = 2;
	assert_rc(deliver("a", "x"), 0);
	assert_rc(deliver("b", "x"), 0);
	assert_rc(deliver("c", "x"), -ENOSPC);
	assert_int_equal(lookup(t.alpha, "c", NULL), ENOENT);
	assert_rc(deliver("a", "y"), 0); /* known channels still take */
	/* each peer has its own count */
	assert_rc(deliver_len(BETA, "c", "x", 1), 0);
	/* rm gives the peer room again */
	r = req();
	fs_ops.unlink(r, t.alpha, "b");
	assert_err(r, 0);
	assert_rc(deliver("c", "x"), 0);
}

/* Names a peer may not make: '.'-names and invalid ones (-ENOSPC). */
static void test_limit_channel_names(void **state)
{
	char name[80];

	memset(name, 'n', 64);
	name[64] = '\0';
	assert_rc(deliver(".status", "x"), -ENOSPC);
	assert_rc(deliver(".x", "x"), -ENOSPC);
	assert_rc(deliver(name, "x"), -ENOSPC);
	assert_int_equal(lookup(t.alpha, ".x", NULL), ENOENT);
}

/*
 * max_channels bounds what a peer's messages create; the mounting user's
 * own O_CREATs (a script sending on many channels) are neither limited
 * nor counted against the peer, and take messages like any channel.
 */
static void test_limit_channels_local(void **state)
{
	struct fuse_file_info fi[3];
	int i;

	t.cfg.max_channels = 1;
	open_chan("l0", O_RDONLY, &fi[0]);
	open_chan("l1", O_RDONLY, &fi[1]);
	open_chan("l2", O_RDONLY, &fi[2]);
	assert_rc(deliver("l0", "x"), 0);
	assert_rc(deliver("r0", "x"), 0);
	assert_rc(deliver("r1", "x"), -ENOSPC);
	for (i = 0; i < 3; i++)
		release(&fi[i]);
}

/* ---- reads ---- */

/* size = bytes queued, falling as reads take messages. */
static void test_read_size_tracks_queue(void **state)
{
	struct fuse_file_info fi;
	fuse_ino_t ino;

	assert_rc(deliver("chat", "hello"), 0);
	assert_rc(deliver("chat", "abc"), 0);
	ino = lookup_ok(t.alpha, "chat");
	assert_int_equal(size_of(ino), 8);
	open_chan("chat", O_RDONLY, &fi);
	assert_data(read_fi(&fi, 4096), "hello");
	assert_int_equal(size_of(ino), 3);
	assert_data(read_fi(&fi, 4096), "abc");
	assert_int_equal(size_of(ino), 0);
	release(&fi);
}

/* A short read takes part of a message; the rest stays at the head. */
static void test_read_short(void **state)
{
	struct fuse_file_info fi;

	assert_rc(deliver("chat", "hello world"), 0);
	assert_rc(deliver("chat", "next"), 0);
	open_chan("chat", O_RDONLY, &fi);
	assert_data(read_fi(&fi, 5), "hello");
	assert_int_equal(size_of(lookup_ok(t.alpha, "chat")), 6 + 4);
	assert_data(read_fi(&fi, 100), " world");
	assert_data(read_fi(&fi, 100), "next");
	release(&fi);
}

/* The first read on an empty channel parks; a message answers it once. */
static void test_read_parks(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	open_chan("chat", O_RDONLY, &fi);
	r = read_fi(&fi, 4096);
	assert_parked(r);
	assert_rc(deliver("chat", "hi"), 0);
	assert_data(r, "hi");
	assert_int_equal(size_of(lookup_ok(t.alpha, "chat")), 0);
	fs_announce(t.fs); /* nothing more to tell */
	assert_int_equal(fake_nreplies(r), 1);
	release(&fi);
}

/* A message over 64 KiB goes to the parked reader only at announce. */
static void test_read_parks_large(void **state)
{
	size_t len = FS_ANSWER_NOW_MAX + 1;
	struct fuse_file_info fi;
	char *big = malloc(len);
	fuse_req_t r;

	assert_non_null(big);
	memset(big, 'x', len);
	open_chan("chat", O_RDONLY, &fi);
	r = read_fi(&fi, len);
	assert_rc(deliver_len(ALPHA, "chat", big, len), 0);
	assert_parked(r);
	fs_announce(t.fs);
	assert_int_equal(fake_nreplies(r), 1);
	assert_int_equal(r->kind, REPLY_BUF);
	assert_int_equal(r->len, len);
	assert_memory_equal(r->data, big, len);
	free(big);
	release(&fi);
}

/* Parked readers are answered in order, one message each. */
static void test_read_parked_fifo(void **state)
{
	struct fuse_file_info fi[2];
	fuse_req_t r0, r1;

	open_chan("chat", O_RDONLY, &fi[0]);
	open_chan("chat", O_RDONLY, &fi[1]);
	r0 = read_fi(&fi[0], 100);
	r1 = read_fi(&fi[1], 100);
	assert_rc(deliver("chat", "one"), 0);
	assert_data(r0, "one");
	assert_parked(r1);
	assert_rc(deliver("chat", "two"), 0);
	assert_data(r1, "two");
	release(&fi[0]);
	release(&fi[1]);
}

/* O_NONBLOCK: a read that would wait is EAGAIN (and fcntl may clear it). */
static void test_read_nonblock(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	open_chan("chat", O_RDONLY | O_NONBLOCK, &fi);
	assert_err(read_fi(&fi, 100), EAGAIN);
	fi.flags &= ~O_NONBLOCK;
	r = read_fi(&fi, 100);
	assert_parked(r);
	assert_rc(deliver("chat", "m"), 0);
	assert_data(r, "m");
	release(&fi);
}

/* O_RDONLY: once a read returned data, an empty queue is EOF. */
static void test_read_rdonly_eof(void **state)
{
	struct fuse_file_info fi;

	assert_rc(deliver("chat", "m"), 0);
	open_chan("chat", O_RDONLY, &fi);
	assert_data(read_fi(&fi, 100), "m");
	assert_data(read_fi(&fi, 100), "");
	release(&fi);
}

/* O_RDWR is a conversation: every read waits, like a socket's. */
static void test_read_rdwr_waits(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	assert_rc(deliver("chat", "m"), 0);
	open_chan("chat", O_RDWR, &fi);
	assert_data(read_fi(&fi, 100), "m");
	r = read_fi(&fi, 100);
	assert_parked(r);
	assert_rc(deliver("chat", "n"), 0);
	assert_data(r, "n");
	release(&fi);
}

/* rm answers the channel's waiting readers with EOF; it can come back. */
static void test_read_unlink_eof(void **state)
{
	struct fuse_file_info fi[2];
	fuse_ino_t ino;
	fuse_req_t r0, r1, u;

	open_chan("chat", O_RDONLY, &fi[0]);
	open_chan("chat", O_RDWR, &fi[1]);
	ino = lookup_ok(t.alpha, "chat");
	r0 = read_fi(&fi[0], 100);
	r1 = read_fi(&fi[1], 100);
	u = req();
	fs_ops.unlink(u, t.alpha, "chat");
	assert_err(u, 0);
	assert_data(r0, "");
	assert_data(r1, "");
	assert_data(read_fi(&fi[1], 100), ""); /* an unlinked file is EOF */
	assert_int_equal(lookup(t.alpha, "chat", NULL), ENOENT);
	assert_rc(deliver("chat", "again"), 0);
	assert_int_not_equal(lookup_ok(t.alpha, "chat"), ino);
	release(&fi[0]);
	release(&fi[1]);
}

/* rm discards the queue. */
static void test_read_unlink_discards(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t u = req();

	assert_rc(deliver("chat", "old"), 0);
	fs_ops.unlink(u, t.alpha, "chat");
	assert_err(u, 0);
	assert_rc(deliver("chat", "new"), 0);
	open_chan("chat", O_RDONLY, &fi);
	assert_data(read_fi(&fi, 100), "new");
	release(&fi);
}

/* A signal: the reaper answers EINTR, and the next message is not lost. */
static void test_read_interrupt(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	open_chan("chat", O_RDWR, &fi);
	r = read_fi(&fi, 100);
	assert_parked(r);
	fake_interrupt(r);
	wait_reply(r);
	assert_err(r, EINTR);
	assert_rc(deliver("chat", "kept"), 0);
	assert_data(read_fi(&fi, 100), "kept");
	release(&fi);
}

/* A message that arrives between the signal and the EINTR stays queued. */
static void test_read_interrupt_race(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	open_chan("chat", O_RDONLY, &fi);
	r = read_fi(&fi, 100);
	fake_interrupt(r);
	assert_rc(deliver("chat", "kept"), 0);
	wait_reply(r);
	assert_err(r, EINTR);
	assert_int_equal(size_of(lookup_ok(t.alpha, "chat")), 4);
	release(&fi);
}

/* Mark r's parked waiter interrupted without waking the reaper: the
 * moment between the signal and the reaper's turn. */
static void interrupt_unreaped(fuse_req_t r)
{
	struct fs_waiter *w;

	pthread_mutex_lock(&t.fs->lock);
	TAILQ_FOREACH (w, &t.fs->waiters, all_link)
		if (w->req == r)
			w->interrupted = 1;
	pthread_mutex_unlock(&t.fs->lock);
	r->interrupted = 1;
}

/* Let the reaper take its turn. */
static void wake_reaper(void)
{
	pthread_mutex_lock(&t.fs->lock);
	pthread_cond_signal(&t.fs->reaper_cond);
	pthread_mutex_unlock(&t.fs->lock);
}

/*
 * A reader parked behind an interrupted one gets what came meanwhile: the
 * message queues because r0 is the reaper's, r1 parks, and the reaper's
 * EINTR for r0 hands the message on (before, r1 waited for the next one).
 */
static void test_read_behind_interrupted(void **state)
{
	struct fuse_file_info fi[2];
	fuse_req_t r0, r1;

	open_chan("chat", O_RDONLY, &fi[0]);
	open_chan("chat", O_RDONLY, &fi[1]);
	r0 = read_fi(&fi[0], 100);
	interrupt_unreaped(r0);
	assert_rc(deliver("chat", "m"), 0); /* queued: r0 is the reaper's */
	r1 = read_fi(&fi[1], 100);
	wake_reaper();
	wait_reply(r0);
	assert_err(r0, EINTR);
	wait_reply(r1);
	assert_data(r1, "m");
	release(&fi[0]);
	release(&fi[1]);
}

/* A read already interrupted when it comes is EINTR at once. */
static void test_read_interrupted_before(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r = req();

	open_chan("chat", O_RDONLY, &fi);
	r->interrupted = 1;
	fs_ops.read(r, 0, 100, 0, &fi);
	assert_err(r, EINTR);
	release(&fi);
}

/* A reply the kernel no longer takes goes back to the head of the queue. */
static void test_read_reply_refused(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	open_chan("chat", O_RDWR, &fi);
	r = read_fi(&fi, 100);
	r->gone = 1;
	assert_rc(deliver("chat", "first"), 0);
	assert_int_equal(fake_nreplies(r), 1);
	assert_rc(deliver("chat", "second"), 0);
	assert_data(read_fi(&fi, 100), "first");
	assert_data(read_fi(&fi, 100), "second");
	release(&fi);
}

/*
 * A reply refused by the kernel goes back to the head of the queue, and
 * to the next parked reader.
 */
static void test_read_reply_refused_parked(void **state)
{
	struct fuse_file_info fi[2];
	fuse_req_t r0, r1;

	open_chan("chat", O_RDONLY, &fi[0]);
	open_chan("chat", O_RDONLY, &fi[1]);
	r0 = read_fi(&fi[0], 100);
	r1 = read_fi(&fi[1], 100);
	r0->gone = 1;
	assert_rc(deliver("chat", "m"), 0);
	wait_reply(r1);
	assert_data(r1, "m");
	release(&fi[0]);
	release(&fi[1]);
}

/* read_timeout: a waiting read ends with EOF. */
static void test_read_timeout(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.cfg.read_timeout_ms = 20;
	open_chan("chat", O_RDONLY, &fi);
	r = read_fi(&fi, 100);
	wait_reply(r);
	assert_data(r, "");
	release(&fi);
}

/* RELEASE with a read still parked (its owner killed): EINTR for it. */
static void test_read_release_parked(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	open_chan("chat", O_RDONLY, &fi);
	r = read_fi(&fi, 100);
	release(&fi);
	assert_err(r, EINTR);
	assert_rc(deliver("chat", "m"), 0);
	assert_int_equal(size_of(lookup_ok(t.alpha, "chat")), 1);
}

/* Unmount answers waiting readers with ENOTCONN, and later reads too. */
static void test_read_unmount(void **state)
{
	struct fuse_file_info fi[2];
	fuse_req_t r0, r1;

	open_chan("chat", O_RDONLY, &fi[0]);
	open_chan("other", O_RDWR, &fi[1]);
	r0 = read_fi(&fi[0], 100);
	r1 = read_fi(&fi[1], 100);
	fs_unmount(t.fs);
	assert_err(r0, ENOTCONN);
	assert_err(r1, ENOTCONN);
	assert_err(read_fi(&fi[0], 100), ENOTCONN);
	/* messages still queue, and may be read */
	assert_rc(deliver("chat", "late"), 0);
	assert_data(read_fi(&fi[0], 100), "late");
	fs_unmount(t.fs); /* twice is harmless */
	release(&fi[0]);
	release(&fi[1]);
}

/* ---- writes ---- */

/* Datagram mode: one write is one tp_queue to that peer and channel. */
static void test_write_datagram(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	open_chan("chat", O_WRONLY, &fi);
	r = write_fi(&fi, "hello");
	assert_int_equal(fake_nreplies(r), 1);
	assert_int_equal(r->kind, REPLY_WRITE);
	assert_int_equal(r->len, 5);
	assert_int_equal(t.tp.nqueue, 1);
	assert_int_equal(t.tp.nsent, 1);
	assert_ptr_equal(t.tp.sent[0].peer, &t.peers[ALPHA]);
	assert_string_equal(t.tp.sent[0].chan, "chat");
	assert_int_equal(t.tp.sent[0].len, 5);
	assert_string_equal(t.tp.sent[0].data, "hello");
	assert_int_equal(t.tp.nflush, 1);
	assert_int_equal(t.tp.nasync, 0);
	release(&fi);
}

/* The transport's refusal is the write's errno. */
static void test_write_errors(void **state)
{
	char big[MAX_MESSAGE + 2];
	struct fuse_file_info fi;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	open_chan("chat", O_WRONLY, &fi);
	assert_err(write_fi(&fi, big), EMSGSIZE);
	t.peers[ALPHA].up = 0;
	assert_err(write_fi(&fi, "x"), ENOTCONN);
	assert_int_equal(t.tp.nsent, 0);
	fs_set_transport(t.fs, NULL); /* not opened yet */
	t.peers[ALPHA].up = 1;
	assert_err(write_fi(&fi, "x"), ENOTCONN);
	assert_int_equal(t.tp.nqueue, 2);
	release(&fi);
}

/* Reliable mode: the write is answered by the completion, not before. */
static void test_write_reliable(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r0, r1;

	t.tp.reliable = 1;
	open_chan("chat", O_WRONLY, &fi);
	r0 = write_fi(&fi, "hello");
	r1 = write_fi(&fi, "lost");
	assert_parked(r0);
	assert_parked(r1);
	assert_int_equal(t.tp.nasync, 2);
	assert_int_equal(t.tp.nqueue, 0);
	assert_string_equal(t.tp.sent[0].chan, "chat");
	assert_ptr_equal(t.tp.sent[0].peer, &t.peers[ALPHA]);
	assert_int_equal(t.tp.sent[0].flags, 0);
	fake_tp_complete(&t.tp, 0, 0);
	assert_int_equal(r0->kind, REPLY_WRITE);
	assert_int_equal(r0->len, 5);
	fake_tp_complete(&t.tp, 1, -ETIMEDOUT);
	assert_err(r1, ETIMEDOUT);
	release(&fi);
}

/* Reliable, O_NONBLOCK: no credit is EAGAIN at once. */
static void test_write_reliable_nonblock(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.tp.reliable = 1;
	open_chan("chat", O_WRONLY | O_NONBLOCK, &fi);
	r = write_fi(&fi, "a");
	assert_int_equal(t.tp.sent[0].flags, TP_SEND_NONBLOCK);
	fake_tp_complete(&t.tp, 0, 0);
	assert_int_equal(r->kind, REPLY_WRITE);
	t.tp.async_rc = -EAGAIN;
	assert_err(write_fi(&fi, "b"), EAGAIN);
	t.peers[ALPHA].up = 0;
	assert_err(write_fi(&fi, "c"), ENOTCONN);
	release(&fi);
}

/* A completion after unmount answers nothing: the kernel aborted it. */
static void test_write_reliable_after_unmount(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.tp.reliable = 1;
	open_chan("chat", O_WRONLY, &fi);
	r = write_fi(&fi, "a");
	fs_unmount(t.fs);
	fake_tp_complete(&t.tp, 0, 0);
	assert_parked(r);
	r->abandoned = 1;
	release(&fi);
}

/* ---- poll ---- */

/* Always writable; readable while a message is queued; notified. */
static void test_poll(void **state)
{
	struct fuse_pollhandle *ph = fake_pollhandle();
	struct fuse_file_info fi;
	fuse_req_t r;

	open_chan("chat", O_RDONLY, &fi);
	r = req();
	fs_ops.poll(r, 0, &fi, ph);
	assert_int_equal(r->kind, REPLY_POLL);
	assert_int_equal(r->revents, POLLOUT | POLLWRNORM);
	assert_int_equal(ph->destroyed, 0);
	assert_rc(deliver("chat", "m"), 0);
	assert_int_equal(ph->notified, 1);
	assert_int_equal(ph->destroyed, 1);
	r = req();
	fs_ops.poll(r, 0, &fi, NULL);
	assert_true(r->revents & POLLIN);
	release(&fi);
}

/* A large message notifies the poller at announce. */
static void test_poll_large(void **state)
{
	struct fuse_pollhandle *ph = fake_pollhandle();
	size_t len = FS_ANSWER_NOW_MAX + 1;
	struct fuse_file_info fi;
	char *big = calloc(1, len);

	open_chan("chat", O_RDONLY, &fi);
	fs_ops.poll(req(), 0, &fi, ph);
	assert_rc(deliver_len(ALPHA, "chat", big, len), 0);
	assert_int_equal(ph->notified, 0);
	fs_announce(t.fs);
	assert_int_equal(ph->notified, 1);
	assert_int_equal(ph->destroyed, 1);
	free(big);
	release(&fi);
}

/* A poll handle still held at unmount is dropped, not notified. */
static void test_poll_unmount(void **state)
{
	struct fuse_pollhandle *ph = fake_pollhandle();
	struct fuse_file_info fi;

	open_chan("chat", O_RDONLY, &fi);
	fs_ops.poll(req(), 0, &fi, ph);
	fs_unmount(t.fs);
	assert_int_equal(ph->destroyed, 1);
	assert_rc(deliver("chat", "m"), 0);
	assert_int_equal(ph->notified, 0);
	release(&fi);
}

/* ---- lifetimes ---- */

/* FORGET of an unlinked, closed channel frees it; the reply is none. */
static void test_forget(void **state)
{
	struct fuse_forget_data fd;
	fuse_ino_t ino;
	fuse_req_t r;

	assert_rc(deliver("chat", "m"), 0);
	ino = lookup_ok(t.alpha, "chat");
	fs_ops.unlink(req(), t.alpha, "chat");
	assert_non_null(t.fs->chans[fs_chan_slot(t.fs, ino)]);
	r = req();
	fs_ops.forget(r, ino, 1);
	assert_int_equal(r->kind, REPLY_NONE);
	assert_null(t.fs->chans[fs_chan_slot(t.fs, ino)]);
	fd.ino = 100000;
	fd.nlookup = 1;
	r = req();
	fs_ops.forget_multi(r, 1, &fd);
	assert_int_equal(r->kind, REPLY_NONE);
}

/* fsync succeeds at once. */
static void test_fsync(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r = req();

	open_chan("chat", O_WRONLY, &fi);
	fs_ops.fsync(r, 0, 0, &fi);
	assert_err(r, 0);
	release(&fi);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_tree_lookup),
		T(test_tree_unknown),
		T(test_tree_channel_from_message),
		T(test_tree_create),
		T(test_tree_create_bad_names),
		T(test_tree_eperm),
		T(test_tree_unlink_errors),
		T(test_tree_truncate),
		T(test_tree_open_errors),
		T(test_tree_status_files),
		T(test_tree_status_counters),
		T(test_tree_readdir),
		T(test_limit_queue),
		T(test_limit_channels_remote),
		T(test_limit_channel_names),
		T(test_limit_channels_local),
		T(test_read_size_tracks_queue),
		T(test_read_short),
		T(test_read_parks),
		T(test_read_parks_large),
		T(test_read_parked_fifo),
		T(test_read_nonblock),
		T(test_read_rdonly_eof),
		T(test_read_rdwr_waits),
		T(test_read_unlink_eof),
		T(test_read_unlink_discards),
		T(test_read_interrupt),
		T(test_read_interrupt_race),
		T(test_read_behind_interrupted),
		T(test_read_interrupted_before),
		T(test_read_reply_refused),
		T(test_read_reply_refused_parked),
		T(test_read_timeout),
		T(test_read_release_parked),
		T(test_read_unmount),
		T(test_write_datagram),
		T(test_write_errors),
		T(test_write_reliable),
		T(test_write_reliable_nonblock),
		T(test_write_reliable_after_unmount),
		T(test_poll),
		T(test_poll_large),
		T(test_poll_unmount),
		T(test_forget),
		T(test_fsync),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
