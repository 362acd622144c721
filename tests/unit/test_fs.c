/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for fs.c, the tree and its operations table, on the host
 * (fs_harness.h: fs_ops driven with fake requests over a fake transport).
 * The contract: the root holds .status and one directory per node, each
 * with its .status, and lookup, getattr and readdir show that shape; a
 * peer's first message on a channel makes it; unknown names are ENOENT,
 * names inside a file ENOTDIR; O_CREAT makes a channel only in a node's
 * directory and only under a valid name; the namespace, modes and owners
 * are ibfs's (EPERM), truncating a channel discards nothing; open and
 * unlink refuse with the errno ibfs(8)'s FILE SYSTEM section gives; the
 * .status files open read-only and carry this node's and each peer's
 * state and counters; FORGET frees an unlinked channel; fsync succeeds.
 * After every test each request has had exactly one reply.  The .status
 * text line by line is test_fs_status.c's, queues, limits and writes
 * test_fs_chan.c's, what waits test_fs_park.c's.
 */
#include "fs_harness.h"

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
	assert_int_equal(r->attr.st_nlink, 2 + 3 + 1); /* and all/ */
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
	assert_non_null(strstr(s, "state=idle\n"));
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
	struct peer_counters *c = &peer_use(&t.peers[ALPHA])->cnt;
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
	/* the first drop counts on from the traffic counters */
#define ONE(name, comment) +1
	snprintf(want, sizeof(want), "drop_malformed=%d\n",
		 0 PEER_COUNTERS_TRAFFIC(ONE) + 1);
#undef ONE
	assert_non_null(strstr(s, want));
	/* the stream gauges are there, with their own numbers */
	assert_non_null(strstr(s, "\nrel_rto_ms="));
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
	assert_string_equal(
		slurp(&r->fi, 1),
		".\n..\n.status\n.metrics\nalpha\nbeta\ngamma\nall\n");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* the tree */
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
		/* lifetimes */
		T(test_forget),
		T(test_fsync),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
