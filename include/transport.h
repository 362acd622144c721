/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The verbs engine: one UD QP serves every peer.  Opens the device, takes
 * the QP RESET -> INIT -> RTR -> RTS, keeps receives posted with GRH slack,
 * fragments sends into registered memory and reaps every send completion.
 * A progress thread waits on the completion channel, reassembles arriving
 * datagrams (wire.c) and hands whole messages to the deliver callback.
 * Its parts and their one lock order: src/tp_int.h.
 */
#ifndef IBFS_TRANSPORT_H
#define IBFS_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "config.h"
#include "peer.h"

struct tp;

/*
 * The upcalls.  The engine calls each with none of its locks held, in
 * both delivery modes, so a callback may call back into the engine:
 * tp_send, tp_queue, tp_flush, tp_send_async, tp_peer_reliable, tp_info,
 * tp_info_get and tp_totals (never tp_close).  None may block for long: each
 * holds up the thread that called it.  tp_open copies them; read-only after.
 */
struct tp_ops {
	/*
	 * A whole message from p arrived on channel chan.  Progress thread
	 * only.  Return 0 when taken (the callee owns data, malloc'ed), or
	 * a -errno refusal, one per cause (fs.h's fs_deliver): -EAGAIN (or
	 * -ENOMEM, -ENOBUFS) when there is no room now (a full queue,
	 * memory_limit), or a refusal for good: -ENOSPC (the channel cap),
	 * -EMSGSIZE (larger than the queue ever takes), -EINVAL (a name
	 * refused).  In datagram mode the engine counts it as that cause's
	 * drop (rel_drop_of, reliable.h) and frees data; with delivery =
	 * reliable the refusal goes back to the sender (reliable.h,
	 * "Refusals"): for good, its writer gets that errno; no room now, its
	 * sender keeps the message and sends it again later (the writer waits),
	 * and other channels go on meanwhile.
	 */
	int (*deliver)(void *arg, struct peer *p, const char *chan, void *data,
		       size_t len);
	/*
	 * Progress thread only, after a batch was delivered and its acks
	 * went: the callee may wake the readers deliver did not, so that a
	 * reader busy with a large message does not hold up the ack its
	 * writer waits for.
	 */
	void (*announce)(void *arg);
	/*
	 * p came up (tp_peer_up installed its address): the callee may send
	 * what waited for it.  Bootstrap thread (the announce thread with
	 * bootstrap = multicast); may be NULL.
	 */
	void (*peer_up)(void *arg, struct peer *p);
	/*
	 * Meeting p failed, or its session did (tp_peer_failed): whatever
	 * waits for p to be tried may go on.  Bootstrap thread (or the
	 * announce thread); may be NULL.
	 */
	void (*peer_failed)(void *arg, struct peer *p);
};

/* What this node is: shown in MOUNT/.status and sent in the hello.  Set
 * by tp_open; the progress thread rewrites part of it (below), so another
 * thread reads those through tp_info_get. */
struct tp_info {
	char device[64];
	int port;
	int gid_index;
	int link_layer; /* IBV_LINK_LAYER_INFINIBAND / _ETHERNET */
	/* lid and gid rewritten by the progress thread when the port says
	 * they changed (tp_event.c); every field from here on when the
	 * device comes back (tp_heal.c: a new QPN and boot id, the port's
	 * LID, GID and MTU as they are then) */
	uint16_t lid;
	union ibv_gid gid;
	uint32_t qpn;
	uint32_t qkey;
	enum ibv_mtu mtu; /* active path MTU of the port */
	size_t mtu_bytes; /* datagram payload: what one send may carry */
	uint32_t recv_depth;
	uint32_t send_depth;
	uint32_t boot; /* random per start, never 0: the hello's boot id */
	uint16_t pkey; /* the QP's P_Key (cfg pkey, or index 0's) */
	uint16_t pkey_index; /* its index in the port's P_Key table */
};

/*
 * Open device, PD, MRs, CQs and the QP, post receives and start the
 * progress thread.  peers (cfg->nnodes of them) must outlive the tp.
 * -ENODEV when no usable device exists (message logged), other -errno.
 */
int tp_open(struct tp **out, const struct config *cfg, struct peer *peers,
	    const struct tp_ops *ops, void *arg);

/* Stop the progress thread and release everything, in reverse order. */
void tp_close(struct tp *tp);

/* The fields fixed at open (device, port, link_layer): any thread, no
 * lock.  The rest only on the progress thread; others use tp_info_get. */
const struct tp_info *tp_info(const struct tp *tp);
/* A copy of the whole, as of its last change: one device's QPN with its
 * boot id, LID and GID, never half of a change.  Any thread. */
void tp_info_get(struct tp *tp, struct tp_info *out);

/*
 * The device context is the progress thread's (tp_heal.c closes it when
 * the device goes, and opens a new one when it is back).  Another thread
 * that uses it (route.c makes AHs on the bootstrap or announce thread)
 * notes tp_dev_gen when its work begins, and uses tp_context and tp_pd
 * only between tp_dev_hold and tp_dev_release: the hold fails with
 * -ENETDOWN when the device is gone or was closed since gen, and while it
 * is held the device is not closed.  An AH made under it is installed
 * after the release with tp_peer_up_gen(gen), which refuses it when the
 * device went meanwhile.  Hold it briefly, with no lock of the engine
 * held, and call nothing of the engine under it.
 */
uint64_t tp_dev_gen(const struct tp *tp);
int tp_dev_hold(struct tp *tp, uint64_t gen);
void tp_dev_release(struct tp *tp);
struct ibv_context *tp_context(const struct tp *tp);
struct ibv_pd *tp_pd(const struct tp *tp);
/* Totals over all peers, plus drops that match no peer. */
struct peer_counters *tp_totals(struct tp *tp);
/* The fabric's events, node-wide (atomics: read without a lock). */
struct fabric_counters *tp_fabric(struct tp *tp);

/*
 * Send one message of len bytes to p on channel chan: tp_queue, then
 * tp_flush.  Returns 0 once every datagram is handed to the QP (UD gives
 * no delivery guarantee), -ENOTCONN when p is not up (and asks for it to
 * be met: tp_peer_need), -EMSGSIZE beyond
 * max_message, -EINVAL for a bad channel name, -EIO on a verbs failure.
 * Safe from many threads at once.
 */
int tp_send(struct tp *tp, struct peer *p, const char *chan, const void *buf,
	    size_t len);

/*
 * tp_send's first half: copy the message into registered send slots as
 * work requests, with tp_send's checks and errors, without ringing the
 * doorbell (soft-RoCE does its whole send inside that system call).  A
 * caller answers its writer, then calls tp_flush; datagrams queued by
 * others in between go with the same doorbell.  A message larger than
 * the free slots rings it on the way.
 */
int tp_queue(struct tp *tp, struct peer *p, const char *chan, const void *buf,
	     size_t len);

/*
 * Post every datagram queued so far.  When another thread is posting,
 * return at once: that thread posts these after its own.  Never blocks
 * on the QP.
 */
void tp_flush(struct tp *tp);

/*
 * Send with a completion: done(arg, status, len) is called exactly once
 * when 0 is returned — status 0 once the whole message is acknowledged
 * by the peer's daemon (delivery = reliable: it sits in its channel
 * queue), -ETIMEDOUT when p stayed silent for peer_timeout, -ENOTCONN
 * when p went down or restarted first.  The message is copied, so buf may
 * be reused at once.  In datagram mode it is tp_send and done is called
 * before returning.  A negative return means done is never called:
 * tp_send's errors, or -EAGAIN with TP_SEND_NONBLOCK while p's receiver
 * grants no credit.  done runs with no tp lock held and must not block;
 * it may call back as deliver may.  Its thread: the caller's (datagram
 * mode, or a message that failed at once), the progress thread (acks and
 * timeouts), the bootstrap thread (p went down or restarted:
 * tp_peer_up, tp_peer_down) or the one in tp_close (-ENOTCONN).
 */
#define TP_SEND_NONBLOCK 0x1
int tp_send_async(struct tp *tp, struct peer *p, const char *chan,
		  const void *buf, size_t len, int flags,
		  void (*done)(void *arg, int status, size_t len), void *arg);

/* Whether messages to p go with delivery = reliable. */
int tp_peer_reliable(const struct tp *tp, const struct peer *p);

/*
 * p is reachable at addr through ah (made on tp_pd): install it, then
 * call ops->peer_up.  An old AH is destroyed only after sends that use it
 * have completed.  With ah NULL, the AH p had when it went down is used
 * again, if it was made for the same QPN, LID and GID (the route cache);
 * -ESTALE when there is none such (resolve, then call again), else 0.
 * -ENETDOWN when ah was made on a device that has gone since: the engine
 * takes it (destroyed while its context is open, else left alone).
 * tp_peer_up_gen: ah was made in the device's generation gen (tp_dev_gen
 * before tp_dev_hold), so that one closed and opened again meanwhile is
 * told from the same; tp_peer_up takes the generation now.
 */
int tp_peer_up(struct tp *tp, struct peer *p, const struct peer_addr *addr,
	       struct ibv_ah *ah, enum config_route route);
int tp_peer_up_gen(struct tp *tp, struct peer *p, const struct peer_addr *addr,
		   struct ibv_ah *ah, enum config_route route, uint64_t gen);

/*
 * Who meets peers on demand (the bootstrap): need(arg, p) is called,
 * with no lock of the engine held but this hook's own, whenever a send
 * finds p not up, and must not block.  NULL need: nobody (bootstrap_close
 * sets that before it goes).
 */
void tp_set_need(struct tp *tp, void (*need)(void *arg, struct peer *p),
		 void *arg);

/*
 * Who heals the layers above after a device reset (the fabric): gone(arg)
 * once the device went away, before the engine closes it (what holds it,
 * as the group's rdma_cm id, must go); back(arg) once it is open again
 * with a new QP (the group rejoined, every peer met before told).  Both
 * on the progress thread, with no lock of the engine held but this
 * hook's own; back may block (a join).  NULL ops: nobody.
 */
struct tp_heal_ops {
	void (*gone)(void *arg);
	void (*back)(void *arg);
};
void tp_set_heal(struct tp *tp, const struct tp_heal_ops *ops, void *arg);

/* Ask for p to be met, as a send to it would (udchat waits this way). */
void tp_peer_need(struct tp *tp, struct peer *p);

/*
 * The index of a peer other than p that is up at addr's QPN and GID (and
 * LID), or -1: a hello that names them is refused, since no two nodes
 * share a QP (bootstrap, announce thread).
 */
int tp_addr_holder(struct tp *tp, const struct peer *p,
		   const struct peer_addr *addr);

/*
 * Whether p's AH was flushed by a fabric event (the subnet manager moved
 * the paths: tp_event.c) while it was installed: whoever met it resolves
 * its path again and calls tp_peer_up with what it had installed.  The
 * bootstrap (or the announce thread) asks when p is in need.
 */
int tp_peer_flushed(struct tp *tp, struct peer *p);

/*
 * p announced addr in a bootstrap hello but is not up yet: accept its
 * datagrams already (the first half of the handshake), so that whatever
 * it sends once it sees us up is not dropped as from an unknown source.
 */
void tp_peer_expect(struct tp *tp, struct peer *p,
		    const struct peer_addr *addr);

/*
 * p's session dropped: refuse sends.  Datagrams it sent before are still
 * accepted for reassembly_timeout (they may wait in our CQ); its partial
 * messages expire, or are forgotten once a new address is installed.  Its
 * AH stays for tp_peer_up to use again.
 */
void tp_peer_down(struct tp *tp, struct peer *p);

/*
 * p's session ended for want of traffic (idle_timeout), after
 * tp_peer_down (bootstrap thread): its reliable streams (15 KiB) are let
 * go once quiet, on the progress thread, and made again at the next
 * meeting, going on where they stood (tp_rel.c).
 */
void tp_peer_idle(struct tp *tp, struct peer *p);

/*
 * p could not be met, or its session failed (bootstrap thread): call
 * ops->peer_failed, so that what waits for p to be tried learns it.
 */
void tp_peer_failed(struct tp *tp, struct peer *p);

/* ---- the multicast group of MOUNT/all/ (tp_mcast.c) ---- */

/* Where MOUNT/all/ goes: MOUNT/.status says
 * mcast=off|joined|rejoining|fallback. */
enum tp_mcast_state {
	TP_MCAST_OFF,	    /* multicast = no: one unicast copy per peer */
	TP_MCAST_JOINED,    /* one stream of datagrams to the group */
	TP_MCAST_FALLBACK,  /* the join failed: unicast copies */
	TP_MCAST_REJOINING, /* the group was lost: unicast copies until it
			     * is joined again (mcast.c) */
};

/* What .status shows of the group. */
struct tp_mcast_info {
	enum tp_mcast_state state;
	char reason[128]; /* why not joined, in config words */
	union ibv_gid mgid;
	uint16_t mlid;
	time_t last_rejoin; /* when it was last joined again; 0: never */
};

/*
 * The group was joined (mcast.c, through rdma_cm): attach our QP to its
 * MGID and MLID and make its AH on our PD from attr, the join event's.
 * Datagrams to it carry our own qkey, which every node's QP has: the
 * receiving adapter checks it against each attached QP's (the group's
 * own qkey plays no part).  0, or -errno with nothing attached.
 */
int tp_mcast_install(struct tp *tp, const struct ibv_ah_attr *attr);

/* Detach and retire the group's AH; the state becomes st, for reason. */
void tp_mcast_remove(struct tp *tp, enum tp_mcast_state st, const char *reason);

/* The group was joined again (mcast.c): tp_mcast_install, and the time
 * of it for .status. */
int tp_mcast_reinstall(struct tp *tp, const struct ibv_ah_attr *attr);

/*
 * Who joins the group again after a fabric event (mcast.c):
 * rejoin(arg, why) runs on the progress thread, with no engine lock held
 * but this hook's own, when the subnet manager may have dropped our
 * membership (SM_CHANGE, CLIENT_REREGISTER, a LID or GID change); it
 * must not block.  NULL: nobody (mcast_close sets that before it goes).
 */
void tp_set_rejoin(struct tp *tp, void (*rejoin)(void *arg, const char *why),
		   void *arg);

/* The group's state, for .status and for MOUNT/all/'s choice; takes a
 * leaf lock of its own (it changes while mounted, when the group is
 * rejoined), so it may be called under any lock. */
void tp_mcast_get(struct tp *tp, struct tp_mcast_info *out);

/*
 * Queue one message to the group as tp_queue does to a peer (tp_flush
 * sends it), marked WIRE_FLAG_MCAST, with msg_ids of its own; mcast_tx
 * counts its datagrams.  Every other node receives one copy; our own copy
 * (a loopback some devices make) is dropped on arrival, so the caller
 * sends itself one by unicast.  -ENOTCONN when not joined, else
 * tp_queue's errors.
 */
int tp_mcast_queue(struct tp *tp, const char *chan, const void *buf,
		   size_t len);

/* ---- bootstrap = multicast: announces (tp_ann.c) ---- */

struct ann_msg;

/*
 * Who takes announces (announce.c): fn(arg, m) runs on the progress
 * thread, with no engine lock held but this hook's own, for every WIRE_ANN
 * datagram whose hello names the QP and GID it came from (ann_msg_from),
 * known sender or not; it must not block.  NULL fn: nobody, and they are
 * dropped (drop_ann_refused).
 */
void tp_set_announce(struct tp *tp,
		     void (*fn)(void *arg, const struct ann_msg *m), void *arg);

/*
 * Send announce m as one datagram, to the group (p NULL) or to p, which
 * is up.  0, -ENOTCONN (the group not joined, p not up) or -EIO.  The
 * announce thread's; it counts ann_tx.
 */
int tp_ann_send(struct tp *tp, struct peer *p, const struct ann_msg *m);

/*
 * The same to a node not up (with a secret: one being challenged), at
 * addr through ah, which the caller made on tp_pd and keeps: it hands it
 * to tp_peer_up or to tp_ah_retire.
 */
int tp_ann_send_to(struct tp *tp, struct ibv_ah *ah,
		   const struct peer_addr *addr, const struct ann_msg *m);

/* Destroy ah once the sends posted so far have completed (any thread). */
void tp_ah_retire(struct tp *tp, struct ibv_ah *ah);

#endif
