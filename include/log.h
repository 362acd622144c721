/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging in the manner of OpenSMTPD's log.c: stderr in the foreground,
 * syslog once daemonised.  log_warn appends strerror(errno); the x forms
 * do not.  fatal/fatalx log and exit(1).
 */
#ifndef IBFS_LOG_H
#define IBFS_LOG_H

#include <stdarg.h>

/* Choose the destination and verbosity; ident names the syslog stream. */
void log_init(const char *ident, int foreground, int debug);
/* Change verbosity after start-up (e.g. -d after config). */
void log_setverbose(int debug);
int log_getverbose(void);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * A rate limit for lines a stranger can cause, one per cause: at most
 * LOG_RL_BURST lines each LOG_RL_PERIOD_MS, then one line saying how many
 * were left out once the next period starts.  Zero-initialised; any thread.
 */
#define LOG_RL_BURST	 5
#define LOG_RL_PERIOD_MS 10000
struct log_rl {
	unsigned long long start_ms; /* this period's start */
	unsigned int n;		     /* lines in this period */
	unsigned long dropped;	     /* lines left out in this period */
};
#define LOG_RL_INIT                                                            \
	{                                                                      \
		0, 0, 0                                                        \
	}
void log_rl_warnx(struct log_rl *rl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_rl_info(struct log_rl *rl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

#endif
