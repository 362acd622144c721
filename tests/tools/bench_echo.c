/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_echo - the peer half of bench_rtt: every message read from RX is
 * written back, unchanged, to TX.  Used by scripts/bench/bench.sh.
 *
 *   bench_echo [-c] [-n COUNT] [-t IDLE_S] [-s MAXSIZE] RX TX
 *
 * Both files stay open for the whole run.  RX is O_NONBLOCK and the echo
 * waits in poll(2): on ibfs a read on an open file returns EOF once its
 * queue is empty after it returned data, so a long-lived reader must not
 * block in read (see bench_rtt).  After each message it goes back to
 * poll, which answers at once while more are queued.  Stops after COUNT
 * messages, after IDLE_S seconds without one (default 60), or on
 * SIGTERM/SIGINT; prints "echo: n=N" and exits 0 unless a call failed.
 * -c: a conversation (bench_rtt -m conv): RX and TX name one file, opened
 * O_RDWR; every read waits for the next message, and the answer is
 * written on the same descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

/* SIGTERM/SIGINT: finish the current message and report. */
static void on_signal(int sig)
{
	stop = 1;
}

/* Open path with flags (creating a channel if needed) or exit. */
static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags | O_CREAT, 0600);

	if (fd < 0) {
		fprintf(stderr, "bench_echo: open %s: %s\n", path,
			strerror(errno));
		exit(1);
	}
	return fd;
}

/* SIGALRM: end a waiting read (idle limit in -c mode). */
static void on_alarm(int sig)
{
	stop = 2;
}

/* -c: blocking read, write back on the same fd; returns the exit code. */
static int echo_conv(int fd, char *buf, size_t maxsize, unsigned long count,
		     int idle_s, unsigned long *n)
{
	ssize_t got;

	while (!stop && (!count || *n < count)) {
		alarm(idle_s);
		got = read(fd, buf, maxsize);
		alarm(0);
		if (got < 0 && errno == EINTR) {
			if (stop == 2)
				fprintf(stderr, "bench_echo: idle for %d s\n",
					idle_s);
			continue;
		}
		if (got <= 0) {
			perror("bench_echo: read");
			return 1;
		}
		if (write(fd, buf, got) != got) {
			perror("bench_echo: write");
			return 1;
		}
		(*n)++;
	}
	return 0;
}

/* Usage to stderr, exit 2. */
static void usage(void)
{
	fprintf(stderr, "usage: bench_echo [-c] [-n COUNT] [-t IDLE_S] "
			"[-s MAXSIZE] RX TX\n");
	exit(2);
}

/*
 * Poll mode: RX non-blocking, waited on in poll(2), every message written
 * to TX; returns the exit code.
 */
static int echo_poll(const char *rx_path, const char *tx_path, char *buf,
		     size_t maxsize, unsigned long count, int idle_s,
		     unsigned long *n)
{
	unsigned long empty = 0;
	struct pollfd pfd;
	ssize_t got;
	int tx;

	pfd.fd = open_or_die(rx_path, O_RDONLY | O_NONBLOCK);
	pfd.events = POLLIN;
	tx = open_or_die(tx_path, O_WRONLY);
	while (!stop && (!count || *n < count)) {
		int pr = poll(&pfd, 1, idle_s * 1000);

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0) {
			perror("bench_echo: poll");
			return 1;
		}
		if (!pr) {
			fprintf(stderr, "bench_echo: idle for %d s\n", idle_s);
			return 0;
		}
		got = read(pfd.fd, buf, maxsize);
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (got < 0) {
			perror("bench_echo: read");
			return 1;
		}
		if (!got) {
			/* Readable, yet empty again and again: it is gone. */
			if (++empty > 1000) {
				fprintf(stderr,
					"bench_echo: %s keeps "
					"reading EOF\n",
					rx_path);
				return 1;
			}
			continue;
		}
		empty = 0;
		if (write(tx, buf, got) != got) {
			perror("bench_echo: write");
			return 1;
		}
		(*n)++;
	}
	return 0;
}

/* Parse arguments and echo until told to stop. */
int main(int argc, char *argv[])
{
	struct sigaction sa = {.sa_handler = on_signal};
	unsigned long count = 0, n = 0;
	size_t maxsize = 65536;
	int idle_s = 60, opt, rc = 0, conv = 0;
	char *buf;

	while ((opt = getopt(argc, argv, "cn:t:s:")) != -1) {
		switch (opt) {
		case 'c':
			conv = 1;
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 't':
			idle_s = atoi(optarg);
			break;
		case 's':
			maxsize = strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 2 || idle_s <= 0 || !maxsize)
		usage();
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	buf = malloc(maxsize);
	if (!buf)
		return 1;
	if (conv) {
		struct sigaction al = {.sa_handler = on_alarm};

		if (strcmp(argv[optind], argv[optind + 1]))
			usage(); /* one file, both ways */
		sigaction(SIGALRM, &al, NULL);
		rc = echo_conv(open_or_die(argv[optind], O_RDWR), buf, maxsize,
			       count, idle_s, &n);
	} else {
		rc = echo_poll(argv[optind], argv[optind + 1], buf, maxsize,
			       count, idle_s, &n);
	}
	printf("echo: n=%lu\n", n);
	return rc;
}
