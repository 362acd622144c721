/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A fake transport for unit tests of the file system: included by the
 * test after the code under test.  It keeps what was sent instead of
 * sending it, refuses as transport.h says (ENOTCONN for a peer that is
 * down, EMSGSIZE beyond max_message), and holds a reliable send's
 * completion until the test calls fake_tp_complete.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_TP_MAX_SENT 64

/* One message handed to tp_queue or tp_send_async. */
struct fake_sent {
	struct peer *peer;
	char chan[CONFIG_NAME_MAX];
	char *data; /* NUL-terminated copy */
	size_t len;
	int flags;
	void (*done)(void *arg, int status, size_t len);
	void *arg;
};

struct tp {
	struct tp_info info;
	struct peer_counters totals;
	uint64_t max_message;
	int reliable; /* what tp_peer_reliable says */
	int async_rc; /* tp_send_async fails with this when set */
	int nqueue, nflush, nasync;
	struct tp_mcast_info mcast; /* what tp_mcast_get says */
	struct fabric_counters fabric;
	int nmcast; /* messages to the group */
	int nneed;  /* tp_peer_need calls */
	struct fake_sent sent[FAKE_TP_MAX_SENT];
	int nsent;
};

/* A transport that accepts up to max_message bytes a message. */
static void fake_tp_init(struct tp *tp, uint64_t max_message)
{
	memset(tp, 0, sizeof(*tp));
	snprintf(tp->info.device, sizeof(tp->info.device), "fake0");
	tp->info.port = 1;
	tp->info.qpn = 0x1234;
	tp->info.qkey = 0x1b1f5000;
	tp->info.mtu = IBV_MTU_1024;
	tp->max_message = max_message;
}

/* Free the copies of what was sent. */
static void fake_tp_free(struct tp *tp)
{
	int i;

	for (i = 0; i < tp->nsent; i++)
		free(tp->sent[i].data);
	tp->nsent = 0;
}

/* transport.h's checks: the peer must be up, the message not too big. */
static int fake_tp_check(struct tp *tp, struct peer *p, size_t len)
{
	if (!peer_is_up(p))
		return -ENOTCONN;
	return len > tp->max_message ? -EMSGSIZE : 0;
}

/* Keep a copy of one message sent. */
static struct fake_sent *fake_tp_keep(struct tp *tp, struct peer *p,
				      const char *chan, const void *buf,
				      size_t len)
{
	struct fake_sent *s = &tp->sent[tp->nsent++];

	assert_true(tp->nsent <= FAKE_TP_MAX_SENT);
	memset(s, 0, sizeof(*s));
	s->peer = p;
	snprintf(s->chan, sizeof(s->chan), "%s", chan);
	s->data = malloc(len + 1);
	assert_non_null(s->data);
	memcpy(s->data, buf, len);
	s->data[len] = '\0';
	s->len = len;
	return s;
}

/* Finish reliable send i with status, as the peer's ack or a timeout. */
static void fake_tp_complete(struct tp *tp, int i, int status)
{
	struct fake_sent *s = &tp->sent[i];

	assert_non_null(s->done);
	s->done(s->arg, status, s->len);
	s->done = NULL;
}

/* What MOUNT/.status shows of the transport. */
void tp_info_get(struct tp *tp, struct tp_info *out)
{
	*out = tp->info;
}

/* The totals MOUNT/.status shows. */
struct peer_counters *tp_totals(struct tp *tp)
{
	return &tp->totals;
}

/* The fabric's events MOUNT/.status shows. */
struct fabric_counters *tp_fabric(struct tp *tp)
{
	return &tp->fabric;
}

/* Reliable or datagram, as the test set it. */
int tp_peer_reliable(const struct tp *tp, const struct peer *p)
{
	return tp->reliable;
}

/* Datagram mode: the message is "on the QP" once kept. */
int tp_queue(struct tp *tp, struct peer *p, const char *chan, const void *buf,
	     size_t len)
{
	int rc = fake_tp_check(tp, p, len);

	tp->nqueue++;
	if (!rc)
		fake_tp_keep(tp, p, chan, buf, len);
	return rc;
}

/* The doorbell: only counted. */
void tp_flush(struct tp *tp)
{
	tp->nflush++;
}

/* Reliable mode: keep the message and its completion for the test. */
int tp_send_async(struct tp *tp, struct peer *p, const char *chan,
		  const void *buf, size_t len, int flags,
		  void (*done)(void *arg, int status, size_t len), void *arg)
{
	struct fake_sent *s;
	int rc = fake_tp_check(tp, p, len);

	tp->nasync++;
	if (!rc)
		rc = tp->async_rc;
	if (rc)
		return rc;
	s = fake_tp_keep(tp, p, chan, buf, len);
	s->flags = flags;
	s->done = done;
	s->arg = arg;
	return 0;
}

/* The group's state as the test set it. */
void tp_mcast_get(struct tp *tp, struct tp_mcast_info *out)
{
	*out = tp->mcast;
}

/* To the group: kept with no peer, while the test says it is joined. */
int tp_mcast_queue(struct tp *tp, const char *chan, const void *buf, size_t len)
{
	if (tp->mcast.state != TP_MCAST_JOINED)
		return -ENOTCONN;
	if (len > tp->max_message)
		return -EMSGSIZE;
	tp->nmcast++;
	fake_tp_keep(tp, NULL, chan, buf, len);
	return 0;
}

/* Asking for a peer to be met: only counted. */
void tp_peer_need(struct tp *tp, struct peer *p)
{
	tp->nneed++;
}
