/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for fs_all.c, who MOUNT/all/ reaches and how, on the host
 * (fs_harness.h: fs_ops driven with fake requests over a fake transport;
 * beta is this node).  The contract: all/ sits in the root beside the
 * nodes, its channels are made by O_CREAT and open write-only.  A write
 * to all/ CHAN goes to the group once (and to ourselves once, by unicast)
 * when the group is joined, else as one unicast copy per node that is
 * up; a node that failed already is not waited for, and is asked for
 * again; a message some up node would refuse as too big sends no copy
 * at all (EMSGSIZE).  How an all/ write waits and is answered (a parent
 * with a child per copy): test_fs_write.c.  After every test each
 * request has had exactly one reply.
 */
#include "fs_harness.h"

/* all/ is looked up and listed in the root; its channels are 0200. */
static void test_all_tree(void **state)
{
	struct fuse_file_info fi;
	fuse_ino_t ino;
	fuse_req_t r;

	assert_int_equal(lookup_ok(FS_ROOT_INO, "all"), t.fs->all->ino);
	r = req();
	fs_ops.opendir(r, FS_ROOT_INO, &fi);
	assert_int_equal(r->kind, REPLY_OPEN);
	assert_non_null(strstr(slurp(&r->fi, 1), "\nall\n"));
	fs_ops.releasedir(req(), FS_ROOT_INO, &r->fi);
	open_all("news", &fi);
	release(&fi);
	ino = lookup_ok(t.fs->all->ino, "news");
	r = req();
	fs_ops.getattr(r, ino, NULL);
	assert_int_equal(r->attr.st_mode, S_IFREG | 0200);
	assert_int_equal(open_ino(ino, O_RDONLY, &fi), EACCES);
	assert_int_equal(open_ino(ino, O_RDWR, &fi), EACCES);
	assert_int_equal(create(t.fs->all->ino, "other", O_RDWR, &fi), EACCES);
}

/* Joined: one send to the group and one to ourselves, none to peers. */
static void test_all_group(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	joined();
	open_all("news", &fi);
	r = write_fi(&fi, "hi");
	assert_int_equal(r->kind, REPLY_WRITE);
	assert_int_equal(t.tp.nmcast, 1);
	assert_int_equal(sent_to(-1), 1);
	assert_int_equal(sent_to(BETA), 1);
	assert_int_equal(sent_to(ALPHA), 0);
	assert_int_equal(sent_to(GAMMA), 0);
	assert_string_equal(t.tp.sent[0].chan, "news");
	assert_string_equal(t.tp.sent[0].data, "hi");
	assert_int_equal(t.tp.nflush, 1);
	release(&fi);
}

/* Not joined: one unicast copy per up node; a down one is skipped. */
static void test_all_fallback(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.peers[GAMMA].up = 0;
	t.peers[GAMMA].last_err = ECONNREFUSED; /* failed: not waited for */
	open_all("news", &fi);
	r = write_fi(&fi, "hi");
	assert_int_equal(r->kind, REPLY_WRITE);
	assert_int_equal(sent_to(-1), 0);
	assert_int_equal(sent_to(ALPHA), 1);
	assert_int_equal(sent_to(BETA), 1);
	assert_int_equal(sent_to(GAMMA), 0);
	assert_true(t.tp.nneed >= 1); /* gamma is asked for again */
	release(&fi);
}

/* A message over max_message fails the write, whichever way it goes. */
static void test_all_too_big(void **state)
{
	struct fuse_file_info fi;
	static char big[MAX_MESSAGE + 2];
	fuse_req_t r;

	memset(big, 'x', sizeof(big) - 1);
	joined();
	open_all("news", &fi);
	r = write_fi(&fi, big);
	assert_err(r, EMSGSIZE);
	t.tp.mcast.state = TP_MCAST_FALLBACK;
	r = write_fi(&fi, big);
	assert_err(r, EMSGSIZE);
	/* one node takes less: no copy goes, the writer is told */
	peer_use(&t.peers[GAMMA])->addr.max_message = 4;
	r = write_fi(&fi, "hello");
	assert_err(r, EMSGSIZE);
	assert_int_equal(t.tp.nsent, 0);
	release(&fi);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_all_tree),
		T(test_all_group),
		T(test_all_fallback),
		T(test_all_too_big),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
