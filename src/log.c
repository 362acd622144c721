/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging: one sink chosen at start-up.  In the foreground every line goes
 * to stderr, so users of `ibfs -f` and the tests see it; otherwise syslog.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <pthread.h>
#include <time.h>

#include "log.h"

static int log_fg = 1;
static int log_verbose;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

/* Pick stderr or syslog; debug enables log_debug output. */
void log_init(const char *ident, int foreground, int debug)
{
	log_fg = foreground;
	log_verbose = debug;
	if (!foreground)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

/* Raise or lower verbosity at run time. */
void log_setverbose(int debug)
{
	log_verbose = debug;
}

/* Current verbosity, so callers can skip building costly debug lines. */
int log_getverbose(void)
{
	return log_verbose;
}

/*
 * A line is one line: a control byte that a peer's name or a path smuggled
 * in (a newline that would forge a second line) is shown as '?'.
 */
static void log_defang(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

/* Emit one line at priority pri; err >= 0 appends strerror(err). */
static void log_vemit(int pri, int err, const char *fmt, va_list ap)
{
	char buf[1024];
	int n;

	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		return;
	if (err >= 0 && (size_t)n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, ": %s", strerror(err));
	log_defang(buf);
	if (log_fg) {
		/* One write per line keeps threads' lines whole. */
		pthread_mutex_lock(&log_lock);
		fprintf(stderr, "ibfs: %s\n", buf);
		fflush(stderr);
		pthread_mutex_unlock(&log_lock);
	} else {
		syslog(pri, "%s", buf);
	}
}

#define LOG_BODY(pri, err)                                                     \
	do {                                                                   \
		va_list ap;                                                    \
		va_start(ap, fmt);                                             \
		log_vemit(pri, err, fmt, ap);                                  \
		va_end(ap);                                                    \
	} while (0)

/* Warning with the current errno's text. */
void log_warn(const char *fmt, ...)
{
	int saved = errno;

	LOG_BODY(LOG_ERR, saved);
	errno = saved;
}

/* Warning without errno. */
void log_warnx(const char *fmt, ...)
{
	LOG_BODY(LOG_ERR, -1);
}

/* Informational line. */
void log_info(const char *fmt, ...)
{
	LOG_BODY(LOG_INFO, -1);
}

/* Debug line, only with -d. */
void log_debug(const char *fmt, ...)
{
	if (!log_verbose)
		return;
	LOG_BODY(LOG_DEBUG, -1);
}

/* Log with errno and exit. */
void fatal(const char *fmt, ...)
{
	int saved = errno;

	LOG_BODY(LOG_CRIT, saved);
	exit(1);
}

/* Log and exit. */
void fatalx(const char *fmt, ...)
{
	LOG_BODY(LOG_CRIT, -1);
	exit(1);
}

/* One line at priority pri, without errno. */
static void log_emitf(int pri, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void log_emitf(int pri, const char *fmt, ...)
{
	LOG_BODY(pri, -1);
}

/* Milliseconds on the monotonic clock. */
static unsigned long long log_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Whether rl lets one more line through now; when a period with lines
 * left out has ended, says so first (at priority pri).
 */
static int log_rl_pass(struct log_rl *rl, int pri)
{
	unsigned long long now = log_now_ms();
	unsigned long dropped = 0;
	int pass;

	pthread_mutex_lock(&log_lock);
	if (now - rl->start_ms >= LOG_RL_PERIOD_MS) {
		dropped = rl->dropped;
		rl->start_ms = now;
		rl->n = 0;
		rl->dropped = 0;
	}
	pass = rl->n < LOG_RL_BURST;
	if (pass)
		rl->n++;
	else
		rl->dropped++;
	pthread_mutex_unlock(&log_lock);
	if (dropped)
		log_emitf(pri,
			  "(%lu more lines like the next one were left "
			  "out in %d s)",
			  dropped, LOG_RL_PERIOD_MS / 1000);
	return pass;
}

/* log_warnx within rl's limit. */
void log_rl_warnx(struct log_rl *rl, const char *fmt, ...)
{
	if (log_rl_pass(rl, LOG_ERR))
		LOG_BODY(LOG_ERR, -1);
}

/* log_info within rl's limit. */
void log_rl_info(struct log_rl *rl, const char *fmt, ...)
{
	if (log_rl_pass(rl, LOG_INFO))
		LOG_BODY(LOG_INFO, -1);
}
