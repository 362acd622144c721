/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Putting messages back together (see include/wire.h): out of order for
 * datagram delivery (the reassembly table), in order for reliable streams
 * (wire_seq).
 *
 * A message is cut into fragments that each carry the header and the
 * channel name; all but the last carry exactly `room' payload bytes, so a
 * fragment's offset is frag_idx * room.  The receiver does not know the
 * sender's MTU: it derives room from each datagram (a non-last fragment's
 * payload length, or (total_len - last) / (frag_cnt - 1) for the last one)
 * and every fragment of a message must agree on it.
 *
 * Reassembly keeps partial messages in an open-addressing hash table keyed
 * by (peer, src, msg_id, multicast flag), seeded per table so a peer cannot
 * aim collisions, in a list ordered by first-seen time for expiry, and on
 * its peer's list; an entry per peer keeps its share's accounting and the
 * msg_ids it completed lately.  The buffer handed
 * out on completion is the one fragments were copied into: one malloc per
 * message, none per fragment.  Every fragment is checked against the
 * geometry implied by its header before a byte is copied.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include "wire.h"
#include "util.h"

/* Recently completed msg_ids remembered per peer to spot late duplicates. */
#define WIRE_RING 64
/* Buckets counting the ring's keys by msg_id, so that a message whose
 * bucket is empty, as a sender's next msg_id is, needs no scan of it. */
#define WIRE_RING_BUCKETS 256
#define HTAB_MIN	  16
/* glibc's malloc serves requests from here on with mmap, by whole pages. */
#define HEAP_MMAP_MIN ((size_t)128 << 10)

#define container_of(ptr, type, member)                                        \
	((type *)((char *)(ptr)-offsetof(type, member)))

/* An entry of an open-addressing table; embedded in what it indexes. */
struct hnode {
	uint64_t hash;
};

/* Linear probing, backward-shift deletion, load kept at or under 1/2. */
struct htab {
	struct hnode **slot;
	size_t mask; /* capacity - 1; capacity is a power of two */
	size_t count;
};

/* Who a message is from: a peer's unicast and group sequences apart. */
struct msg_key {
	uint32_t src;
	uint32_t msg_id;
	uint8_t mcast; /* WIRE_FLAG_MCAST was set */
};

struct wpeer;

/* A message being put back together. */
struct partial {
	struct hnode hn;
	struct partial *prev, *next;   /* by first-seen time, oldest first */
	struct partial *pprev, *pnext; /* its peer's, in any order */
	struct wpeer *owner;
	struct msg_key key;
	uint64_t first_ms;
	uint32_t total_len;
	uint32_t room; /* payload bytes of every non-last fragment */
	uint32_t frag_cnt;
	uint32_t nrecv;
	size_t charge; /* its real cost (part_cost), counted against limits */
	uint8_t chan_len;
	char chan[WIRE_CHAN_MAX + 1];
	uint8_t *buf;	 /* total_len bytes (at least 1 allocated) */
	uint64_t bits[]; /* fragments received */
};

/*
 * What the table knows of one peer (a key passed to wire_reasm_feed):
 * the partials it holds and their cost, for its share, and the msg_ids
 * it completed lately, oldest overwritten first.  One per key the caller
 * uses, made on its first message, freed by forget_peer; not charged (the
 * caller's keys are bounded: its config's nodes).
 */
struct wpeer {
	struct hnode hn;
	int peer;
	unsigned nparts;
	size_t used;	       /* sum of its partials' charge */
	struct partial *parts; /* its partials */
	unsigned pos;
	unsigned n;
	struct msg_key id[WIRE_RING];
	uint8_t nbucket[WIRE_RING_BUCKETS]; /* id[]'s keys by ring_bucket */
};

struct wire_reasm {
	size_t max_message;
	size_t mem_limit;
	size_t mem_used;
	size_t one;	 /* part_cost of a max_message message */
	size_t reserve;	 /* kept for peers within their first `one' */
	unsigned active; /* peers holding partials */
	uint32_t timeout_ms;
	uint64_t seed;
	struct htab parts;
	struct htab peers;
	struct partial *oldest, *newest;
	struct partial *last; /* the partial the last fragment went to */
};

/* A 64-bit finalizer (splitmix64): spreads every input bit. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* Table hash of a partial's key, keyed by the table's secret seed. */
static uint64_t part_hash(const struct wire_reasm *r, int peer,
			  const struct msg_key *k)
{
	uint64_t v = ((uint64_t)k->src << 32) | k->msg_id;

	return mix64(mix64(v ^ r->seed) ^ (uint32_t)peer ^
		     ((uint64_t)k->mcast << 32));
}

/* Table hash of a peer's entry. */
static uint64_t wpeer_hash(const struct wire_reasm *r, int peer)
{
	return mix64(r->seed ^ (uint32_t)peer ^ 0x5a5a5a5a00000000ull);
}

/* Whether two keys name the same message of one peer. */
static bool key_eq(const struct msg_key *a, const struct msg_key *b)
{
	return a->msg_id == b->msg_id && a->src == b->src &&
	       a->mcast == b->mcast;
}

/* Put n in the first free slot from its home; t must have one free. */
static void htab_place(struct htab *t, struct hnode *n)
{
	size_t i = n->hash & t->mask;

	while (t->slot[i])
		i = (i + 1) & t->mask;
	t->slot[i] = n;
	t->count++;
}

/* Double t (or make it); entries move to their new home slots. */
static int htab_grow(struct htab *t)
{
	struct htab nt;
	size_t cap = t->slot ? (t->mask + 1) * 2 : HTAB_MIN;
	size_t i;

	nt.slot = calloc(cap, sizeof(*nt.slot));
	if (!nt.slot)
		return -ENOMEM;
	nt.mask = cap - 1;
	nt.count = 0;
	if (t->slot) {
		for (i = 0; i <= t->mask; i++)
			if (t->slot[i])
				htab_place(&nt, t->slot[i]);
		free(t->slot);
	}
	*t = nt;
	return 0;
}

/* Put n into t, growing first so probes stay short; -ENOMEM leaves t. */
static int htab_insert(struct htab *t, struct hnode *n)
{
	if (!t->slot || (t->count + 1) * 2 > t->mask + 1) {
		int rc = htab_grow(t);

		if (rc)
			return rc;
	}
	htab_place(t, n);
	return 0;
}

/* Take n out of t and close the gap so later probes still find theirs. */
static void htab_remove(struct htab *t, struct hnode *n)
{
	size_t i = n->hash & t->mask, j, home;

	while (t->slot[i] != n)
		i = (i + 1) & t->mask;
	t->slot[i] = NULL;
	t->count--;
	for (j = (i + 1) & t->mask; t->slot[j]; j = (j + 1) & t->mask) {
		home = t->slot[j]->hash & t->mask;
		/* Move j back into i unless its home lies in (i, j]. */
		if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
			t->slot[i] = t->slot[j];
			t->slot[j] = NULL;
			i = j;
		}
	}
}

/* The partial (peer, key), or NULL; the last one used is cached. */
static struct partial *part_find(struct wire_reasm *r, int peer,
				 const struct msg_key *k)
{
	struct partial *p = r->last;
	uint64_t h;
	size_t i;

	if (p && key_eq(&p->key, k) && p->owner->peer == peer)
		return p;
	if (!r->parts.count)
		return NULL;
	h = part_hash(r, peer, k);
	for (i = h & r->parts.mask; r->parts.slot[i];
	     i = (i + 1) & r->parts.mask) {
		if (r->parts.slot[i]->hash != h)
			continue;
		p = container_of(r->parts.slot[i], struct partial, hn);
		if (key_eq(&p->key, k) && p->owner->peer == peer)
			return r->last = p;
	}
	return NULL;
}

/* peer's entry, or NULL. */
static struct wpeer *wpeer_find(const struct wire_reasm *r, int peer)
{
	uint64_t h;
	size_t i;
	struct wpeer *g;

	if (!r->peers.count)
		return NULL;
	h = wpeer_hash(r, peer);
	for (i = h & r->peers.mask; r->peers.slot[i];
	     i = (i + 1) & r->peers.mask) {
		if (r->peers.slot[i]->hash != h)
			continue;
		g = container_of(r->peers.slot[i], struct wpeer, hn);
		if (g->peer == peer)
			return g;
	}
	return NULL;
}

/* peer's entry, made if it has none; NULL when out of memory. */
static struct wpeer *wpeer_get(struct wire_reasm *r, int peer)
{
	struct wpeer *g = wpeer_find(r, peer);

	if (g)
		return g;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->peer = peer;
	g->hn.hash = wpeer_hash(r, peer);
	if (htab_insert(&r->peers, &g->hn)) {
		free(g);
		return NULL;
	}
	return g;
}

/* k's count in nbucket: consecutive msg_ids fall apart, and a group's
 * sequence beside the same peer's unicast one. */
static unsigned ring_bucket(const struct msg_key *k)
{
	return (k->msg_id + (k->mcast ? WIRE_RING_BUCKETS / 2 : 0)) %
	       WIRE_RING_BUCKETS;
}

/* Whether g (the peer's entry, or NULL) completed k lately: a late
 * duplicate.  A scan of the ring only when k's bucket holds any. */
static bool ring_has(const struct wpeer *g, const struct msg_key *k)
{
	unsigned i;

	if (!g || !g->nbucket[ring_bucket(k)])
		return false;
	for (i = 0; i < g->n; i++)
		if (key_eq(&g->id[i], k))
			return true;
	return false;
}

/*
 * Remember a completed message in g (the peer's entry, made now when
 * NULL).  Best effort: without memory for the peer's entry a late
 * duplicate may be delivered again, which UD allows anyway.
 */
static void ring_add(struct wire_reasm *r, struct wpeer *g, int peer,
		     const struct msg_key *k)
{
	if (!g)
		g = wpeer_get(r, peer);
	if (!g)
		return;
	if (g->n == WIRE_RING)
		g->nbucket[ring_bucket(&g->id[g->pos])]--;
	else
		g->n++;
	g->id[g->pos] = *k;
	g->nbucket[ring_bucket(k)]++;
	g->pos = (g->pos + 1) % WIRE_RING;
}

/* Unlink p from table, age list and its peer, and release its charge. */
static void part_unlink(struct wire_reasm *r, struct partial *p)
{
	struct wpeer *g = p->owner;

	htab_remove(&r->parts, &p->hn);
	if (p->prev)
		p->prev->next = p->next;
	else
		r->oldest = p->next;
	if (p->next)
		p->next->prev = p->prev;
	else
		r->newest = p->prev;
	if (p->pprev)
		p->pprev->pnext = p->pnext;
	else
		g->parts = p->pnext;
	if (p->pnext)
		p->pnext->pprev = p->pprev;
	r->mem_used -= p->charge;
	g->used -= p->charge;
	if (!--g->nparts)
		r->active--;
	if (r->last == p)
		r->last = NULL;
}

/* Drop a partial message together with its buffer. */
static void part_destroy(struct wire_reasm *r, struct partial *p)
{
	part_unlink(r, p);
	free(p->buf);
	free(p);
}

/* What glibc's malloc takes from the heap for n bytes: a chunk with an
 * 8-byte header, 16-aligned, at least 32; from HEAP_MMAP_MIN on, whole
 * pages with a 16-byte header. */
static size_t heap_cost(size_t n)
{
	if (n >= HEAP_MMAP_MIN)
		return (n + 16 + 4095) & ~(size_t)4095;
	n = (n + 8 + 15) & ~(size_t)15;
	return n < 32 ? 32 : n;
}

/*
 * The real memory a partial message of total_len bytes in frag_cnt
 * fragments holds: its bookkeeping and bitmap, its buffer, and its share
 * of the hash table (at most 4 slots an entry: the load stays between
 * 1/4 and 1/2 once the table has grown).
 */
static size_t part_cost(size_t total_len, size_t frag_cnt)
{
	size_t words = (frag_cnt + 63) / 64;

	return heap_cost(sizeof(struct partial) + words * sizeof(uint64_t)) +
	       heap_cost(total_len ? total_len : 1) +
	       4 * sizeof(struct hnode *);
}

/* Secret per-table seed so hash collisions cannot be aimed from outside. */
static uint64_t make_seed(const void *salt)
{
	uint64_t s = 0;
	struct timespec ts;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) == sizeof(s))
		return s;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^
		     (uint64_t)(uintptr_t)salt);
}

/* A reassembly table with its limits; NULL when out of memory. */
struct wire_reasm *wire_reasm_new(size_t max_message, size_t mem_limit,
				  uint32_t timeout_ms)
{
	struct wire_reasm *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->max_message = max_message;
	r->mem_limit = mem_limit;
	r->one = part_cost(max_message, UINT16_MAX);
	/* too small a table for two such messages keeps no reserve */
	r->reserve = mem_limit / 2 >= r->one ? r->one : 0;
	r->timeout_ms = timeout_ms;
	r->seed = make_seed(r);
	return r;
}

/* Release the table, every partial message and every peer's entry. */
void wire_reasm_free(struct wire_reasm *r)
{
	size_t i;

	if (!r)
		return;
	while (r->oldest)
		part_destroy(r, r->oldest);
	for (i = 0; r->peers.slot && i <= r->peers.mask; i++)
		if (r->peers.slot[i])
			free(container_of(r->peers.slot[i], struct wpeer, hn));
	free(r->parts.slot);
	free(r->peers.slot);
	free(r);
}

/*
 * Check that a fragment's payload length fits its header and find the room
 * (payload per non-last fragment) it implies.  A sender cuts total_len
 * into frag_cnt pieces of room bytes with a last piece of 1..room bytes,
 * so for frag_cnt > 1: (frag_cnt - 1) * room < total_len <= frag_cnt * room.
 */
static int frag_geometry(const struct wire_hdr *h, size_t plen, uint32_t *room)
{
	uint64_t cnt1 = (uint64_t)h->frag_cnt - 1, full, rest;

	if (h->frag_cnt == 1) {
		if (plen != h->total_len)
			return -EBADMSG;
		*room = h->total_len;
		return 0;
	}
	if (plen < 1 || plen > h->total_len)
		return -EBADMSG;
	if (h->frag_idx < cnt1) {
		/* plen <= total_len < 2^32, cnt1 < 2^16: no overflow */
		full = cnt1 * plen;
		if (full >= h->total_len || h->total_len - full > plen)
			return -EBADMSG;
		*room = (uint32_t)plen;
		return 0;
	}
	rest = h->total_len - plen;
	if (rest % cnt1)
		return -EBADMSG;
	if (rest / cnt1 < plen)
		return -EBADMSG;
	*room = (uint32_t)(rest / cnt1);
	return 0;
}

/* A channel name from the wire becomes a file name: the one name rule. */
static int chan_ok(const char *chan, size_t chan_len)
{
	return util_name_problem_n(chan, chan_len) ? -EBADMSG : 0;
}

/* Fill a completed message for the caller. */
static void msg_fill(struct wire_msg *out, int peer, uint32_t msg_id,
		     const char *chan, size_t chan_len, void *data, size_t len)
{
	out->peer = peer;
	out->msg_id = msg_id;
	memcpy(out->chan, chan, chan_len);
	out->chan[chan_len] = '\0';
	out->data = data;
	out->len = len;
}

/* A one-fragment message, copied out whole: 1, or -WIRE_DROP_NO_MEMORY. */
static int msg_whole(struct wire_msg *out, int peer, const struct wire_hdr *h,
		     const char *chan, const uint8_t *payload, size_t plen)
{
	void *data = malloc(plen ? plen : 1);

	if (!data)
		return -WIRE_DROP_NO_MEMORY;
	if (plen)
		memcpy(data, payload, plen);
	msg_fill(out, peer, h->msg_id, chan, h->chan_len, data, plen);
	return 1;
}

/*
 * Whether g may hold charge more bytes, by the policy in wire.h: 0, or
 * the -WIRE_DROP_* to count.
 */
static int part_admit(const struct wire_reasm *r, const struct wpeer *g,
		      size_t charge)
{
	unsigned n = r->active + !g->nparts;
	size_t share = r->mem_limit / n, after = g->used + charge;

	if (share < r->one)
		share = r->one;
	if (g->nparts >= WIRE_REASM_PEER_PARTS || after > share)
		return -WIRE_DROP_SHARE;
	if (charge > r->mem_limit || r->mem_used > r->mem_limit - charge)
		return -WIRE_DROP_NO_MEMORY;
	/* past its first max_message, a peer leaves the reserve to others */
	if (after > r->one && r->mem_used + charge > r->mem_limit - r->reserve)
		return -WIRE_DROP_SHARE;
	return 0;
}

/* Put p, already in the hash table, on the age list and g's list. */
static void part_link(struct wire_reasm *r, struct wpeer *g, struct partial *p,
		      uint64_t now_ms)
{
	/* Keep the age list sorted even if the caller's clock steps back. */
	p->first_ms = now_ms;
	if (r->newest && r->newest->first_ms > now_ms)
		p->first_ms = r->newest->first_ms;
	p->prev = r->newest;
	if (r->newest)
		r->newest->next = p;
	else
		r->oldest = p;
	r->newest = p;
	p->owner = g;
	p->pnext = g->parts;
	if (g->parts)
		g->parts->pprev = p;
	g->parts = p;
	if (!g->nparts++)
		r->active++;
	g->used += p->charge;
	r->mem_used += p->charge;
	r->last = p;
}

/*
 * Start a partial message for a fragment seen first, wherever it lies in
 * the message, if its peer's share and the table's budget have room for
 * its real cost: 0, or -WIRE_DROP_*.
 */
static int part_new(struct wire_reasm *r, int peer, const struct wire_hdr *h,
		    const struct msg_key *k, const char *chan, uint32_t room,
		    uint64_t now_ms, struct partial **out)
{
	size_t words = ((size_t)h->frag_cnt + 63) / 64;
	size_t charge = part_cost(h->total_len, h->frag_cnt);
	struct wpeer *g = wpeer_get(r, peer);
	struct partial *p;
	int rc;

	if (!g)
		return -WIRE_DROP_NO_MEMORY;
	rc = part_admit(r, g, charge);
	if (rc)
		return rc;
	p = calloc(1, sizeof(*p) + words * sizeof(uint64_t));
	if (!p)
		return -WIRE_DROP_NO_MEMORY;
	p->buf = malloc(h->total_len ? h->total_len : 1);
	if (!p->buf) {
		free(p);
		return -WIRE_DROP_NO_MEMORY;
	}
	p->key = *k;
	p->hn.hash = part_hash(r, peer, k);
	p->total_len = h->total_len;
	p->room = room;
	p->frag_cnt = h->frag_cnt;
	p->chan_len = h->chan_len;
	memcpy(p->chan, chan, h->chan_len);
	p->charge = charge;
	if (htab_insert(&r->parts, &p->hn)) {
		free(p->buf);
		free(p);
		return -WIRE_DROP_NO_MEMORY;
	}
	part_link(r, g, p, now_ms);
	*out = p;
	return 0;
}

/*
 * One datagram in, at most one message out.  Every check runs before any
 * byte is copied; a bad datagram never disturbs the partial it names.
 */
int wire_reasm_feed_hdr(struct wire_reasm *r, int peer,
			const struct wire_hdr *h, const void *dgram, size_t len,
			uint64_t now_ms, struct wire_msg *out)
{
	const uint8_t *d = dgram;
	const char *chan;
	const uint8_t *payload;
	struct msg_key k;
	struct partial *p;
	struct wpeer *g;
	size_t plen;
	uint32_t room, bit;
	int rc;

	if (h->type != WIRE_DATA)
		return -WIRE_DROP_MALFORMED;
	if (len - WIRE_HDR_LEN < h->chan_len)
		return -WIRE_DROP_MALFORMED;
	chan = (const char *)d + WIRE_HDR_LEN;
	payload = d + WIRE_HDR_LEN + h->chan_len;
	plen = len - WIRE_HDR_LEN - h->chan_len;
	if (h->total_len > r->max_message)
		return -WIRE_DROP_TOO_BIG;
	if (frag_geometry(h, plen, &room))
		return -WIRE_DROP_MALFORMED;

	k.src = h->src;
	k.msg_id = h->msg_id;
	k.mcast = !!(h->flags & WIRE_FLAG_MCAST);
	p = part_find(r, peer, &k);
	if (p) {
		if (h->frag_cnt != p->frag_cnt ||
		    h->total_len != p->total_len || room != p->room ||
		    h->chan_len != p->chan_len ||
		    memcmp(chan, p->chan, h->chan_len))
			return -WIRE_DROP_MALFORMED;
	} else {
		if (chan_ok(chan, h->chan_len))
			return -WIRE_DROP_MALFORMED;
		g = wpeer_find(r, peer);
		if (ring_has(g, &k))
			return -WIRE_DROP_DUPLICATE;
		if (h->frag_cnt == 1) {
			/* Whole already: no table, one copy. */
			rc = msg_whole(out, peer, h, chan, payload, plen);
			if (rc == 1)
				ring_add(r, g, peer, &k);
			return rc;
		}
		rc = part_new(r, peer, h, &k, chan, room, now_ms, &p);
		if (rc)
			return rc;
	}

	bit = h->frag_idx;
	if (p->bits[bit / 64] & (1ull << (bit % 64)))
		return -WIRE_DROP_DUPLICATE;
	p->bits[bit / 64] |= 1ull << (bit % 64);
	/* idx * room <= (frag_cnt - 1) * room < total_len, checked above */
	memcpy(p->buf + (size_t)bit * p->room, payload, plen);
	if (++p->nrecv < p->frag_cnt)
		return 0;

	part_unlink(r, p);
	ring_add(r, p->owner, peer, &p->key);
	msg_fill(out, peer, p->key.msg_id, p->chan, p->chan_len, p->buf,
		 p->total_len);
	free(p);
	return 1;
}

/* wire_reasm_feed_hdr of a datagram whose header is decoded here. */
int wire_reasm_feed(struct wire_reasm *r, int peer, const void *dgram,
		    size_t len, uint64_t now_ms, struct wire_msg *out)
{
	struct wire_hdr h;

	if (wire_hdr_decode(&h, dgram, len))
		return -WIRE_DROP_MALFORMED;
	return wire_reasm_feed_hdr(r, peer, &h, dgram, len, now_ms, out);
}

/* Take the next fragment of a reliable stream, which comes in order. */
int wire_seq_feed(struct wire_seq *s, size_t max_message, int peer,
		  const void *dgram, size_t len, struct wire_msg *out)
{
	const uint8_t *d = dgram;
	const uint8_t *payload;
	const char *chan;
	struct wire_hdr h;
	uint32_t room;
	size_t plen;

	if (wire_hdr_decode(&h, dgram, len) || h.type != WIRE_DATA ||
	    len - WIRE_HDR_LEN < h.chan_len)
		goto bad;
	chan = (const char *)d + WIRE_HDR_LEN;
	payload = d + WIRE_HDR_LEN + h.chan_len;
	plen = len - WIRE_HDR_LEN - h.chan_len;
	if (h.total_len > max_message) {
		wire_seq_reset(s);
		return -WIRE_DROP_TOO_BIG;
	}
	if (frag_geometry(&h, plen, &room) || chan_ok(chan, h.chan_len))
		goto bad;
	if (h.frag_idx == 0) {
		if (s->buf)
			goto bad; /* the last one never finished */
		if (h.frag_cnt == 1)
			return msg_whole(out, peer, &h, chan, payload, plen);
		s->buf = malloc(h.total_len);
		if (!s->buf)
			return -WIRE_DROP_NO_MEMORY;
		s->msg_id = h.msg_id;
		s->frag_cnt = h.frag_cnt;
		s->room = room;
		s->total_len = h.total_len;
		s->chan_len = h.chan_len;
		memcpy(s->chan, chan, h.chan_len);
		s->next = 0;
	} else if (!s->buf || h.msg_id != s->msg_id || h.frag_idx != s->next ||
		   h.frag_cnt != s->frag_cnt || h.total_len != s->total_len ||
		   room != s->room || h.chan_len != s->chan_len ||
		   memcmp(chan, s->chan, h.chan_len)) {
		goto bad;
	}
	/* idx * room <= (frag_cnt - 1) * room < total_len: frag_geometry */
	memcpy(s->buf + (size_t)h.frag_idx * room, payload, plen);
	if (++s->next < s->frag_cnt)
		return 0;
	msg_fill(out, peer, s->msg_id, s->chan, s->chan_len, s->buf,
		 s->total_len);
	s->buf = NULL;
	return 1;
bad:
	wire_seq_reset(s);
	return -WIRE_DROP_MALFORMED;
}

/* Free the partial message: its stream ended or broke. */
void wire_seq_reset(struct wire_seq *s)
{
	free(s->buf);
	s->buf = NULL;
}

/* Whether p has waited its whole timeout at now_ms. */
static bool part_due(const struct wire_reasm *r, const struct partial *p,
		     uint64_t now_ms)
{
	return now_ms >= p->first_ms && now_ms - p->first_ms >= r->timeout_ms;
}

/* Free memory held by messages that lost a fragment; oldest go first. */
unsigned wire_reasm_expire(struct wire_reasm *r, uint64_t now_ms)
{
	return wire_reasm_expire_each(r, now_ms, NULL, NULL);
}

/*
 * Expire one slice, telling fn which peer each dropped message came
 * from: at most WIRE_REASM_EXPIRE_SLICE, so the caller's lock is held a
 * bounded time; next_timeout says 0 while more are due.
 */
unsigned wire_reasm_expire_each(struct wire_reasm *r, uint64_t now_ms,
				void (*fn)(void *arg, int peer), void *arg)
{
	unsigned n = 0;

	while (n < WIRE_REASM_EXPIRE_SLICE && r->oldest &&
	       part_due(r, r->oldest, now_ms)) {
		if (fn)
			fn(arg, r->oldest->owner->peer);
		part_destroy(r, r->oldest);
		n++;
	}
	return n;
}

/* A restarted or lost peer will never finish what it started: its
 * partials go (at most WIRE_REASM_PEER_PARTS), and its entry. */
unsigned wire_reasm_forget_peer(struct wire_reasm *r, int peer)
{
	struct wpeer *g = wpeer_find(r, peer);
	unsigned n = 0;

	if (!g)
		return 0;
	while (g->parts) {
		part_destroy(r, g->parts);
		n++;
	}
	htab_remove(&r->peers, &g->hn);
	free(g);
	return n;
}

/* How many messages are waiting for fragments. */
unsigned wire_reasm_pending(const struct wire_reasm *r)
{
	return (unsigned)r->parts.count;
}

/* The real memory they hold, as charged against mem_limit. */
size_t wire_reasm_mem(const struct wire_reasm *r)
{
	return r->mem_used;
}

/* When the progress loop must next call wire_reasm_expire. */
int wire_reasm_next_timeout(const struct wire_reasm *r, uint64_t now_ms)
{
	const struct partial *p = r->oldest;
	uint64_t due;

	if (!p)
		return -1;
	due = p->first_ms + r->timeout_ms;
	if (part_due(r, p, now_ms))
		return 0;
	if (now_ms >= due) /* only when first_ms + timeout wrapped */
		return INT_MAX;
	return due - now_ms > INT_MAX ? INT_MAX : (int)(due - now_ms);
}
