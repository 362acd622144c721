/* SPDX-License-Identifier: BSD-2-Clause */
/* The shared rules of util.h that are not inline. */
#include <stdio.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "util.h"

/* Print a GID the way ibv_devinfo does, as an IPv6 address. */
const char *util_gid_str(const union ibv_gid *gid, char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid->raw, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/*
 * The name rule, on len bytes that need no NUL.  One pass by hand: this
 * runs for every message sent and every first fragment received, and a
 * name is a few bytes, where glibc's string calls cost more to enter than
 * to run.
 */
const char *util_name_problem_n(const char *name, size_t len)
{
	size_t i;

	if (!name || !len)
		return "is empty";
	if (len > UTIL_NAME_MAX)
		return "is longer than 63 bytes";
	if (*name == '.')
		return "starts with '.'";
	for (i = 0; i < len; i++) {
		if (name[i] == '/')
			return "contains '/'";
		if (!name[i])
			return "contains a NUL byte";
	}
	return NULL;
}

/* The name rule on a C string. */
const char *util_name_problem(const char *name)
{
	size_t n;

	if (!name || !*name)
		return "is empty";
	for (n = 0; name[n] && n <= UTIL_NAME_MAX; n++)
		;
	return util_name_problem_n(name, n);
}

/* A valid name's length, in one pass; 0 otherwise. */
size_t util_name_len(const char *name)
{
	size_t n;

	if (!name || *name == '.')
		return 0;
	for (n = 0; name[n]; n++)
		if (name[n] == '/' || n == UTIL_NAME_MAX)
			return 0;
	return n;
}
