/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for fs_chan.c, channels and their queues, on the host
 * (fs_harness.h: fs_ops driven with fake requests over a fake transport).
 * The contract: a channel queues its node's messages in order, its size
 * the bytes queued (plus, to the process reading it, what it read); a short
 * read takes part of a message and leaves the rest at the head; rm discards the
 * queue; a peer's messages make at most max_channels channels (-ENOSPC), never
 * '.'-names or invalid ones
 * (-EINVAL), and queue at most queue_limit a channel, each message
 * charged its payload plus FS_MSG_OVERHEAD (-EAGAIN beyond, -EMSGSIZE
 * for a message that never fits; nothing queued), so that empty messages
 * cannot fill the heap; memory_limit bounds them all (-ENOBUFS); the
 * mounting user's O_CREATs make max_channels more, counted apart; any
 * number of channels is found by name through the hash.  After every
 * test each request has had exactly one reply.  Writes: test_fs_write.c.
 */
#include "fs_harness.h"

#include <malloc.h>

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

/* GETATTR's st_size of ino through open file fi (FUSE_GETATTR_FH). */
static off_t size_via(fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_req_t r = req();

	fs_ops.getattr(r, ino, fi);
	assert_int_equal(r->kind, REPLY_ATTR);
	return r->attr.st_size;
}

/*
 * tail -f: the process that opened a channel read-only sees, in stat,
 * what its open read plus what is queued, a size that never shrinks as
 * it reads; any other process, and the opener's write-only or read-write
 * opens, see the bytes queued.
 */
static void test_read_size_for_reader(void **state)
{
	struct fuse_file_info fi, wr, rw;
	fuse_ino_t ino;

	assert_rc(deliver("log", "one\n"), 0);
	ino = lookup_ok(t.alpha, "log");
	fake.pid = 42;
	open_chan("log", O_RDONLY, &fi);
	open_chan("log", O_WRONLY, &wr);
	assert_int_equal(size_of(ino), 4);
	assert_data(read_fi(&fi, 4096), "one\n");
	assert_data(read_fi(&fi, 4096), "");
	assert_int_equal(size_of(ino), 4);
	assert_int_equal(size_via(ino, &fi), 4);
	assert_int_equal(size_via(ino, &wr), 0);
	assert_rc(deliver("log", "two\n"), 0);
	assert_int_equal(size_of(ino), 8);
	assert_data(read_fi(&fi, 2), "tw");
	assert_int_equal(size_of(ino), 8);
	fake.pid = 7; /* `[ -s ]` from another shell */
	assert_int_equal(size_of(ino), 2);
	open_chan("log", O_RDWR, &rw);
	assert_data(read_fi(&rw, 4096), "o\n");
	assert_int_equal(size_of(ino), 0);
	fake.pid = 42;
	assert_int_equal(size_of(ino), 6);
	release(&fi);
	assert_int_equal(size_of(ino), 0);
	release(&wr);
	release(&rw);
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

/* A channel holding queue_limit refuses more for now: -EAGAIN, nothing
 * queued; each message is charged its payload and FS_MSG_OVERHEAD; a
 * message larger than queue_limit never fits: -EMSGSIZE (reliable
 * delivery tells its writer, not waits). */
static void test_limit_queue(void **state)
{
	struct fuse_file_info fi;
	char big[300];
	fuse_ino_t ino;

	t.cfg.queue_limit = fs_msg_cost(6) + fs_msg_cost(4);
	assert_rc(deliver("chat", "123456"), 0);
	assert_rc(deliver("chat", "78901"), -EAGAIN);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_rc(deliver("chat", big), -EMSGSIZE); /* over queue_limit */
	ino = lookup_ok(t.alpha, "chat");
	assert_int_equal(size_of(ino), 6);
	assert_rc(deliver("chat", "7890"), 0); /* exactly the limit */
	assert_int_equal(size_of(ino), 10);
	assert_rc(deliver("chat", ""), -EAGAIN); /* empty is not free */
	open_chan("chat", O_RDONLY, &fi);
	assert_data(read_fi(&fi, 100), "123456");
	assert_data(read_fi(&fi, 100), "7890");
	assert_data(read_fi(&fi, 100), "");	 /* nothing else was queued */
	assert_rc(deliver("chat", "abcdef"), 0); /* room again */
	release(&fi);
}

/* The heap in use now (glibc's count of allocated bytes). */
static size_t heap_used(void)
{
	return mallinfo2().uordblks;
}

/*
 * n messages of len bytes into one unread channel: how many were taken;
 * every refusal is -EAGAIN (queue full), and the heap grew by at most
 * what queue_limit allows, not by n messages' worth.
 */
static size_t flood(size_t n, size_t len)
{
	size_t i, taken = 0, before = heap_used(), grown;
	int rc;

	for (i = 0; i < n; i++) {
		rc = deliver_len(ALPHA, "flood", "x", len);
		if (rc == 0)
			taken++;
		else if (rc != -EAGAIN)
			fail_msg("message %zu: rc %d, want -EAGAIN", i, rc);
	}
	grown = heap_used() - before;
	print_message("%zu x %zu bytes: %zu taken, heap +%zu\n", n, len, taken,
		      grown);
	assert_true(taken * fs_msg_cost(len) <= t.cfg.queue_limit ||
		    taken == 1);
	/* the channel and its hash are the few KiB beyond the queue */
	assert_true(grown <= t.cfg.queue_limit + 64 * 1024);
	return taken;
}

/* queue_limit = 1: of 2,000,000 empty messages, only the first, which
 * an empty channel always takes, is queued. */
static void test_limit_empty_messages(void **state)
{
	t.cfg.queue_limit = 1;
	assert_int_equal(flood(2000000, 0), 1);
}

/* At the default queue_limit, 4,000,000 one-byte messages fill it with
 * queue_limit / (1 + FS_MSG_OVERHEAD) of them, heap within the limit. */
static void test_limit_tiny_messages(void **state)
{
	assert_int_equal(t.cfg.queue_limit, 64 << 20);
	assert_int_equal(flood(4000000, 1), t.cfg.queue_limit / fs_msg_cost(1));
}

/* A fresh fs whose memory_limit is limit (the budget is set at open). */
static void reopen(uint64_t limit)
{
	fs_close(t.fs);
	t.cfg.memory_limit = limit;
	assert_int_equal(fs_open(&t.fs, &t.cfg, t.peers), 0);
	fs_set_transport(t.fs, &t.tp);
}

/*
 * memory_limit holds across channels: alpha fills 64 unread channels
 * until -ENOBUFS, holding at most its share (half, alone), and gamma's
 * messages are still taken after it; once alpha is alone again, a read
 * of one of its messages is room for one more.
 */
static void test_limit_memory_shared(void **state)
{
	struct fuse_file_info fi;
	char name[16], msg[1001];
	size_t taken = 0, i;
	fuse_req_t r;
	int rc = 0;

	reopen(1 << 20);
	memset(msg, 'm', 1000);
	msg[1000] = '\0';
	for (i = 0; rc == 0; i++) {
		snprintf(name, sizeof(name), "c%zu", i % 64);
		rc = deliver(name, msg);
		taken += !rc;
	}
	assert_rc(rc, -ENOBUFS);
	assert_true(taken * fs_msg_cost(1000) <= (1 << 20) / 2);
	assert_true(taken * fs_msg_cost(1000) > (1 << 20) / 2 - 2000);
	for (i = 0; i < 100; i++)
		assert_rc(deliver_len(2, "other", msg, 1000), 0);
	assert_rc(deliver("c0", msg), -ENOBUFS);
	/* gamma's queue goes (rm): alpha alone again, and a read of one
	 * of its messages is room for one more */
	r = req();
	fs_ops.unlink(r, fs_node_ino(2, FS_SLOT_DIR), "other");
	assert_err(r, 0);
	open_chan("c0", O_RDONLY, &fi);
	assert_data(read_fi(&fi, 1000), msg);
	release(&fi);
	assert_rc(deliver("c0", msg), 0);
	assert_rc(deliver("c0", msg), -ENOBUFS);
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
 * The mounting user's O_CREATs make max_channels channels of their own
 * (ENOSPC beyond), not counted against the peer's, and those take
 * messages like any channel; an existing one still opens.
 */
static void test_limit_channels_local(void **state)
{
	struct fuse_file_info fi[3];
	int i;

	t.cfg.max_channels = 2;
	open_chan("l0", O_RDONLY, &fi[0]);
	open_chan("l1", O_RDONLY, &fi[1]);
	assert_int_equal(create(t.alpha, "l2", O_RDONLY, &fi[2]), ENOSPC);
	assert_int_equal(lookup(t.alpha, "l2", NULL), ENOENT);
	assert_rc(deliver("l0", "x"), 0);
	assert_rc(deliver("r0", "x"), 0);
	assert_rc(deliver("r1", "x"), 0);
	assert_rc(deliver("r2", "x"), -ENOSPC);
	open_chan("l0", O_RDONLY, &fi[2]); /* not a new one */
	for (i = 0; i < 3; i++)
		release(&fi[i]);
}

/*
 * Channels are found by name however many there are: 5,000 made by a
 * peer, each found again by its next message, none confused, in buckets
 * that grew with them (a chain of about one each: constant time).
 */
static void test_chan_hash_many(void **state)
{
	struct fs_node *node = fs_node_get(t.fs, ALPHA);
	struct fs_chan *c;
	char name[16];
	int i;

	t.cfg.max_channels = 5000;
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		assert_rc(deliver(name, name), 0);
	}
	assert_rc(deliver("c5000", "x"), -ENOSPC);
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		assert_rc(deliver(name, name), 0);
		c = fs_chan_find(t.fs, node, name);
		assert_non_null(c);
		assert_string_equal(c->name, name);
		assert_int_equal(c->queued, 2 * strlen(name));
	}
	assert_int_equal(node->nchans, 5000);
	assert_true(node->nbuckets >= 5000);
	assert_int_equal(size_of(lookup_ok(t.alpha, "c4999")), 10);
	assert_int_equal(lookup(t.alpha, "c5000", NULL), ENOENT);
}

/*
 * A channel's inode slot is reused once it is freed: a peer whose share
 * of memory_limit is full, sending 10,000 one-byte messages to new
 * names (each a channel made, refused and freed), leaves the slot table
 * as it was; the mounting user making and removing channels, one at a
 * time, gets the same number again each time, with a generation that
 * tells the kernel (NFS) it is another file.
 */
static void test_limit_slots_reused(void **state)
{
	struct fuse_file_info fi = {.flags = O_RDONLY | O_CREAT};
	struct fuse_entry_param e;
	char name[16], msg[1001];
	uint64_t generation = 0;
	fuse_ino_t ino, first = 0;
	fuse_req_t r;
	size_t slots;
	int i, rc = 0;

	reopen(1 << 20);
	memset(msg, 'm', 1000);
	msg[1000] = '\0';
	for (i = 0; rc == 0; i++)
		rc = deliver("full", msg);
	for (rc = 0; rc == 0;)
		rc = deliver("full", "x");
	assert_rc(rc, -ENOBUFS);
	slots = t.fs->nslots;
	for (i = 0; i < 10000; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		assert_rc(deliver(name, "x"), -ENOBUFS);
	}
	assert_int_equal(t.fs->nslots, slots);
	ino = lookup_ok(t.alpha, "full");
	for (i = 0; i < 50; i++) {
		snprintf(name, sizeof(name), "l%d", i);
		r = req();
		fs_ops.create(r, t.alpha, name, 0600, &fi);
		assert_int_equal(r->kind, REPLY_CREATE);
		e = r->entry;
		assert_true(e.ino != ino);
		if (!first)
			first = e.ino;
		assert_int_equal(e.ino, first);
		assert_true(e.generation > generation);
		generation = e.generation;
		release(&r->fi);
		r = req();
		fs_ops.unlink(r, t.alpha, name);
		assert_err(r, 0);
		fs_ops.forget(req(), e.ino, 1);
	}
	assert_int_equal(t.fs->nslots, slots);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* queues */
		T(test_read_size_tracks_queue),
		T(test_read_short),
		T(test_read_size_for_reader),
		T(test_read_unlink_discards),
		/* queue limits */
		T(test_limit_queue),
		T(test_limit_empty_messages),
		T(test_limit_tiny_messages),
		T(test_limit_memory_shared),
		T(test_limit_channels_remote),
		T(test_limit_channel_names),
		T(test_limit_channels_local),
		T(test_limit_slots_reused),
		T(test_chan_hash_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
