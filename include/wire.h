/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The datagram format.  Every UD datagram starts with a fixed 24-byte
 * big-endian header followed by the channel name (in every fragment).
 * Messages up to max_message bytes are cut into path-MTU datagrams here and
 * put back together on arrival, tolerating loss, duplicates, reordering and
 * interleaving from many peers.  Pure logic: no verbs, no threads.
 *
 * Datagram layout (after the GRH that UD receives carry):
 *   0  u32 magic 'IBFS'        12 u32 msg_id
 *   4  u8  version             16 u16 frag_idx
 *   5  u8  type                18 u16 frag_cnt
 *   6  u8  chan_len            20 u32 total_len (whole message)
 *   7  u8  flags
 *   8  u32 src (node id)
 *  24  channel name (chan_len bytes, every fragment; no NUL)
 *  24+chan_len  payload
 * Every fragment but the last carries exactly wire_frag_room() payload
 * bytes, so offsets follow from frag_idx alone.  A fragment's length is
 * checked against what total_len, frag_idx and frag_cnt imply.
 */
#ifndef IBFS_WIRE_H
#define IBFS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define WIRE_MAGIC 0x49424653u /* "IBFS" */
/* 6: reliable trailer of 24 bytes, 512-bit sack and the refusal codes in
 * standalone acks only, retries flagged; 7: the data path probe (WIRE_PING,
 * WIRE_PONG), which a node of 6 would drop as malformed */
#define WIRE_VERSION  7
#define WIRE_HDR_LEN  24
#define WIRE_CHAN_MAX UTIL_NAME_MAX /* longest channel name on the wire */

enum wire_type {
	WIRE_DATA = 1, /* a fragment of a message */
	WIRE_ACK = 2,  /* reserved for reliable delivery */
	WIRE_ANN = 3,  /* bootstrap = multicast: see below */
	WIRE_PING = 4, /* the data path probe: see below */
	WIRE_PONG = 5, /* its answer */
};

struct wire_hdr {
	uint8_t version;
	uint8_t type;
	uint8_t chan_len;
	uint8_t flags;
	uint32_t src;
	uint32_t msg_id;
	uint16_t frag_idx;
	uint16_t frag_cnt;
	uint32_t total_len;
};

/* The wire id of a node: FNV-1a of its name, stable across restarts. */
uint32_t wire_node_id(const char *name);

/* A datagram's type byte, 0 when it is too short for a header: how the
 * receive path tells an announce from data before it decodes more. */
static inline uint8_t wire_peek_type(const void *dg, size_t len)
{
	return len >= WIRE_HDR_LEN ? ((const uint8_t *)dg)[5] : 0;
}

/* The flags byte (WIRE_FLAG_*) of a datagram, 0 when it is too short. */
static inline uint8_t wire_peek_flags(const void *dg, size_t len)
{
	return len >= WIRE_HDR_LEN ? ((const uint8_t *)dg)[7] : 0;
}

/* Write h (magic and version included) into buf[WIRE_HDR_LEN]. */
void wire_hdr_encode(const struct wire_hdr *h, void *buf);

/* The header of a datagram that is no fragment of a message (an ACK, an
 * announce): type, src, frag 0 of 1, no channel, total_len body bytes. */
void wire_bare_hdr(void *buf, uint8_t type, uint32_t src, uint32_t total_len);

/* Parse and sanity-check a header; -EBADMSG when malformed. */
int wire_hdr_decode(struct wire_hdr *h, const void *buf, size_t len);

/* Payload bytes per datagram of size mtu for a channel name of chan_len. */
size_t wire_frag_room(size_t mtu, size_t chan_len);

/* Fragments needed for len bytes (at least 1: empty messages exist). */
uint32_t wire_frag_count(size_t len, size_t mtu, size_t chan_len);

/*
 * Build fragment idx of message (src, msg_id, chan, msg, len) into buf,
 * which holds mtu bytes.  Returns the datagram length, 0 when chan is no
 * name (util.h), the message cannot go or idx is past its last fragment.
 */
size_t wire_frag_build(void *buf, size_t mtu, uint32_t src, uint32_t msg_id,
		       const char *chan, const void *msg, size_t len,
		       uint32_t idx);

/*
 * wire_frag_build for a sender that checked the name once per message
 * (chan_len, from util_name_len), not once per fragment.
 */
size_t wire_frag_put(void *buf, size_t mtu, uint32_t src, uint32_t msg_id,
		     const char *chan, size_t chan_len, const void *msg,
		     size_t len, uint32_t idx);

/* A message put back together; data is malloc'ed and owned by the caller. */
struct wire_msg {
	int peer; /* as passed to wire_reasm_feed */
	uint32_t msg_id;
	char chan[WIRE_CHAN_MAX + 1];
	void *data;
	size_t len;
};

/* Why a datagram or a partial message was dropped. */
enum wire_drop {
	WIRE_DROP_MALFORMED = 1,
	WIRE_DROP_DUPLICATE,
	WIRE_DROP_TOO_BIG,   /* total_len beyond max_message */
	WIRE_DROP_NO_MEMORY, /* the table's mem_limit is reached (or malloc) */
	WIRE_DROP_SHARE,     /* the peer holds its share (see below) */
};

/*
 * The reassembly table: every peer's partial messages, in one budget of
 * mem_limit bytes of real memory.  A partial message is charged what it
 * holds (its buffer of total_len bytes, its bookkeeping and fragment
 * bitmap, its hash slots, as malloc spends them), from its first fragment
 * on, so many tiny partials cost what they really cost.  Shares, with
 * ONE the charge of a max_message message and n the peers holding
 * partials (the one asking included):
 *  - a peer holds at most WIRE_REASM_PEER_PARTS partial messages and at
 *    most max(mem_limit / n, ONE) bytes (-WIRE_DROP_SHARE);
 *  - all together hold at most mem_limit (-WIRE_DROP_NO_MEMORY);
 *  - past its first ONE bytes a peer may not take the last ONE bytes of
 *    the budget (-WIRE_DROP_SHARE): they are kept for another peer.
 * So a peer alone may use all but ONE of the budget, a second peer always
 * finds room for a max_message message, and as partials complete or
 * expire each peer is held to its fair share.  A table smaller than two
 * ONEs keeps no reserve.  A peer's unicast and multicast messages
 * (WIRE_FLAG_MCAST: a sequence of msg_ids of their own) are kept apart
 * but share one key and one share.  Partials that do not complete in
 * timeout_ms expire, WIRE_REASM_EXPIRE_SLICE at most per call.
 *
 * Not thread-safe: the caller serializes every call (tp_recv.c holds
 * rx.rlock).
 */
#define WIRE_REASM_PEER_PARTS	4096
#define WIRE_REASM_EXPIRE_SLICE 1024

struct wire_reasm;

/* A table for messages of up to max_message bytes; NULL without memory. */
struct wire_reasm *wire_reasm_new(size_t max_message, size_t mem_limit,
				  uint32_t timeout_ms);
void wire_reasm_free(struct wire_reasm *r);

/*
 * Feed one datagram (header onward) received from peer at now_ms.  Returns
 * 1 with *out filled when a message completes, 0 when it was taken and
 * more fragments are due, or -enum wire_drop when it was dropped.
 * A single-fragment message completes at once and is never held.
 */
int wire_reasm_feed(struct wire_reasm *r, int peer, const void *dgram,
		    size_t len, uint64_t now_ms, struct wire_msg *out);

/* wire_reasm_feed for a caller that decoded dgram's header into h
 * (wire_hdr_decode, which succeeded) already. */
int wire_reasm_feed_hdr(struct wire_reasm *r, int peer,
			const struct wire_hdr *h, const void *dgram, size_t len,
			uint64_t now_ms, struct wire_msg *out);

/* Drop partial messages older than the timeout, oldest first, at most
 * WIRE_REASM_EXPIRE_SLICE; returns how many.  Call again while
 * wire_reasm_next_timeout says 0. */
unsigned wire_reasm_expire(struct wire_reasm *r, uint64_t now_ms);

/* The same, calling fn(arg, peer) for each message dropped (per-peer counts).
 */
unsigned wire_reasm_expire_each(struct wire_reasm *r, uint64_t now_ms,
				void (*fn)(void *arg, int peer), void *arg);

/* Drop every partial message from peer (it restarted or went down): at
 * most WIRE_REASM_PEER_PARTS, found without a walk of the others. */
unsigned wire_reasm_forget_peer(struct wire_reasm *r, int peer);

/* Partial messages held now (for tests and .status). */
unsigned wire_reasm_pending(const struct wire_reasm *r);

/* The real memory they hold, as charged against mem_limit. */
size_t wire_reasm_mem(const struct wire_reasm *r);

/* Milliseconds until the next expiry is due (0: now, more are due), or
 * -1 if nothing is pending. */
int wire_reasm_next_timeout(const struct wire_reasm *r, uint64_t now_ms);

/*
 * In-order reassembly, for reliable streams: their fragments arrive in
 * psn order, one message after another, so one partial message per
 * stream is all there is, and it never times out (the sender retransmits
 * until it is whole, however long loss makes that).  Zero it to start.
 */
struct wire_seq {
	uint8_t *buf; /* NULL: between messages */
	uint32_t msg_id, next, frag_cnt, room, total_len;
	uint8_t chan_len;
	char chan[WIRE_CHAN_MAX];
};

/*
 * Feed the next datagram of the stream (header onward).  Returns 1 with
 * *out filled when its message completes, 0 when more fragments are due,
 * -WIRE_DROP_NO_MEMORY when it could not be taken (offer it again), or
 * -WIRE_DROP_MALFORMED / -WIRE_DROP_TOO_BIG (the partial is dropped).
 */
int wire_seq_feed(struct wire_seq *s, size_t max_message, int peer,
		  const void *dgram, size_t len, struct wire_msg *out);

/* Drop the partial message, if any (the stream ended). */
void wire_seq_reset(struct wire_seq *s);

/*
 * Reliable delivery (delivery = reliable) marks its datagrams with
 * WIRE_FLAG_REL in flags and appends a trailer, so that what precedes it
 * is a plain datagram reassembly takes as is.  Its last WIRE_REL_LEN
 * bytes are fixed:
 *   -24 u32 sess      sender's session of this stream (DATA)
 *   -20 u32 psn       sequence number of this datagram (DATA)
 *   -16 u32 ack_sess  the session of the reverse stream acked here
 *   -12 u32 ack       next psn expected on it (cumulative)
 *    -8 u32 credit    datagrams the sender of this one will take now
 *    -4 u32 rflags    WIRE_REL_ACK (ack fields valid), WIRE_REL_NAK,
 *                     WIRE_REL_ACKREQ (ack this one at once; a receiver
 *                     that ignores it acks at its next tick),
 *                     WIRE_REL_SACK (the sack precedes the fixed part),
 *                     WIRE_REL_CODES (the refusal codes precede that),
 *                     WIRE_REL_RETRY (DATA: a message sent again after
 *                     its channel queue refused it, reliable.h)
 *                     WIRE_REL_FWD (DATA: no psn before this one will
 *                     come, the messages there were failed; reliable.h)
 * and with WIRE_REL_SACK they follow WIRE_REL_SACK_LEN bytes of selective
 * ack: the psns past ack the receiver holds (bit i: ack + 1 + i), most
 * significant word first.  With WIRE_REL_CODES, WIRE_REL_CODES_LEN bytes
 * before those: WIRE_REL_PLANES bitmaps of WIRE_SACK_WORDS words each,
 * plane 0 first, each as the sack; bit i of plane j is bit j of the
 * refusal code (reliable.h's enum rel_code) of psn ack - 512 + i.  Fragments
 * are cut for mtu - WIRE_REL_LEN, so a DATA datagram has no room for a sack: an
 * ack that needs one goes alone, as a standalone ACK (type WIRE_ACK, chan_len
 * 0, frag 0 of 1, total_len 0, then the trailer).
 */
#define WIRE_FLAG_REL 0x01
/*
 * Sent to the multicast group (MOUNT/all/).  Its msg_ids are a sequence
 * of their own, apart from the sender's unicast ones, so a receiver
 * reassembles the two apart.
 */
#define WIRE_FLAG_MCAST	   0x02
#define WIRE_SACK_WORDS	   8 /* 64-bit words of the sack */
#define WIRE_REL_LEN	   24
#define WIRE_REL_SACK_LEN  (8 * WIRE_SACK_WORDS)
#define WIRE_REL_ACK	   0x1
#define WIRE_REL_NAK	   0x2
#define WIRE_REL_ACKREQ	   0x4
#define WIRE_REL_SACK	   0x8
#define WIRE_REL_RETRY	   0x10
#define WIRE_REL_CODES	   0x20
#define WIRE_REL_FWD	   0x80
#define WIRE_REL_PLANES	   3
#define WIRE_REL_CODES_LEN (WIRE_REL_PLANES * WIRE_REL_SACK_LEN)

struct wire_rel {
	uint32_t sess, psn;
	uint32_t ack_sess, ack, credit;
	uint32_t rflags;
	uint64_t sack[WIRE_SACK_WORDS];			  /* [0]: bits 0..63 */
	uint64_t codes[WIRE_REL_PLANES][WIRE_SACK_WORDS]; /* as sack */
};

/*
 * bootstrap = multicast (announce.h) sends its announces, to the group,
 * and its challenges, by unicast, as datagrams of type WIRE_ANN: one
 * fragment (frag 0 of 1), no channel (chan_len 0), msg_id 0, total_len
 * the body's length, then the body, announce.h's fixed layout.  They
 * come from nodes not met yet, so the receive path takes them before the
 * source filter (tp_recv.c), checks that the body names the QP and GID
 * the datagram came from, and hands them to announce.c, never to
 * reassembly: no WIRE_ANN datagram is ever data.
 */
/* The longest body (announce.h's ANN_MSG_MAX): an announce fits the
 * smallest MTU; a PROOF or CONFIRM with a certificate step is checked
 * against the port's when sent. */
#define WIRE_ANN_MAX 2304

/*
 * The data path probe (tp_probe.c): a peer is up only once a WIRE_PING
 * datagram to it came back answered by a WIRE_PONG, which proves that
 * datagrams go both ways (qkey, P_Key, route, firewall).  Both are a bare
 * header: frag 0 of 1, no channel, total_len 0, msg_id the ping's token,
 * which the answer echoes.  Like data they pass the source filter: only
 * a node met by the bootstrap is answered.
 */
#define WIRE_PROBE_LEN WIRE_HDR_LEN

/* A ping or its answer (type) from src with token into
 * buf[WIRE_PROBE_LEN]; returns its length. */
size_t wire_probe_build(void *buf, uint8_t type, uint32_t src, uint32_t token);

/* Set flag (WIRE_FLAG_*) in a built datagram's header. */
void wire_set_flag(void *dgram, uint8_t flag);

/* Mark dgram[0..len) reliable and append r (its sack only with
 * WIRE_REL_SACK in rflags, its codes only with WIRE_REL_CODES); returns
 * the new length. */
size_t wire_rel_put(void *dgram, size_t len, const struct wire_rel *r);

/*
 * Read the trailer of a reliable datagram: the length without it, or
 * -EBADMSG when the flag is missing or the datagram too short.  The sack
 * is zero unless rflags has WIRE_REL_SACK, the codes unless it has
 * WIRE_REL_CODES.
 */
long wire_rel_get(const void *dgram, size_t len, struct wire_rel *r);

/* A standalone reliable ACK from src into buf (>= WIRE_HDR_LEN +
 * WIRE_REL_CODES_LEN + WIRE_REL_SACK_LEN + WIRE_REL_LEN bytes); returns
 * its length. */
size_t wire_ack_build(void *buf, uint32_t src, const struct wire_rel *r);

#endif
