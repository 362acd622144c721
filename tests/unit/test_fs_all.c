/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for fs_all.c, MOUNT/all/, on the host (fs_harness.h: fs_ops
 * driven with fake requests over a fake transport; beta is this node).
 * The contract: all/ sits in the root beside the nodes, its channels are
 * made by O_CREAT and open write-only.  A write to all/ CHAN goes to the
 * group once (and to ourselves once, by unicast) when the group is
 * joined, else as one unicast copy per node that is up.  While a node is
 * idle (neither up nor failed) the write parks and asks for it to be met;
 * it goes when every node is up or failed, or at peer_timeout to those
 * up; a node that failed already is not waited for.  With a reliable
 * node in the config every up node gets its own copy, and the write is
 * answered once every reliable copy completed, with the first error (a
 * node gone meanwhile is skipped); a message some up node would refuse
 * as too big sends no copy at all (EMSGSIZE).
 * After every test each request has had exactly one reply.
 */
#include "fs_harness.h"

#define GAMMA 2

/* all/CHAN opened write-only (made if need be). */
static void open_all(const char *chan, struct fuse_file_info *fi)
{
	assert_int_equal(create(t.fs->all->ino, chan, O_WRONLY, fi), 0);
}

/* Sends to peer idx (-1: to the group) among those kept. */
static int sent_to(int idx)
{
	int i, n = 0;

	for (i = 0; i < t.tp.nsent; i++)
		if (idx < 0 ? !t.tp.sent[i].peer
			    : t.tp.sent[i].peer == &t.peers[idx])
			n++;
	return n;
}

/* The group is joined, as mcast.c would leave it. */
static void joined(void)
{
	t.tp.mcast.state = TP_MCAST_JOINED;
}

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

/* An idle node: parked until it is up; another failing does not send. */
static void test_all_waits_for_idle(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	joined();
	t.peers[ALPHA].up = 0;
	t.peers[GAMMA].up = 0;
	open_all("news", &fi);
	r = write_fi(&fi, "hi");
	assert_parked(r);
	assert_int_equal(t.tp.nsent, 0);
	assert_true(t.tp.nneed >= 2);
	t.peers[GAMMA].last_err = ECONNREFUSED;
	fs_peer_failed(t.fs, &t.peers[GAMMA]);
	assert_parked(r); /* alpha is still being met */
	t.peers[ALPHA].up = 1;
	fs_peer_up(t.fs, &t.peers[ALPHA]);
	assert_int_equal(r->kind, REPLY_WRITE);
	assert_int_equal(sent_to(-1), 1);
	release(&fi);
}

/* At peer_timeout the write goes to those up, and succeeds. */
static void test_all_timeout_sends(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.cfg.peer_timeout_ms = 30;
	t.peers[GAMMA].up = 0;
	open_all("news", &fi);
	r = write_fi(&fi, "hi");
	assert_parked(r);
	wait_reply(r);
	assert_int_equal(r->kind, REPLY_WRITE);
	assert_int_equal(sent_to(ALPHA), 1);
	assert_int_equal(sent_to(BETA), 1);
	assert_int_equal(sent_to(GAMMA), 0);
	release(&fi);
}

/* O_NONBLOCK while a node is being met: EAGAIN, nothing sent. */
static void test_all_nonblock(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.peers[ALPHA].up = 0;
	open_all("news", &fi);
	fi.flags |= O_NONBLOCK;
	r = write_fi(&fi, "hi");
	assert_err(r, EAGAIN);
	assert_int_equal(t.tp.nsent, 0);
	release(&fi);
}

/* Reliable: a copy per node, answered after the last ack, even when the
 * group is joined; the first failure is the write's. */
static void test_all_reliable(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	joined();
	t.tp.reliable = 1;
	open_all("news", &fi);
	r = write_fi(&fi, "hi");
	assert_parked(r);
	assert_int_equal(t.tp.nasync, 3);
	assert_int_equal(sent_to(-1), 0);
	fake_tp_complete(&t.tp, 0, 0);
	fake_tp_complete(&t.tp, 1, -ETIMEDOUT);
	assert_parked(r);
	fake_tp_complete(&t.tp, 2, 0);
	assert_err(r, ETIMEDOUT);
	r = write_fi(&fi, "again");
	fake_tp_complete(&t.tp, 3, 0);
	fake_tp_complete(&t.tp, 4, 0);
	assert_parked(r);
	fake_tp_complete(&t.tp, 5, 0);
	assert_int_equal(r->kind, REPLY_WRITE);
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
	t.peers[GAMMA].addr.max_message = 4;
	r = write_fi(&fi, "hello");
	assert_err(r, EMSGSIZE);
	assert_int_equal(t.tp.nsent, 0);
	release(&fi);
}

/* Reliable: a node that went down before its ack is skipped, as one
 * that was never up, and the write succeeds. */
static void test_all_reliable_down(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.tp.reliable = 1;
	open_all("news", &fi);
	r = write_fi(&fi, "hi");
	fake_tp_complete(&t.tp, 0, 0);
	fake_tp_complete(&t.tp, 1, -ENOTCONN);
	fake_tp_complete(&t.tp, 2, 0);
	assert_int_equal(r->kind, REPLY_WRITE);
	release(&fi);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_all_tree),	   T(test_all_group),
		T(test_all_fallback),	   T(test_all_waits_for_idle),
		T(test_all_timeout_sends), T(test_all_nonblock),
		T(test_all_reliable),	   T(test_all_too_big),
		T(test_all_reliable_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
