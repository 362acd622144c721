/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fake libfuse for unit tests that drive a struct fuse_lowlevel_ops
 * directly: included by the test after the code under test.  A request is
 * a struct fuse_req made by fake_req(); every fuse_reply_* records what it
 * was told, so a test can check the reply, and that there was exactly one
 * (fake_check_replies).  Replies may come from another thread: fake_wait
 * waits for one, bounded.  The executable's definitions take the place of
 * the shared library's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_MAX_REQS  256
#define FAKE_MAX_POLLS 64
#define FAKE_WAIT_MS   5000

enum fake_reply {
	REPLY_NONE_YET,
	REPLY_ERR, /* fuse_reply_err, err 0 included */
	REPLY_BUF,
	REPLY_WRITE,
	REPLY_ENTRY,
	REPLY_CREATE,
	REPLY_OPEN,
	REPLY_ATTR,
	REPLY_POLL,
	REPLY_NONE, /* fuse_reply_none: FORGET */
};

struct fuse_req {
	void *userdata;
	int nreplies;
	enum fake_reply kind;
	int err;
	char *data; /* REPLY_BUF, copied */
	size_t len; /* REPLY_BUF bytes, REPLY_WRITE count */
	struct fuse_entry_param entry;
	struct fuse_file_info fi;
	struct stat attr;
	unsigned revents;
	fuse_interrupt_func_t ifunc;
	void *idata;
	int interrupted;
	struct fuse_ctx ctx; /* its caller: ctx.pid is fake.pid at fake_req */
	int gone;	     /* the kernel dropped it: fuse_reply_buf fails */
	int abandoned;	     /* a test expects no reply to it */
};

struct fuse_pollhandle {
	int notified;
	int destroyed;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fuse_req *reqs[FAKE_MAX_REQS];
	int nreqs;
	struct fuse_pollhandle *polls[FAKE_MAX_POLLS];
	int npolls;
	pid_t pid; /* the process new requests come from (0: none) */
} fake = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

/* A new request for the file system whose userdata is ud. */
static fuse_req_t fake_req(void *ud)
{
	struct fuse_req *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	assert_true(fake.nreqs < FAKE_MAX_REQS);
	r->userdata = ud;
	r->ctx.pid = fake.pid;
	fake.reqs[fake.nreqs++] = r;
	return r;
}

/* A poll handle as the kernel's POLL request would carry. */
static struct fuse_pollhandle *fake_pollhandle(void)
{
	struct fuse_pollhandle *ph = calloc(1, sizeof(*ph));

	assert_non_null(ph);
	assert_true(fake.npolls < FAKE_MAX_POLLS);
	fake.polls[fake.npolls++] = ph;
	return ph;
}

/* Record one reply of kind to req; the caller fills in the rest. */
static void fake_reply(fuse_req_t req, enum fake_reply kind)
{
	req->nreplies++;
	req->kind = kind;
}

/* Wake whoever waits in fake_wait. */
static void fake_replied(void)
{
	pthread_cond_broadcast(&fake.cond);
	pthread_mutex_unlock(&fake.lock);
}

/* The number of replies req got so far, read under the lock. */
static int fake_nreplies(fuse_req_t req)
{
	int n;

	pthread_mutex_lock(&fake.lock);
	n = req->nreplies;
	pthread_mutex_unlock(&fake.lock);
	return n;
}

/* Wait (at most FAKE_WAIT_MS) for req's reply; 0 once it came. */
static int fake_wait(fuse_req_t req)
{
	struct timespec ts;
	int rc = 0;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += FAKE_WAIT_MS / 1000;
	pthread_mutex_lock(&fake.lock);
	while (!req->nreplies && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&fake.cond, &fake.lock, &ts);
	rc = req->nreplies ? 0 : -ETIMEDOUT;
	pthread_mutex_unlock(&fake.lock);
	return rc;
}

/* The kernel interrupts req: mark it and call its callback, as libfuse. */
static void fake_interrupt(fuse_req_t req)
{
	fuse_interrupt_func_t f;
	void *data;

	pthread_mutex_lock(&fake.lock);
	req->interrupted = 1;
	f = req->nreplies ? NULL : req->ifunc;
	data = req->idata;
	pthread_mutex_unlock(&fake.lock);
	if (f)
		f(req, data);
}

/* Every request got exactly one reply (bar the abandoned: none). */
static void fake_check_replies(void)
{
	int i;

	for (i = 0; i < fake.nreqs; i++) {
		int want = fake.reqs[i]->abandoned ? 0 : 1;

		if (fake.reqs[i]->nreplies != want)
			fail_msg("request %d got %d replies, want %d", i,
				 fake.reqs[i]->nreplies, want);
	}
	for (i = 0; i < fake.npolls; i++)
		if (fake.polls[i]->destroyed != 1)
			fail_msg("poll handle %d destroyed %d times", i,
				 fake.polls[i]->destroyed);
}

/* Forget every request and handle: the next test starts clean. */
static void fake_reset(void)
{
	int i;

	for (i = 0; i < fake.nreqs; i++) {
		free(fake.reqs[i]->data);
		free(fake.reqs[i]);
	}
	for (i = 0; i < fake.npolls; i++)
		free(fake.polls[i]);
	fake.nreqs = fake.npolls = 0;
	fake.pid = 0;
}

/* An error, or 0: success without data (RELEASE, UNLINK, ...). */
int fuse_reply_err(fuse_req_t req, int err)
{
	pthread_mutex_lock(&fake.lock);
	fake_reply(req, REPLY_ERR);
	req->err = err;
	fake_replied();
	return 0;
}

/* Data; fails as the kernel would for a request it dropped (gone). */
int fuse_reply_buf(fuse_req_t req, const char *buf, size_t size)
{
	int gone;

	pthread_mutex_lock(&fake.lock);
	fake_reply(req, REPLY_BUF);
	free(req->data);
	req->data = malloc(size + 1);
	if (req->data) {
		if (size)
			memcpy(req->data, buf, size);
		req->data[size] = '\0';
	}
	req->len = size;
	gone = req->gone;
	fake_replied();
	return gone ? -ENOENT : 0;
}

/* A WRITE done: count bytes taken. */
int fuse_reply_write(fuse_req_t req, size_t count)
{
	pthread_mutex_lock(&fake.lock);
	fake_reply(req, REPLY_WRITE);
	req->len = count;
	fake_replied();
	return 0;
}

/* A LOOKUP found e. */
int fuse_reply_entry(fuse_req_t req, const struct fuse_entry_param *e)
{
	pthread_mutex_lock(&fake.lock);
	fake_reply(req, REPLY_ENTRY);
	req->entry = *e;
	fake_replied();
	return 0;
}

/* A CREATE made or opened e as fi. */
int fuse_reply_create(fuse_req_t req, const struct fuse_entry_param *e,
		      const struct fuse_file_info *fi)
{
	pthread_mutex_lock(&fake.lock);
	fake_reply(req, REPLY_CREATE);
	req->entry = *e;
	req->fi = *fi;
	fake_replied();
	return 0;
}

/* An OPEN or OPENDIR as fi. */
int fuse_reply_open(fuse_req_t req, const struct fuse_file_info *fi)
{
	pthread_mutex_lock(&fake.lock);
	fake_reply(req, REPLY_OPEN);
	req->fi = *fi;
	fake_replied();
	return 0;
}

/* GETATTR or SETATTR: attr. */
int fuse_reply_attr(fuse_req_t req, const struct stat *attr,
		    double attr_timeout)
{
	pthread_mutex_lock(&fake.lock);
	fake_reply(req, REPLY_ATTR);
	req->attr = *attr;
	fake_replied();
	return 0;
}

/* POLL: the events ready now. */
int fuse_reply_poll(fuse_req_t req, unsigned revents)
{
	pthread_mutex_lock(&fake.lock);
	fake_reply(req, REPLY_POLL);
	req->revents = revents;
	fake_replied();
	return 0;
}

/* FORGET: the reply that sends nothing. */
void fuse_reply_none(fuse_req_t req)
{
	pthread_mutex_lock(&fake.lock);
	fake_reply(req, REPLY_NONE);
	fake_replied();
}

/* The fs the request is for. */
void *fuse_req_userdata(fuse_req_t req)
{
	return req->userdata;
}

/* Who sent the request. */
const struct fuse_ctx *fuse_req_ctx(fuse_req_t req)
{
	return &req->ctx;
}

/* As libfuse: an already interrupted request calls func at once. */
void fuse_req_interrupt_func(fuse_req_t req, fuse_interrupt_func_t func,
			     void *data)
{
	int now;

	pthread_mutex_lock(&fake.lock);
	req->ifunc = func;
	req->idata = data;
	now = req->interrupted && func;
	pthread_mutex_unlock(&fake.lock);
	if (now)
		func(req, data);
}

/* Whether the kernel interrupted req. */
int fuse_req_interrupted(fuse_req_t req)
{
	int i;

	pthread_mutex_lock(&fake.lock);
	i = req->interrupted;
	pthread_mutex_unlock(&fake.lock);
	return i;
}

/* Tell a poller its file is ready: counted. */
int fuse_lowlevel_notify_poll(struct fuse_pollhandle *ph)
{
	pthread_mutex_lock(&fake.lock);
	ph->notified++;
	fake_replied();
	return 0;
}

/* Counted, not freed, so a test can check it was done once. */
void fuse_pollhandle_destroy(struct fuse_pollhandle *ph)
{
	pthread_mutex_lock(&fake.lock);
	ph->destroyed++;
	pthread_mutex_unlock(&fake.lock);
}

/* Entries as "name\n", so a test can read a listing as text. */
size_t fuse_add_direntry(fuse_req_t req, char *buf, size_t bufsize,
			 const char *name, const struct stat *stbuf, off_t off)
{
	size_t need = strlen(name) + 1;

	if (buf && bufsize >= need) {
		memcpy(buf, name, need - 1);
		buf[need - 1] = '\n';
	}
	return need;
}
