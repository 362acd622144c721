/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for fs_meet.c, writes to a peer not met yet, on the host
 * (fs_harness.h: fs_ops driven with fake requests over a fake transport).
 * The contract: a write to a peer that is not up parks, sending nothing
 * and answering nothing, and MOUNT/NODE/.status counts it in
 * meeting_writes; when that peer comes up (fs_peer_up) the parked writes
 * go, in the order they were written, each answered as a write to an up
 * peer is (at once in datagram mode, by its ack when reliable); another
 * peer's coming up sends none of them.  One not sent within peer_timeout
 * fails with ENOTCONN, or EHOSTUNREACH when the peer's address would not
 * resolve; a signal ends the wait with EINTR (from the reaper), nothing
 * sent then or later; O_NONBLOCK is EAGAIN at once; unmount answers
 * ENOTCONN.  After
 * every test each request has had exactly one reply.
 */
#include "fs_harness.h"

/* The value of key in alpha's .status, as a number. */
static long alpha_status(const char *key)
{
	struct fuse_file_info fi;
	char want[64], *s, *at;
	long v;

	assert_int_equal(open_ino(t.alpha_status, O_RDONLY, &fi), 0);
	s = slurp(&fi, 0);
	snprintf(want, sizeof(want), "\n%s=", key);
	at = strstr(s, want);
	assert_non_null(at);
	v = strtol(at + strlen(want), NULL, 10);
	release(&fi);
	return v;
}

/* Alpha comes up, as the bootstrap would make it. */
static void alpha_up(void)
{
	t.peers[ALPHA].up = 1;
	fs_peer_up(t.fs, &t.peers[ALPHA]);
}

/* Parked, nothing sent; alpha up sends it and answers the write. */
static void test_meet_parks_then_sends(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.peers[ALPHA].up = 0;
	open_chan("chat", O_WRONLY, &fi);
	r = write_fi(&fi, "hello");
	assert_parked(r);
	assert_int_equal(t.tp.nsent, 0);
	assert_int_equal(alpha_status("meeting_writes"), 1);
	alpha_up();
	assert_int_equal(r->kind, REPLY_WRITE);
	assert_int_equal(t.tp.nsent, 1);
	assert_string_equal(t.tp.sent[0].chan, "chat");
	assert_string_equal(t.tp.sent[0].data, "hello");
	assert_int_equal(alpha_status("meeting_writes"), 0);
	release(&fi);
}

/* Several writers: sent in the order written; gamma's up sends none. */
static void test_meet_order_and_peer(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r[3];
	int i;

	t.peers[ALPHA].up = 0;
	open_chan("chat", O_WRONLY, &fi);
	r[0] = write_fi(&fi, "one");
	r[1] = write_fi(&fi, "two");
	r[2] = write_fi(&fi, "three");
	fs_peer_up(t.fs, &t.peers[2]); /* gamma */
	for (i = 0; i < 3; i++)
		assert_parked(r[i]);
	assert_int_equal(alpha_status("meeting_writes"), 3);
	alpha_up();
	assert_int_equal(t.tp.nsent, 3);
	assert_string_equal(t.tp.sent[0].data, "one");
	assert_string_equal(t.tp.sent[1].data, "two");
	assert_string_equal(t.tp.sent[2].data, "three");
	for (i = 0; i < 3; i++)
		assert_int_equal(r[i]->kind, REPLY_WRITE);
	release(&fi);
}

/* Not met within peer_timeout: ENOTCONN from the reaper. */
static void test_meet_timeout(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.cfg.peer_timeout_ms = 30;
	t.peers[ALPHA].up = 0;
	peer_set_error(&t.peers[ALPHA], ECONNREFUSED, "connect: refused");
	open_chan("chat", O_WRONLY, &fi);
	r = write_fi(&fi, "x");
	assert_parked(r);
	wait_reply(r);
	assert_err(r, ENOTCONN);
	assert_int_equal(t.tp.nsent, 0);
	assert_int_equal(alpha_status("meeting_writes"), 0);
	release(&fi);
}

/* A peer whose name or route does not resolve: EHOSTUNREACH. */
static void test_meet_unresolvable(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.cfg.peer_timeout_ms = 30;
	t.peers[ALPHA].up = 0;
	peer_set_error(&t.peers[ALPHA], EHOSTUNREACH, "route: no route");
	open_chan("chat", O_WRONLY, &fi);
	r = write_fi(&fi, "x");
	wait_reply(r);
	assert_err(r, EHOSTUNREACH);
	release(&fi);
}

/* A signal: EINTR, and the peer coming up later sends nothing. */
static void test_meet_interrupt(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.peers[ALPHA].up = 0;
	open_chan("chat", O_WRONLY, &fi);
	r = write_fi(&fi, "x");
	assert_parked(r);
	fake_interrupt(r);
	wait_reply(r);
	assert_err(r, EINTR);
	assert_int_equal(alpha_status("meeting_writes"), 0);
	alpha_up();
	assert_int_equal(t.tp.nsent, 0);
	release(&fi);
}

/* O_NONBLOCK: EAGAIN at once, nothing parked. */
static void test_meet_nonblock(void **state)
{
	struct fuse_file_info fi;

	t.peers[ALPHA].up = 0;
	open_chan("chat", O_WRONLY | O_NONBLOCK, &fi);
	assert_err(write_fi(&fi, "x"), EAGAIN);
	assert_int_equal(alpha_status("meeting_writes"), 0);
	release(&fi);
}

/* Reliable: parked, then sent with a completion that answers it. */
static void test_meet_reliable(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.tp.reliable = 1;
	t.peers[ALPHA].up = 0;
	open_chan("chat", O_WRONLY, &fi);
	r = write_fi(&fi, "sure");
	assert_parked(r);
	alpha_up();
	assert_int_equal(t.tp.nasync, 2); /* refused once, then sent */
	assert_parked(r);
	fake_tp_complete(&t.tp, 0, 0);
	assert_int_equal(r->kind, REPLY_WRITE);
	release(&fi);
}

/* Unmount answers what still waits with ENOTCONN. */
static void test_meet_unmount(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.peers[ALPHA].up = 0;
	open_chan("chat", O_WRONLY, &fi);
	r = write_fi(&fi, "x");
	assert_parked(r);
	release(&fi);
	fs_unmount(t.fs);
	assert_err(r, ENOTCONN);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* Every test on a fresh tree. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_meet_parks_then_sends), T(test_meet_order_and_peer),
		T(test_meet_timeout),	       T(test_meet_unresolvable),
		T(test_meet_interrupt),	       T(test_meet_nonblock),
		T(test_meet_reliable),	       T(test_meet_unmount),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
