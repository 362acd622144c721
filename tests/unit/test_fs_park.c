/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Unit tests for fs_park.c, what waits holding no thread, on the host
 * (fs_harness.h: fs_ops driven with fake requests over a fake transport).
 * The contract: a read on an empty channel parks until a message answers
 * it (a large one at announce), parked readers in order; O_NONBLOCK is
 * EAGAIN, O_RDONLY EOF once a read returned data, O_RDWR always waits;
 * rm answers parked readers with EOF, RELEASE with EINTR, unmount with
 * ENOTCONN, read_timeout with EOF; a signal is EINTR from the reaper and
 * loses no message, nor does a reply the kernel refuses; a poll is always
 * writable, readable while a message is queued, and notified once, every
 * open file polling it.  After every test each request has had exactly
 * one reply.  Writes: test_fs_write.c.
 */
#include "fs_harness.h"

/* ---- parked reads ---- */

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

/* Two open files polling one channel: a message wakes both. */
static void test_poll_two_files(void **state)
{
	struct fuse_pollhandle *ph[2] = {fake_pollhandle(), fake_pollhandle()};
	struct fuse_file_info fi[2];
	int i;

	for (i = 0; i < 2; i++) {
		open_chan("chat", O_RDONLY, &fi[i]);
		fs_ops.poll(req(), 0, &fi[i], ph[i]);
	}
	assert_int_equal(ph[0]->destroyed, 0);
	assert_rc(deliver("chat", "m"), 0);
	for (i = 0; i < 2; i++) {
		assert_int_equal(ph[i]->notified, 1);
		assert_int_equal(ph[i]->destroyed, 1);
		release(&fi[i]);
	}
}

/* The same for a large message, told at announce. */
static void test_poll_two_files_large(void **state)
{
	struct fuse_pollhandle *ph[2] = {fake_pollhandle(), fake_pollhandle()};
	size_t len = FS_ANSWER_NOW_MAX + 1;
	struct fuse_file_info fi[2];
	char *big = calloc(1, len);
	int i;

	for (i = 0; i < 2; i++) {
		open_chan("chat", O_RDONLY, &fi[i]);
		fs_ops.poll(req(), 0, &fi[i], ph[i]);
	}
	assert_rc(deliver_len(ALPHA, "chat", big, len), 0);
	assert_int_equal(ph[0]->notified + ph[1]->notified, 0);
	fs_announce(t.fs);
	for (i = 0; i < 2; i++) {
		assert_int_equal(ph[i]->notified, 1);
		release(&fi[i]);
	}
	free(big);
}

/*
 * A second poll on the same open file replaces its first handle (the
 * kernel's wake-up for either reaches every poller of that file); a
 * released file's handle is dropped, never told.
 */
static void test_poll_same_file_and_release(void **state)
{
	struct fuse_pollhandle *ph[3] = {fake_pollhandle(), fake_pollhandle(),
					 fake_pollhandle()};
	struct fuse_file_info fi[2];

	open_chan("chat", O_RDONLY, &fi[0]);
	open_chan("chat", O_RDONLY, &fi[1]);
	fs_ops.poll(req(), 0, &fi[0], ph[0]);
	fs_ops.poll(req(), 0, &fi[0], ph[1]);
	assert_int_equal(ph[0]->destroyed, 1);
	fs_ops.poll(req(), 0, &fi[1], ph[2]);
	release(&fi[1]);
	assert_int_equal(ph[2]->destroyed, 1);
	assert_rc(deliver("chat", "m"), 0);
	assert_int_equal(ph[0]->notified, 0);
	assert_int_equal(ph[1]->notified, 1);
	assert_int_equal(ph[2]->notified, 0);
	release(&fi[0]);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* parked reads */
		T(test_read_parks),
		T(test_read_parks_large),
		T(test_read_parked_fifo),
		T(test_read_nonblock),
		T(test_read_rdonly_eof),
		T(test_read_rdwr_waits),
		T(test_read_unlink_eof),
		T(test_read_interrupt),
		T(test_read_interrupt_race),
		T(test_read_behind_interrupted),
		T(test_read_interrupted_before),
		T(test_read_reply_refused),
		T(test_read_reply_refused_parked),
		T(test_read_timeout),
		T(test_read_release_parked),
		T(test_read_unmount),
		/* poll */
		T(test_poll),
		T(test_poll_large),
		T(test_poll_unmount),
		T(test_poll_two_files),
		T(test_poll_two_files_large),
		T(test_poll_same_file_and_release),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
