/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for fs_chan.c, channels and their queues, on the host
 * (fs_harness.h: fs_ops driven with fake requests over a fake transport).
 * The contract: a channel queues its node's messages in order, its size
 * the bytes queued; a short read takes part of a message and leaves the
 * rest at the head; rm discards the queue; a peer's messages make at most
 * max_channels channels (-ENOSPC beyond), never '.'-names or invalid
 * ones (-EINVAL), and queue at most queue_limit bytes a channel (-EAGAIN
 * beyond, -EMSGSIZE for a message that never fits; nothing queued),
 * while the mounting user's O_CREATs are not limited; in datagram mode a
 * write is one tp_queue to that peer and channel, and the transport's
 * refusal is the write's errno.  After every test each request has had
 * exactly one reply.
 */
#include "fs_harness.h"

/* ---- queues ---- */

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

/* ---- queue limits ---- */

/* A channel holding queue_limit bytes refuses more for now: -EAGAIN,
 * nothing queued; a message larger than queue_limit never fits:
 * -EMSGSIZE (reliable delivery tells its writer, not waits). */
static void test_limit_queue(void **state)
{
	struct fuse_file_info fi;
	fuse_ino_t ino;

	t.cfg.queue_limit = 10;
	assert_rc(deliver("chat", "123456"), 0);
	assert_rc(deliver("chat", "78901"), -EAGAIN);
	assert_rc(deliver("chat", "12345678901"), -EMSGSIZE);
	ino = lookup_ok(t.alpha, "chat");
	assert_int_equal(size_of(ino), 6);
	assert_rc(deliver("chat", "7890"), 0); /* exactly the limit */
	assert_int_equal(size_of(ino), 10);
	assert_rc(deliver("chat", "x"), -EAGAIN);
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

/* Names a peer may not make: '.'-names and invalid ones (-EINVAL). */
static void test_limit_channel_names(void **state)
{
	char name[80];

	memset(name, 'n', 64);
	name[64] = '\0';
	assert_rc(deliver(".status", "x"), -EINVAL);
	assert_rc(deliver(".x", "x"), -EINVAL);
	assert_rc(deliver(name, "x"), -EINVAL);
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

/* ---- datagram writes ---- */

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
	assert_int_equal(t.tp.nsent, 0);
	fs_set_transport(t.fs, NULL); /* not opened yet */
	assert_err(write_fi(&fi, "x"), ENOTCONN);
	assert_int_equal(t.tp.nqueue, 1);
	release(&fi);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* queues */
		T(test_read_size_tracks_queue),
		T(test_read_short),
		T(test_read_unlink_discards),
		/* queue limits */
		T(test_limit_queue),
		T(test_limit_channels_remote),
		T(test_limit_channel_names),
		T(test_limit_channels_local),
		/* datagram writes */
		T(test_write_datagram),
		T(test_write_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
