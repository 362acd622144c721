/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_rtt - round-trip latency through message files, the client half
 * (bench_echo on the peer is the other half).  Used by scripts/bench/bench.sh.
 *
 *   bench_rtt [-n ITERS] [-w WARMUP] [-s SIZE] [-t TIMEOUT_MS] [-m MODE]
 *             [-o FILE] TX RX
 *
 * Each iteration writes one numbered SIZE-byte message to TX (one
 * write(2) is one message) and waits for the echo with that number on
 * RX; the time from before the write to after the read is one sample.
 * WARMUP iterations go first and are not counted.
 *
 * MODE poll (default): TX and RX stay open for the whole run; RX is
 * O_NONBLOCK and the client waits in poll(2), then reads.  On an
 * O_RDONLY ibfs file the first read waits, but once a read returned data
 * an empty queue reads as EOF; poll works, and O_NONBLOCK makes "empty"
 * an EAGAIN (or that EOF) instead of a wait.
 * MODE reopen: what `cat` does, for comparison: open RX, one blocking
 * read (parked in the daemon until the message comes), close.
 * MODE conv: a conversation, as docs/recipes.md recommends for request and
 * answer: TX is opened O_RDWR and RX must name the same file; each iteration
 * writes, then reads the same descriptor, which waits (parked in the
 * daemon, answered straight from its receive path) and never reads as
 * EOF on an empty queue.  bench_echo -c is the peer half.
 * MODE floor-conv: the conv loop on a null FUSE file (write, then a read
 * it answers at once): the FUSE floor for conv.
 * MODE floor: no peer.  TX and RX name one file of a null FUSE file
 * system (nullfs); the loop is the same write, poll, read with nothing
 * behind it, so it measures what FUSE alone costs.  Contents unchecked.
 *
 * A reply that does not come within TIMEOUT_MS counts as lost (UD does
 * not retransmit) and the next iteration starts; late or stray replies
 * are skipped by their number.  Prints one line:
 *   rtt: mode=M n=N lost=L min_us=.. median_us=.. p99_us=.. mean_us=..
 *        max_us=..
 * -o appends every sample (us, one a line) to FILE, so that runs taken in
 * turns with another measurement can be pooled.  Exits 0 when at least
 * half of the ITERS samples were taken.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

enum rtt_mode {
	MODE_POLL,
	MODE_REOPEN,
	MODE_FLOOR,
	MODE_CONV,
	MODE_FLOOR_CONV
};

/* One run's files and buffers. */
struct rtt {
	enum rtt_mode mode;
	const char *tx_path, *rx_path;
	int tx, rx;
	size_t size;
	int timeout_ms;
	char *out, *in;
};

/* The command line beyond struct rtt. */
struct rtt_args {
	unsigned long iters, warmup;
	const char *mode; /* the -m word, for the summary */
	const char *dump; /* -o FILE, or NULL */
};

/* Monotonic nanoseconds. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* SIGALRM only interrupts a blocking read (reopen mode); nothing to do. */
static void on_alarm(int sig)
{
}

/* Open path with flags (creating a channel if needed) or exit. */
static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags | O_CREAT, 0600);

	if (fd < 0) {
		fprintf(stderr, "bench_rtt: open %s: %s\n", path,
			strerror(errno));
		exit(1);
	}
	return fd;
}

/* The sequence number at the head of a message. */
static uint32_t msg_seq(const char *buf)
{
	uint32_t v;

	memcpy(&v, buf, sizeof(v));
	return v;
}

/* Read one message in poll mode: 1 got it, 0 timed out, -1 error. */
static int wait_poll(struct rtt *r, uint32_t seq, uint64_t deadline)
{
	struct pollfd pfd = {.fd = r->rx, .events = POLLIN};
	ssize_t n;
	int left, rc;

	for (;;) {
		uint64_t now = now_ns();

		if (now >= deadline)
			return 0;
		left = (int)((deadline - now + 999999) / 1000000);
		rc = poll(&pfd, 1, left);
		if (rc < 0 && errno != EINTR)
			return -1;
		if (rc <= 0)
			continue;
		n = read(r->rx, r->in, r->size);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return -1;
		if (r->mode == MODE_FLOOR)
			return 1;
		/* 0 is ibfs's EOF for "empty after data": poll again. */
		if ((size_t)n >= sizeof(seq) && msg_seq(r->in) == seq)
			return 1;
	}
}

/* Read one message the way cat does: open, blocking read, close. */
static int wait_reopen(struct rtt *r, uint32_t seq, uint64_t deadline)
{
	struct itimerval it = {0};
	ssize_t n;
	int fd;

	for (;;) {
		uint64_t now = now_ns();

		if (now >= deadline)
			return 0;
		it.it_value.tv_sec = (deadline - now) / 1000000000u;
		it.it_value.tv_usec = (deadline - now) % 1000000000u / 1000;
		if (!it.it_value.tv_sec && !it.it_value.tv_usec)
			it.it_value.tv_usec = 1;
		fd = open_or_die(r->rx_path, O_RDONLY);
		setitimer(ITIMER_REAL, &it, NULL);
		n = read(fd, r->in, r->size);
		memset(&it, 0, sizeof(it));
		setitimer(ITIMER_REAL, &it, NULL);
		close(fd);
		if (n < 0 && errno != EINTR)
			return -1;
		if (n >= (ssize_t)sizeof(seq) && msg_seq(r->in) == seq)
			return 1;
	}
}

/* Arm (or with deadline 0, disarm) SIGALRM for a blocking read. */
static void arm_alarm(uint64_t deadline)
{
	struct itimerval it = {0};
	uint64_t now = now_ns();

	if (deadline) {
		uint64_t left = deadline > now ? deadline - now : 1000;

		it.it_value.tv_sec = left / 1000000000u;
		it.it_value.tv_usec = left % 1000000000u / 1000;
		if (!it.it_value.tv_sec && !it.it_value.tv_usec)
			it.it_value.tv_usec = 1;
	}
	setitimer(ITIMER_REAL, &it, NULL);
}

/* Read one message on the conversation fd: a read that waits. */
static int wait_conv(struct rtt *r, uint32_t seq, uint64_t deadline)
{
	ssize_t n;

	for (;;) {
		if (now_ns() >= deadline)
			return 0;
		if (r->mode == MODE_CONV)
			arm_alarm(deadline);
		n = read(r->tx, r->in, r->size);
		if (r->mode == MODE_CONV)
			arm_alarm(0);
		if (n < 0 && errno != EINTR)
			return -1;
		if (r->mode == MODE_FLOOR_CONV)
			return 1;
		if (n >= (ssize_t)sizeof(seq) && msg_seq(r->in) == seq)
			return 1;
	}
}

/* One round trip; returns its nanoseconds, 0 when lost, -1 on error. */
static int64_t round_trip(struct rtt *r, uint32_t seq)
{
	uint64_t t0;
	int rc;

	memcpy(r->out, &seq, sizeof(seq));
	t0 = now_ns();
	if (write(r->tx, r->out, r->size) != (ssize_t)r->size) {
		fprintf(stderr, "bench_rtt: write %s: %s\n", r->tx_path,
			strerror(errno));
		return -1;
	}
	if (r->mode == MODE_REOPEN)
		rc = wait_reopen(r, seq, t0 + r->timeout_ms * 1000000ull);
	else if (r->mode == MODE_CONV || r->mode == MODE_FLOOR_CONV)
		rc = wait_conv(r, seq, t0 + r->timeout_ms * 1000000ull);
	else
		rc = wait_poll(r, seq, t0 + r->timeout_ms * 1000000ull);
	if (rc < 0) {
		fprintf(stderr, "bench_rtt: read %s: %s\n", r->rx_path,
			strerror(errno));
		return -1;
	}
	return rc ? (int64_t)(now_ns() - t0) : 0;
}

/* qsort order for samples. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile (0..1) of n sorted samples, nearest rank, in us. */
static double quantile_us(const uint64_t *v, size_t n, double q)
{
	size_t k = (size_t)(q * n + 0.999999);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1] / 1000.0;
}

/* The median of n sorted samples in us. */
static double median_us(const uint64_t *v, size_t n)
{
	if (n % 2)
		return v[n / 2] / 1000.0;
	return (v[n / 2 - 1] + v[n / 2]) / 2000.0;
}

/* Append n samples to path, in us, one a line; -1 on error. */
static int dump_samples(const char *path, const uint64_t *v, size_t n)
{
	FILE *f = fopen(path, "a");
	size_t i;

	if (!f) {
		fprintf(stderr, "bench_rtt: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++)
		fprintf(f, "%.1f\n", v[i] / 1000.0);
	return fclose(f) ? -1 : 0;
}

/* Usage to stderr, exit 2. */
static void usage(void)
{
	fprintf(stderr,
		"usage: bench_rtt [-n ITERS] [-w WARMUP] [-s SIZE] "
		"[-t TIMEOUT_MS] [-m poll|reopen|floor|conv|floor-conv] "
		"[-o FILE] "
		"TX RX\n");
	exit(2);
}

/* The -m words, in the order usage lists them. */
static const struct {
	const char *name;
	enum rtt_mode mode;
} rtt_modes[] = {
	{"poll", MODE_POLL},
	{"reopen", MODE_REOPEN},
	{"floor", MODE_FLOOR},
	{"conv", MODE_CONV},
	{"floor-conv", MODE_FLOOR_CONV},
};

/* -m WORD: its mode, or usage. */
static enum rtt_mode rtt_mode_of(const char *word)
{
	size_t i;

	for (i = 0; i < sizeof(rtt_modes) / sizeof(rtt_modes[0]); i++)
		if (!strcmp(word, rtt_modes[i].name))
			return rtt_modes[i].mode;
	usage();
	return MODE_POLL; /* not reached */
}

/* Parse the command line into r and a; usage on anything bad. */
static void rtt_options(struct rtt *r, struct rtt_args *a, int argc,
			char *argv[])
{
	int opt;

	while ((opt = getopt(argc, argv, "n:w:s:t:m:o:")) != -1) {
		switch (opt) {
		case 'n':
			a->iters = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			a->warmup = strtoul(optarg, NULL, 0);
			break;
		case 's':
			r->size = strtoul(optarg, NULL, 0);
			break;
		case 't':
			r->timeout_ms = atoi(optarg);
			break;
		case 'o':
			a->dump = optarg;
			break;
		case 'm':
			a->mode = optarg;
			r->mode = rtt_mode_of(optarg);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2 || !a->iters || r->size < sizeof(uint32_t) ||
	    r->timeout_ms <= 0)
		usage();
	r->tx_path = argv[optind];
	r->rx_path = argv[optind + 1];
}

/* Open TX and RX the way the mode uses them (or exit). */
static void rtt_open(struct rtt *r)
{
	if (r->mode == MODE_CONV || r->mode == MODE_FLOOR_CONV) {
		if (strcmp(r->tx_path, r->rx_path))
			usage(); /* one file, both ways */
		r->tx = open_or_die(r->tx_path, O_RDWR);
		r->rx = -1;
	} else {
		r->tx = open_or_die(r->tx_path, O_WRONLY);
		r->rx = r->mode == MODE_REOPEN
				? -1
				: open_or_die(r->rx_path,
					      O_RDONLY | O_NONBLOCK);
	}
}

/*
 * WARMUP round trips, then ITERS kept in v (lost ones counted in
 * *lost): how many were kept, or -1 on an error.
 */
static long rtt_loop(struct rtt *r, const struct rtt_args *a, uint64_t *v,
		     unsigned long *lost)
{
	unsigned long i;
	long n = 0;

	for (i = 0; i < a->warmup + a->iters; i++) {
		int64_t t = round_trip(r, (uint32_t)i + 1);

		if (t < 0)
			return -1;
		if (i < a->warmup)
			continue;
		if (!t) {
			(*lost)++;
			continue;
		}
		v[n++] = (uint64_t)t;
	}
	return n;
}

/* Parse arguments, run the loop, print the summary line. */
int main(int argc, char *argv[])
{
	struct rtt r = {.mode = MODE_POLL, .size = 64, .timeout_ms = 2000};
	struct rtt_args a = {.iters = 1000, .warmup = 100, .mode = "poll"};
	struct sigaction sa = {.sa_handler = on_alarm};
	unsigned long lost = 0, n, i;
	uint64_t *v, sum = 0;
	long kept;

	rtt_options(&r, &a, argc, argv);
	/* No SA_RESTART: the alarm must end a parked read with EINTR. */
	sigaction(SIGALRM, &sa, NULL);
	r.out = calloc(1, r.size);
	r.in = calloc(1, r.size);
	v = calloc(a.iters, sizeof(*v));
	if (!r.out || !r.in || !v) {
		fprintf(stderr, "bench_rtt: out of memory\n");
		return 1;
	}
	rtt_open(&r);
	kept = rtt_loop(&r, &a, v, &lost);
	if (kept < 0)
		return 1;
	n = (unsigned long)kept;
	if (!n) {
		printf("rtt: mode=%s n=0 lost=%lu\n", a.mode, lost);
		return 1;
	}
	for (i = 0; i < n; i++)
		sum += v[i];
	qsort(v, n, sizeof(*v), cmp_u64);
	if (a.dump && dump_samples(a.dump, v, n))
		return 1;
	printf("rtt: mode=%s n=%lu lost=%lu min_us=%.1f median_us=%.1f "
	       "p99_us=%.1f mean_us=%.1f max_us=%.1f\n",
	       a.mode, n, lost, v[0] / 1000.0, median_us(v, n),
	       quantile_us(v, n, 0.99), sum / 1000.0 / n, v[n - 1] / 1000.0);
	return n * 2 >= a.iters ? 0 : 1;
}
