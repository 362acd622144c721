/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_bw - stream messages into a file and count them out at the other
 * end, checked byte for byte: the bandwidth and message-rate benchmarks
 * of scripts/bench/bench.sh.
 *
 *   bench_bw send [-s SIZE] [-n COUNT] [-d SECONDS] PATH
 *   bench_bw recv [-L] [-s SIZE] [-n COUNT] [-i IDLE_MS] [-T START_S] PATH
 *
 * send writes SIZE-byte messages to PATH, one write(2) each, as fast as
 * write returns, until COUNT were written or SECONDS passed; it prints
 *   send: n=N bytes=B secs=S msgs_per_s=R MBps=M
 * (MB = 2^20 bytes, as perftest counts).  Pointed at a null FUSE file
 * system this is the FUSE write floor.
 *
 * recv keeps PATH open O_NONBLOCK, waits in poll(2) and reads until the
 * queue is empty (EAGAIN, or ibfs's EOF for "empty after data"), again
 * and again, until COUNT messages came or none came for IDLE_MS (or none
 * at all for START_S).  It prints
 *   recv: n=OK bad=BAD bytes=B secs=S msgs_per_s=R MBps=M max_seq=Q all=A
 * where secs runs from the sender's start (its CLOCK_MONOTONIC, carried
 * in every message: both ends share one clock) to the end of the read
 * batch that held the last good message.  -L: the sender runs on another
 * machine (another clock): secs runs from the batch that held the first
 * good message instead, and that batch's messages are left out of n,
 * bytes and the rates (all= counts every intact message).
 *
 * Every message starts with a 24-byte header (magic, number, size, the
 * sender's start time); the rest is a window of a fixed pseudo-random
 * pattern at an offset set by the number, so a lost, torn, merged or
 * misordered byte shows.  Buffers are page-aligned and reads ask for at
 * most 1 MiB: FUSE splits a direct I/O request that spans more than 256
 * pages, and two requests would be two messages.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BW_MAGIC  0x424e4348u /* "BNCH" */
#define BW_HDR	  24
#define BW_PAT	  (1u << 20) /* pattern period, also the largest size */
#define BW_STRIDE 4099u	     /* pattern offset step per message */
#define BW_MB	  1048576.0

struct bw_hdr {
	uint32_t magic;
	uint32_t seq;
	uint32_t size;
	uint32_t pad;
	uint64_t t0_ns;
};

/* Two periods of the pattern, so any window is one contiguous span. */
static uint8_t *pat2;

/* Monotonic nanoseconds. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Coarse monotonic nanoseconds, for loop deadlines: vDSO-only whatever the
 * clocksource (the bed VM's HPET makes every precise read a trapped MMIO
 * access, which would be charged to each message).
 */
static uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Fill pat2 from a fixed xorshift64 seed (same on both ends). */
static void pattern_init(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t i;

	pat2 = malloc(2 * BW_PAT);
	if (!pat2) {
		fprintf(stderr, "bench_bw: out of memory\n");
		exit(1);
	}
	for (i = 0; i < BW_PAT; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(pat2 + i, &x, 8);
	}
	memcpy(pat2 + BW_PAT, pat2, BW_PAT);
}

/* Where message seq's payload window starts in pat2. */
static const uint8_t *pattern_at(uint32_t seq)
{
	return pat2 + (size_t)((uint64_t)seq * BW_STRIDE % BW_PAT);
}

/* A page-aligned buffer of len bytes, or exit. */
static char *alloc_aligned(size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 1)) {
		fprintf(stderr, "bench_bw: out of memory\n");
		exit(1);
	}
	memset(p, 0, len);
	return p;
}

/* Writer side: stream messages; returns the exit status. */
static int bw_send(const char *path, size_t size, unsigned long count,
		   double secs)
{
	struct bw_hdr h = {.magic = BW_MAGIC, .size = (uint32_t)size};
	uint64_t end, t;
	unsigned long n = 0;
	char *buf = alloc_aligned(size);
	int fd = open(path, O_WRONLY | O_CREAT, 0600);

	if (fd < 0) {
		fprintf(stderr, "bench_bw: open %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	h.t0_ns = now_ns();
	end = secs > 0 ? coarse_ns() + (uint64_t)(secs * 1e9) : 0;
	for (t = 0; (!count || n < count) && (!end || t < end);
	     t = end ? coarse_ns() : 0) {
		h.seq = (uint32_t)n;
		memcpy(buf, &h, sizeof(h));
		memcpy(buf + BW_HDR, pattern_at(h.seq), size - BW_HDR);
		if (write(fd, buf, size) != (ssize_t)size) {
			fprintf(stderr,
				"bench_bw: write %s (message %lu): "
				"%s\n",
				path, n, strerror(errno));
			return 1;
		}
		n++;
	}
	t = now_ns();
	printf("send: n=%lu bytes=%llu secs=%.3f msgs_per_s=%.1f MBps=%.3f\n",
	       n, (unsigned long long)n * size, (t - h.t0_ns) / 1e9,
	       n / ((t - h.t0_ns) / 1e9),
	       n * (double)size / BW_MB / ((t - h.t0_ns) / 1e9));
	close(fd);
	return 0;
}

/* Whether the got bytes read are an intact message; sets *h. */
static int bw_check(const char *buf, ssize_t got, size_t size, struct bw_hdr *h)
{
	if (got < BW_HDR)
		return 0;
	memcpy(h, buf, sizeof(*h));
	if (h->magic != BW_MAGIC || h->size != size || (size_t)got != size)
		return 0;
	return !memcmp(buf + BW_HDR, pattern_at(h->seq), size - BW_HDR);
}

/* Reader side: count intact messages; returns the exit status. */
static int bw_recv(const char *path, size_t size, unsigned long count,
		   int idle_ms, int start_s, int local)
{
	unsigned long ok = 0, bad = 0, batch, first = 0;
	uint64_t t0 = 0, tlast = 0, started = now_ns();
	uint32_t max_seq = 0;
	struct pollfd pfd;
	struct bw_hdr h;
	char *buf = alloc_aligned(size);
	double secs;

	pfd.fd = open(path, O_RDONLY | O_NONBLOCK | O_CREAT, 0600);
	pfd.events = POLLIN;
	if (pfd.fd < 0) {
		fprintf(stderr, "bench_bw: open %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	while (!count || ok + bad < count) {
		int wait = ok + bad ? idle_ms : start_s * 1000;
		int pr = poll(&pfd, 1, wait);
		ssize_t got;

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0) {
			perror("bench_bw: poll");
			return 1;
		}
		if (!pr)
			break;
		/* Drain: every read(2) is one message, 0/EAGAIN is empty. */
		batch = 0;
		while (!count || ok + bad < count) {
			got = read(pfd.fd, buf, size);
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0 && errno == EAGAIN)
				break;
			if (got < 0) {
				perror("bench_bw: read");
				return 1;
			}
			if (!got)
				break;
			if (!bw_check(buf, got, size, &h)) {
				bad++;
				continue;
			}
			ok++;
			batch++;
			if (!t0 || h.t0_ns < t0)
				t0 = h.t0_ns;
			if (h.seq > max_seq)
				max_seq = h.seq;
		}
		/* One precise clock read per batch: its last one's time. */
		if (batch)
			tlast = now_ns();
		if (batch && local && !first) {
			first = batch; /* -L: the clock starts now */
			t0 = tlast;
		}
		if (!ok && !bad && now_ns() - started > start_s * 1000000000ull)
			break;
	}
	secs = ok ? (tlast - t0) / 1e9 : 0;
	ok -= first; /* -L: messages before the clock started */
	printf("recv: n=%lu bad=%lu bytes=%llu secs=%.3f msgs_per_s=%.1f "
	       "MBps=%.3f max_seq=%u all=%lu\n",
	       ok, bad, (unsigned long long)ok * size, secs,
	       secs > 0 ? ok / secs : 0.0,
	       secs > 0 ? ok * (double)size / BW_MB / secs : 0.0, max_seq,
	       ok + first);
	close(pfd.fd);
	return ok ? 0 : 1;
}

/* Usage to stderr, exit 2. */
static void usage(void)
{
	fprintf(stderr,
		"usage: bench_bw send [-s SIZE] [-n COUNT] [-d SECONDS] PATH\n"
		"       bench_bw recv [-L] [-s SIZE] [-n COUNT] [-i IDLE_MS] "
		"[-T START_S] PATH\n");
	exit(2);
}

/* Parse the role and options, then send or receive. */
int main(int argc, char *argv[])
{
	unsigned long count = 0;
	size_t size = 65536;
	int idle_ms = 3000, start_s = 60, opt, sender, local = 0;
	double secs = 0;

	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "send"))
		sender = 1;
	else if (!strcmp(argv[1], "recv"))
		sender = 0;
	else
		usage();
	argv++;
	argc--;
	while ((opt = getopt(argc, argv, "Ls:n:d:i:T:")) != -1) {
		switch (opt) {
		case 'L':
			local = 1;
			break;
		case 's':
			size = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			secs = atof(optarg);
			break;
		case 'i':
			idle_ms = atoi(optarg);
			break;
		case 'T':
			start_s = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 1 || size < BW_HDR || size > BW_PAT ||
	    idle_ms <= 0 || start_s <= 0 || (sender && !count && secs <= 0))
		usage();
	pattern_init();
	if (sender)
		return bw_send(argv[optind], size, count, secs);
	return bw_recv(argv[optind], size, count, idle_ms, start_s, local);
}
