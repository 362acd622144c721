/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the unit tests of the FUSE side share (test_fs*.c), included
 * first by each: fs.c itself, to reach its fs_ops table (fs_chan.c,
 * fs_park.c, fs_write.c and the others come from the library), the fake
 * requests of fake_fuse.c and the fake transport of fake_tp.c; a fresh fs per
 * test with every peer up (setup), the one-reply rule held after it (teardown),
 * and helpers that drive fs_ops and name what came when it is not what a test
 * wants.  Each test states one line of ibfs(8)'s FILE SYSTEM section.  Node
 * beta is this node; alpha and gamma peers.
 */
#ifndef IBFS_FS_HARNESS_H
#define IBFS_FS_HARNESS_H

#include "../../src/fs.c"

#include <stdio.h>

#include "unit.h"

/* cmocka hands every test a state pointer; these tests keep none. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

/* Each test file uses only some of the fakes and helpers. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "fake_fuse.c"
#include "fake_tp.c"

#define THREE_NODES                                                            \
	"[node alpha]\naddr = 10.0.2.15\n"                                     \
	"[node beta]\naddr = 10.0.2.16\n"                                      \
	"[node gamma]\naddr = 10.0.2.17\n"

#define STR_(x)	    #x
#define STR(x)	    STR_(x)
#define ALPHA	    0
#define BETA	    1
#define GAMMA	    2
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

/* ---- MOUNT/all/ (test_fs_all.c, test_fs_write.c) ---- */

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

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

#pragma GCC diagnostic pop

#endif
