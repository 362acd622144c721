/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The datagram format (see include/wire.h): the header's codec and the
 * cutting of a message into fragments; wire_reasm.c puts them back
 * together.
 *
 * Headers are fixed big-endian, written and read byte-wise through memcpy.
 * All fragments but the last carry exactly wire_frag_room() payload bytes,
 * so a fragment's offset is frag_idx * room.
 */
#include <errno.h>
#include <string.h>

#include "wire.h"
#include "util.h"

/* Header field offsets (see the layout in wire.h). */
enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 4,
	OFF_TYPE = 5, /* wire.h's wire_peek_type reads it */
	OFF_CHAN_LEN = 6,
	OFF_FLAGS = 7, /* wire.h's wire_peek_flags reads it */
	OFF_SRC = 8,
	OFF_MSG_ID = 12,
	OFF_FRAG_IDX = 16,
	OFF_FRAG_CNT = 18,
	OFF_TOTAL_LEN = 20,
};

/* FNV-1a, 32 bit: cheap, stable and good enough to name nodes. */
uint32_t wire_node_id(const char *name)
{
	return util_fnv1a(name, strlen(name), UTIL_FNV1A_INIT);
}

/* One fixed layout on every host; magic and version come from here. */
void wire_hdr_encode(const struct wire_hdr *h, void *buf)
{
	uint8_t *b = buf;

	util_put32(b + OFF_MAGIC, WIRE_MAGIC);
	b[OFF_VERSION] = WIRE_VERSION;
	b[OFF_TYPE] = h->type;
	b[OFF_CHAN_LEN] = h->chan_len;
	b[OFF_FLAGS] = h->flags;
	util_put32(b + OFF_SRC, h->src);
	util_put32(b + OFF_MSG_ID, h->msg_id);
	util_put16(b + OFF_FRAG_IDX, h->frag_idx);
	util_put16(b + OFF_FRAG_CNT, h->frag_cnt);
	util_put32(b + OFF_TOTAL_LEN, h->total_len);
}

/*
 * Reject what no sender of ours writes, so later code may trust the
 * fields.  Unknown flags are ignored (room for compatible extensions).
 * Whether the datagram also holds chan_len name bytes is the reader's
 * business: buf may be the bare header.
 */
int wire_hdr_decode(struct wire_hdr *h, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	struct wire_hdr t;

	if (!buf || len < WIRE_HDR_LEN)
		return -EBADMSG;
	if (util_get32(b + OFF_MAGIC) != WIRE_MAGIC)
		return -EBADMSG;
	t.version = b[OFF_VERSION];
	t.type = b[OFF_TYPE];
	t.chan_len = b[OFF_CHAN_LEN];
	t.flags = b[OFF_FLAGS];
	t.src = util_get32(b + OFF_SRC);
	t.msg_id = util_get32(b + OFF_MSG_ID);
	t.frag_idx = util_get16(b + OFF_FRAG_IDX);
	t.frag_cnt = util_get16(b + OFF_FRAG_CNT);
	t.total_len = util_get32(b + OFF_TOTAL_LEN);

	if (t.version != WIRE_VERSION)
		return -EBADMSG;
	if (t.type < WIRE_DATA || t.type > WIRE_PONG)
		return -EBADMSG;
	if ((t.type == WIRE_PING || t.type == WIRE_PONG) &&
	    (t.chan_len || t.frag_cnt != 1 || t.total_len))
		return -EBADMSG;
	if (t.type == WIRE_ANN &&
	    (t.chan_len || t.frag_cnt != 1 || t.total_len > WIRE_ANN_MAX))
		return -EBADMSG;
	if (t.chan_len > WIRE_CHAN_MAX)
		return -EBADMSG;
	if (t.type == WIRE_DATA && t.chan_len < 1)
		return -EBADMSG;
	if (t.frag_cnt < 1 || t.frag_idx >= t.frag_cnt)
		return -EBADMSG;
	*h = t;
	return 0;
}

/* What is left of a datagram for payload; 0 when the name fills it. */
size_t wire_frag_room(size_t mtu, size_t chan_len)
{
	if (chan_len > mtu || mtu - chan_len <= WIRE_HDR_LEN)
		return 0;
	return mtu - WIRE_HDR_LEN - chan_len;
}

/*
 * Fragments for a message of len bytes; an empty one still takes one.
 * Returns 0 when the message cannot be sent at all: the MTU leaves no
 * room for payload, len does not fit total_len (u32), or it would need
 * more than 65535 fragments (frag_cnt is a u16).  Callers treat 0 as
 * EMSGSIZE.
 */
uint32_t wire_frag_count(size_t len, size_t mtu, size_t chan_len)
{
	size_t room = wire_frag_room(mtu, chan_len);
	size_t n;

	if (!room || len > UINT32_MAX)
		return 0;
	if (!len)
		return 1;
	n = len / room + (len % room != 0);
	if (n > UINT16_MAX)
		return 0;
	return (uint32_t)n;
}

/*
 * Lay out fragment idx so a receiver can place it by index alone, for a
 * channel name of chan_len bytes already checked (util_name_len).
 * Returns 0 for an unsendable message or idx out of range; otherwise the
 * datagram length (at most mtu).
 */
size_t wire_frag_put(void *buf, size_t mtu, uint32_t src, uint32_t msg_id,
		     const char *chan, size_t chan_len, const void *msg,
		     size_t len, uint32_t idx)
{
	struct wire_hdr h;
	uint8_t *b = buf;
	size_t room, off, plen;
	uint32_t cnt;

	cnt = wire_frag_count(len, mtu, chan_len);
	if (!cnt || idx >= cnt)
		return 0;
	room = wire_frag_room(mtu, chan_len);
	off = (size_t)idx * room;
	plen = len - off < room ? len - off : room;

	h.version = WIRE_VERSION;
	h.type = WIRE_DATA;
	h.chan_len = (uint8_t)chan_len;
	h.flags = 0;
	h.src = src;
	h.msg_id = msg_id;
	h.frag_idx = (uint16_t)idx;
	h.frag_cnt = (uint16_t)cnt;
	h.total_len = (uint32_t)len;
	wire_hdr_encode(&h, b);
	memcpy(b + WIRE_HDR_LEN, chan, chan_len);
	if (plen)
		memcpy(b + WIRE_HDR_LEN + chan_len, (const uint8_t *)msg + off,
		       plen);
	return WIRE_HDR_LEN + chan_len + plen;
}

/* wire_frag_put of a name checked here: 0 for a bad one too. */
size_t wire_frag_build(void *buf, size_t mtu, uint32_t src, uint32_t msg_id,
		       const char *chan, const void *msg, size_t len,
		       uint32_t idx)
{
	size_t chan_len = util_name_len(chan);

	if (!chan_len)
		return 0;
	return wire_frag_put(buf, mtu, src, msg_id, chan, chan_len, msg, len,
			     idx);
}

/* Flags are the one header field set after the fragment is built. */
void wire_set_flag(void *dgram, uint8_t flag)
{
	((uint8_t *)dgram)[OFF_FLAGS] |= flag;
}

/* The one layout of a header that carries no fragment (see wire.h). */
void wire_bare_hdr(void *buf, uint8_t type, uint32_t src, uint32_t total_len)
{
	struct wire_hdr h;

	memset(&h, 0, sizeof(h));
	h.type = type;
	h.src = src;
	h.frag_cnt = 1;
	h.total_len = total_len;
	wire_hdr_encode(&h, buf);
}

/* A probe is a bare header whose msg_id carries the token. */
size_t wire_probe_build(void *buf, uint8_t type, uint32_t src, uint32_t token)
{
	struct wire_hdr h;

	memset(&h, 0, sizeof(h));
	h.type = type;
	h.src = src;
	h.msg_id = token;
	h.frag_cnt = 1;
	wire_hdr_encode(&h, buf);
	return WIRE_PROBE_LEN;
}
