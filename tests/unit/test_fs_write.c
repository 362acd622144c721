/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for fs_write.c, a write from its request to its one reply,
 * on the host (fs_harness.h: fs_ops driven with fake requests over a
 * fake transport).  The contract, state by state:
 *   - sent at once: in datagram mode a write is one tp_queue to that
 *     peer and channel, answered before the doorbell, and the
 *     transport's refusal is the write's errno;
 *   - MEETING: a write to a peer that is not up parks, sending nothing
 *     and answering nothing, and MOUNT/NODE/.status counts it in
 *     meeting_writes; when that peer comes up (fs_peer_up) the parked
 *     writes go, in the order they were written, each answered as a
 *     write to an up peer is; another peer's coming up or failing sends
 *     none of them.  One not sent within peer_timeout fails with
 *     ENOTCONN, or EHOSTUNREACH when the peer's address would not
 *     resolve; a signal ends the wait with EINTR (from the reaper),
 *     nothing sent then or later; O_NONBLOCK is EAGAIN at once; unmount
 *     answers ENOTCONN;
 *   - ACK: a reliable write is answered by its completion, with its
 *     status (a peer lost before the ack: ENOTCONN), counted in
 *     waiting_writes meanwhile; EAGAIN at once under O_NONBLOCK; nothing
 *     after unmount;
 *   - all/: a parent write MEETING while a node is idle (neither up nor
 *     failed), going when every node is up or failed, or at peer_timeout
 *     to those up; with a reliable node, one child per node up, the
 *     parent answered after the last, with the first error, a node gone
 *     meanwhile skipped.
 * After every test each request has had exactly one reply (teardown).
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

/* ---- sent at once ---- */

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

/* ---- MEETING ---- */

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

/* A peer failing leaves a write to it MEETING: only peer_timeout or the
 * peer coming up ends it; then it is sent once, answered once. */
static void test_meet_peer_failed(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.peers[ALPHA].up = 0;
	open_chan("chat", O_WRONLY, &fi);
	r = write_fi(&fi, "x");
	peer_set_error(&t.peers[ALPHA], ECONNREFUSED, "connect: refused");
	fs_peer_failed(t.fs, &t.peers[ALPHA]);
	assert_parked(r);
	assert_int_equal(alpha_status("meeting_writes"), 1);
	alpha_up();
	assert_int_equal(r->kind, REPLY_WRITE);
	assert_int_equal(t.tp.nsent, 1);
	release(&fi);
}

/* Reliable, MEETING then ACK, and the ack fails: its status is the
 * write's one reply. */
static void test_meet_reliable_fails(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.tp.reliable = 1;
	t.peers[ALPHA].up = 0;
	open_chan("chat", O_WRONLY, &fi);
	r = write_fi(&fi, "sure");
	alpha_up();
	assert_int_equal(alpha_status("meeting_writes"), 0);
	assert_int_equal(alpha_status("waiting_writes"), 1);
	fake_tp_complete(&t.tp, 0, -ETIMEDOUT);
	assert_err(r, ETIMEDOUT);
	assert_int_equal(alpha_status("waiting_writes"), 0);
	release(&fi);
}

/* ---- ACK ---- */

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
	/* a peer not met yet: no waiting either; the meeting goes on */
	t.peers[ALPHA].up = 0;
	assert_err(write_fi(&fi, "c"), EAGAIN);
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

/* The peer lost before its ack (down, restarted): ENOTCONN, once. */
static void test_write_reliable_peer_lost(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.tp.reliable = 1;
	open_chan("chat", O_WRONLY, &fi);
	r = write_fi(&fi, "a");
	assert_parked(r);
	assert_int_equal(alpha_status("waiting_writes"), 1);
	t.peers[ALPHA].up = 0;
	fake_tp_complete(&t.tp, 0, -ENOTCONN);
	assert_err(r, ENOTCONN);
	assert_int_equal(alpha_status("waiting_writes"), 0);
	release(&fi);
}

/* ---- all/: a parent and its children ---- */

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

/* A signal while all/ waits for a node: EINTR, and nothing is sent
 * when the node comes up later. */
static void test_all_interrupt(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.peers[ALPHA].up = 0;
	open_all("news", &fi);
	r = write_fi(&fi, "hi");
	assert_parked(r);
	fake_interrupt(r);
	wait_reply(r);
	assert_err(r, EINTR);
	alpha_up();
	assert_int_equal(t.tp.nsent, 0);
	release(&fi);
}

/* Reliable, a node down from the start: no child for it; the parent is
 * answered by the last of the others. */
static void test_all_reliable_skips_down(void **state)
{
	struct fuse_file_info fi;
	fuse_req_t r;

	t.tp.reliable = 1;
	t.peers[GAMMA].up = 0;
	t.peers[GAMMA].last_err = ECONNREFUSED; /* failed: not waited for */
	open_all("news", &fi);
	r = write_fi(&fi, "hi");
	assert_int_equal(t.tp.nsent, 2);
	assert_int_equal(sent_to(GAMMA), 0);
	fake_tp_complete(&t.tp, 1, 0);
	assert_parked(r);
	fake_tp_complete(&t.tp, 0, 0);
	assert_int_equal(r->kind, REPLY_WRITE);
	assert_int_equal(r->len, 2);
	release(&fi);
}

/* Every test on a fresh tree. */
int main(void)
{
	const struct CMUnitTest tests[] = {
		/* sent at once */
		T(test_write_datagram),
		T(test_write_errors),
		/* MEETING */
		T(test_meet_parks_then_sends),
		T(test_meet_order_and_peer),
		T(test_meet_timeout),
		T(test_meet_unresolvable),
		T(test_meet_interrupt),
		T(test_meet_nonblock),
		T(test_meet_reliable),
		T(test_meet_unmount),
		T(test_meet_peer_failed),
		T(test_meet_reliable_fails),
		/* ACK */
		T(test_write_reliable),
		T(test_write_reliable_nonblock),
		T(test_write_reliable_after_unmount),
		T(test_write_reliable_peer_lost),
		/* all/ */
		T(test_all_waits_for_idle),
		T(test_all_timeout_sends),
		T(test_all_nonblock),
		T(test_all_reliable),
		T(test_all_reliable_down),
		T(test_all_interrupt),
		T(test_all_reliable_skips_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
