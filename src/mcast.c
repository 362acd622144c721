/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * MOUNT/all/'s group: joined at start, joined again when it is lost,
 * left at stop.  Every node joins at start, not at its first write to
 * all/: a receiver must be a member before anybody sends.  That is one
 * MCMemberRecord join per node and boot on InfiniBand, one IGMP report on
 * RoCE.
 *
 * The group is lost when the subnet manager may have forgotten it (an SM
 * change, a client reregister, our LID or GID changed: the progress
 * thread says so through the rejoin hook, tp_set_rejoin) or when rdma_cm
 * says so (RDMA_CM_EVENT_MULTICAST_ERROR on the membership's id).  The
 * group's own thread then leaves and joins again: at once, then after
 * MCAST_REJOIN_FIRST_MS doubling to MCAST_REJOIN_MAX_MS, each wait
 * jittered by a quarter; meanwhile all/ sends one unicast copy per peer
 * (mcast=rejoining).  After MCAST_REJOIN_TRIES failed joins it gives up
 * (mcast=fallback, the copies go on) until the next fabric event, but
 * under bootstrap = multicast, whose announces need the group: there it
 * goes on trying every MCAST_REJOIN_MAX_MS.  The thread sleeps in poll
 * with no timeout while the group is joined.
 *
 * When the device goes (tp_heal.c) the group is left, so that its cm id
 * does not hold the device's removal, and all/ sends unicast copies; when
 * it is back the group is joined again before the peers are told.
 * rdma_cm says DEVICE_REMOVAL on the membership's id too: route_join_lost
 * acks it and takes it for no loss, since the transport's own watch says
 * the same to the heal hook, whose mcast_gone leaves the group.  That is
 * safe: once it has queued the event the kernel destroys its cm id behind
 * ours (ucma's close work); ours stays valid until route_leave destroys
 * it, as librdmacm asks on that event, and until then holds librdmacm's
 * verbs context of the device, which the removal does wait for: it goes
 * once tp_heal.c has had librdmacm sync its devices, after mcast_gone.
 * In route_leave, rdma_leave_multicast has nothing left to leave (its
 * failure logged at debug) and rdma_destroy_id waits for no event, each
 * one read having been acked.  Until then only the id's channel fd is
 * used, in the thread's poll; a rejoin meanwhile leaves it the same way
 * (mcast_lost) before it joins anew, and m->id is NULL from each
 * route_leave on.
 *
 * Threads: main (mcast_open, mcast_close), the progress thread (the
 * rejoin hook: it only wakes the group's thread; mcast_gone and
 * mcast_back, the heal hook's, wait until the group's thread has done
 * what they ask) and the group's thread, which alone joins and leaves
 * once it runs.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <rdma/rdma_cma.h>

#include "log.h"
#include "mcast.h"
#include "util.h"

struct mcast {
	struct tp *tp;
	struct route *rt;
	const struct config *cfg;
	const struct sockaddr *group; /* the config's mcast_sa */
	/* main until the thread runs, then the thread's alone */
	struct rdma_cm_id *id; /* the membership; NULL when not joined */
	int tries;	       /* failed joins since the group was lost */
	uint64_t due;	       /* ms: the next join (0: none) */
	int first_ms;	       /* MCAST_REJOIN_FIRST_MS, or the TEST HOOK's */
	/* the thread, woken through efd (the hook, stop) */
	pthread_t thr;
	int started;
	int efd;
	atomic_int stop;
	pthread_mutex_t lock; /* a leaf: the hooks' requests */
	pthread_cond_t done;  /* with lock: a gone or back request served */
	int lost;	      /* under lock: the hook asked for a rejoin */
	int gone;	      /* under lock: the device goes: leave */
	int back;	      /* under lock: the device is back: join */
	char why[128];	      /* under lock: in its words */
	int left;	      /* the thread's: left for a device gone */
};

/* Join and attach; the reason of a failure in why. */
static int mcast_join(struct mcast *m, char *why, size_t whylen,
		      int (*install)(struct tp *, const struct ibv_ah_attr *))
{
	struct ibv_ah_attr attr;
	int rc;

	rc = route_join(m->rt, m->group, &m->id, &attr, why, whylen);
	if (rc)
		return rc;
	rc = install(m->tp, &attr);
	if (rc) {
		snprintf(why, whylen, "attaching the QP: %s", strerror(-rc));
		route_leave(m->rt, m->id, m->group);
		m->id = NULL;
	}
	return rc;
}

/* The wait before join number tries + 1: doubling, bounded, jittered
 * by up to a quarter either way so that a fabric's nodes spread. */
static uint64_t mcast_backoff(const struct mcast *m)
{
	uint32_t r = util_random32((uint32_t)m->tries);
	uint64_t ms = MCAST_REJOIN_MAX_MS;

	if (m->tries <= 20)
		ms = (uint64_t)m->first_ms << (m->tries - 1);
	if (ms > MCAST_REJOIN_MAX_MS)
		ms = MCAST_REJOIN_MAX_MS;
	return ms - ms / 4 + r % (ms / 2 + 1);
}

/* The group is lost (why): leave it, and join again at once. */
static void mcast_lost(struct mcast *m, const char *why)
{
	tp_mcast_remove(m->tp, TP_MCAST_REJOINING, why);
	route_leave(m->rt, m->id, m->group);
	m->id = NULL;
	m->tries = 0;
	m->due = util_now_ms();
}

/* One join, when due: joined, or the next one scheduled, or given up. */
static void mcast_try(struct mcast *m, uint64_t now)
{
	struct fabric_counters *fc = tp_fabric(m->tp);
	char why[128];
	int rc;

	rc = mcast_join(m, why, sizeof(why), tp_mcast_reinstall);
	if (!rc) {
		log_info("multicast: mcast_group %s joined again",
			 m->cfg->mcast_group);
		atomic_fetch_add(&fc->mcast_rejoins, 1);
		atomic_fetch_add(&fc->fabric_recoveries, 1);
		m->due = 0;
		m->tries = 0;
		return;
	}
	m->tries++;
	if (m->tries < MCAST_REJOIN_TRIES) {
		m->due = now + mcast_backoff(m);
		log_debug("multicast: rejoin %d failed: %s", m->tries, why);
		return;
	}
	if (m->tries == MCAST_REJOIN_TRIES) {
		tp_mcast_remove(m->tp, TP_MCAST_FALLBACK, why);
		log_warnx("multicast: mcast_group %s cannot be joined again "
			  "(%s); all/ sends one unicast copy per peer",
			  m->cfg->mcast_group, why);
	}
	/* announces go to the group: no life without it */
	m->due = m->cfg->bootstrap == BOOTSTRAP_TCP ? 0
						    : now + MCAST_REJOIN_MAX_MS;
}

/* The device goes or is back (the heal hook's requests): leave, so that
 * the removal need not wait for our id; join again at once when back. */
static void mcast_heal(struct mcast *m, int gone, int back)
{
	if (gone && m->id) {
		route_leave(m->rt, m->id, m->group);
		m->id = NULL;
		m->left = 1;
	}
	if (gone)
		m->due = 0;
	if (back && m->left) {
		m->left = 0;
		m->tries = 0;
		mcast_try(m, util_now_ms());
	}
	pthread_mutex_lock(&m->lock);
	m->gone = m->gone && !gone;
	m->back = m->back && !back;
	pthread_cond_broadcast(&m->done);
	pthread_mutex_unlock(&m->lock);
}

/* What woke the thread: the hooks (a fabric event, the device going or
 * back) or rdma_cm's news. */
static void mcast_woken(struct mcast *m, int hook, int cm)
{
	char why[128] = "";
	int lost = 0, gone = 0, back = 0;
	uint64_t v;

	if (hook) {
		if (read(m->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			log_warn("multicast: eventfd");
		pthread_mutex_lock(&m->lock);
		lost = m->lost && !m->gone;
		gone = m->gone;
		back = m->back;
		snprintf(why, sizeof(why), "%s", m->why);
		m->lost = 0;
		pthread_mutex_unlock(&m->lock);
	}
	if (gone || back) {
		mcast_heal(m, gone, back);
		return;
	}
	if (m->left)
		return; /* nothing to rejoin until the device is back */
	if (cm && m->id && route_join_lost(m->id, why, sizeof(why))) {
		struct fabric_counters *fc = tp_fabric(m->tp);

		atomic_fetch_add(&fc->fabric_events, 1);
		atomic_store(&fc->last_event, (int64_t)time(NULL));
		log_info("multicast: mcast_group %s is lost (%s): rejoining",
			 m->cfg->mcast_group, why);
		lost = 1;
	}
	if (lost)
		mcast_lost(m, why);
}

/* The group's thread: asleep until the hook, rdma_cm or a join due. */
static void *mcast_thread(void *arg)
{
	struct mcast *m = arg;
	struct pollfd pfd[2];
	uint64_t now;
	int n, wait;

	pthread_setname_np(pthread_self(), "ibfs-group");
	while (!atomic_load(&m->stop)) {
		now = util_now_ms();
		if (m->due && now >= m->due)
			mcast_try(m, now);
		wait = m->due ? (int)(m->due > now ? m->due - now : 0) : -1;
		pfd[0] = (struct pollfd){.fd = m->efd, .events = POLLIN};
		pfd[1] =
			(struct pollfd){.fd = m->id ? route_join_fd(m->id) : -1,
					.events = POLLIN};
		n = poll(pfd, 2, wait);
		if (n < 0 && errno != EINTR) {
			log_warn("multicast: poll");
			break;
		}
		if (n > 0 && !atomic_load(&m->stop))
			mcast_woken(m, pfd[0].revents & POLLIN,
				    pfd[1].revents & POLLIN);
	}
	return NULL;
}

/* The rejoin hook (progress thread, no engine lock): wake the thread. */
static void mcast_on_rejoin(void *arg, const char *why)
{
	struct mcast *m = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&m->lock);
	m->lost = 1;
	snprintf(m->why, sizeof(m->why), "%s", why);
	pthread_mutex_unlock(&m->lock);
	if (write(m->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("multicast: eventfd");
}

/* Start the group's thread and take the rejoin hook. */
static int mcast_start(struct mcast *m)
{
	const char *hook = getenv("IBFS_TEST_REJOIN_MS"); /* TEST HOOK */
	int rc;

	m->first_ms =
		hook && atoi(hook) > 0 ? atoi(hook) : MCAST_REJOIN_FIRST_MS;
	m->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (m->efd < 0)
		return -errno;
	rc = -pthread_create(&m->thr, NULL, mcast_thread, m);
	if (rc)
		return rc;
	m->started = 1;
	tp_set_rejoin(m->tp, mcast_on_rejoin, m);
	return 0;
}

/* Drop the hook, then stop the thread (if it was started). */
static void mcast_stop(struct mcast *m)
{
	uint64_t one = 1;

	tp_set_rejoin(m->tp, NULL, NULL);
	atomic_store(&m->stop, 1);
	if (!m->started)
		return;
	if (write(m->efd, &one, sizeof(one)) < 0)
		log_warn("multicast: eventfd");
	pthread_join(m->thr, NULL);
	m->started = 0;
	pthread_mutex_lock(&m->lock);
	pthread_cond_broadcast(&m->done); /* a heal request waits no more */
	pthread_mutex_unlock(&m->lock);
}

/* The first join, per multicast = auto|yes; 0 when we may run on. */
static int mcast_first(struct mcast *m, const struct config *cfg)
{
	char why[128];
	int rc = mcast_join(m, why, sizeof(why), tp_mcast_install);

	if (!rc) {
		log_info("multicast: joined mcast_group %s", cfg->mcast_group);
		return 0;
	}
	/* bootstrap = multicast announces on the group: no fallback */
	if (cfg->multicast == MCAST_YES || cfg->bootstrap != BOOTSTRAP_TCP) {
		log_warnx("%s, but mcast_group %s is not joined: %s",
			  cfg->multicast == MCAST_YES ? "multicast = yes"
						      : "bootstrap = multicast",
			  cfg->mcast_group, why);
		return rc;
	}
	tp_mcast_remove(m->tp, TP_MCAST_FALLBACK, why);
	log_warnx("multicast: mcast_group %s cannot be joined (%s); all/ "
		  "sends one unicast copy per peer",
		  cfg->mcast_group, why);
	return 0;
}

/* Join per multicast = auto|yes|no (see mcast.h). */
int mcast_open(struct mcast **out, const struct config *cfg, struct tp *tp,
	       struct route *rt)
{
	struct mcast *m = calloc(1, sizeof(*m));
	int rc;

	if (!m)
		return -ENOMEM;
	m->tp = tp;
	m->rt = rt;
	m->cfg = cfg;
	m->group = (const struct sockaddr *)&cfg->mcast_sa;
	m->efd = -1;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->done, NULL);
	*out = m;
	if (cfg->multicast == MCAST_NO) {
		tp_mcast_remove(tp, TP_MCAST_OFF, "multicast = no");
		return 0;
	}
	rc = mcast_first(m, cfg);
	if (!rc)
		rc = mcast_start(m);
	if (rc) {
		mcast_close(m);
		*out = NULL;
	}
	return rc;
}

/* The thread stops first (it alone joins once it runs); then the QP
 * leaves before the membership does, so no datagram of the group arrives
 * for a QP the device no longer knows there. */
void mcast_close(struct mcast *m)
{
	if (!m)
		return;
	mcast_stop(m);
	if (m->id) {
		tp_mcast_remove(m->tp, TP_MCAST_OFF, "stopped");
		route_leave(m->rt, m->id, m->group);
	}
	if (m->efd >= 0)
		close(m->efd);
	pthread_cond_destroy(&m->done);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

/* Ask the group's thread (gone or back) and wait until it has done it. */
static void mcast_ask(struct mcast *m, int *flag)
{
	uint64_t one = 1;

	pthread_mutex_lock(&m->lock);
	*flag = 1;
	pthread_mutex_unlock(&m->lock);
	if (write(m->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("multicast: eventfd");
	pthread_mutex_lock(&m->lock);
	while (*flag && !atomic_load(&m->stop))
		pthread_cond_wait(&m->done, &m->lock);
	pthread_mutex_unlock(&m->lock);
}

/* The heal hook, the device going (progress thread, no engine lock): the
 * group's AH goes with the device's others, all/ sends unicast copies,
 * and the membership is left before the device closes. */
void mcast_gone(struct mcast *m, const char *why)
{
	if (!m || !m->started)
		return;
	tp_mcast_remove(m->tp, TP_MCAST_FALLBACK, why);
	mcast_ask(m, &m->gone);
}

/* The heal hook, the device back: joined again (or its retries armed)
 * before the peers are told our new QPN. */
void mcast_back(struct mcast *m)
{
	if (!m || !m->started)
		return;
	mcast_ask(m, &m->back);
}
