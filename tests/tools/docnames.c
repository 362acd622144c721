/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * docnames: the names a user meets, as the code defines them, for
 * scripts/lint-docs.sh to look up in the man pages and README.
 *
 *   docnames
 *
 * Prints one "KIND NAME" line per name: "gkey" for every [global] key and
 * "nkey" for every [node NAME] key (config_keys.c's tables), "counter"
 * for every .status counter and gauge (peer.h's X lists, the drops as
 * drop_NAME).  Taken from the tables themselves, so that a name added
 * there is a name the docs lint asks for.
 */
#include <stdio.h>

#include "config_parse.h"
#include "peer.h"

/* One counter of peer.h's X lists. */
#define DOC_COUNTER(name, comment) printf("counter %s\n", #name);

int main(void)
{
	int i;

	for (i = 0; i < GK_MAX; i++)
		printf("gkey %s\n", config_gkeys[i].name);
	for (i = 0; i < NK_MAX; i++)
		printf("nkey %s\n", config_nkeys[i].name);
	PEER_COUNTERS_TRAFFIC(DOC_COUNTER)
	for (i = 0; i < DROP_MAX; i++)
		printf("counter drop_%s\n", peer_drop_names[i]);
	PEER_COUNTERS_REL(DOC_COUNTER)
	PEER_GAUGES_STREAM(DOC_COUNTER)
	return 0;
}
