/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the certificate tests share (test_cert.c, test_bootstrap_cert.c):
 * docs/certificates.md's CA and node certificates, made by
 * tests/unit/mkcerts.sh (which runs that page's commands) into a fresh
 * temp directory, dir, before a group of tests and removed after it.
 * Run from the repository's root, as make unit does.
 */
#ifndef IBFS_CERTS_HARNESS_H
#define IBFS_CERTS_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MKCERTS "tests/unit/mkcerts.sh"
#define DOC	"docs/certificates.md"

static char dir[32]; /* /tmp/ibfs_certs.XXXXXX */

static int certs_make(void **state)
{
	char cmd[256];

	(void)state;
	if (access(MKCERTS, X_OK) || access(DOC, R_OK)) {
		fprintf(stderr, "certificates: run from the repository root\n");
		return -1;
	}
	snprintf(dir, sizeof(dir), "/tmp/ibfs_certs.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(cmd, sizeof(cmd), "%s %s %s", MKCERTS, DOC, dir);
	return system(cmd) ? -1 : 0;
}

static int certs_remove(void **state)
{
	char cmd[64];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

#endif
