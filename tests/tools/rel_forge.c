/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rel_forge - print, in hex, one reliable DATA datagram as the ibfs node
 * named SRC would send it: header, channel CHAN, the message MSG (one
 * fragment), then the reliable trailer for session SESS at psn PSN.
 * tests/e2e/t_54_reliable_forged.sh wraps it in a crafted RoCE v2 packet, to
 * play an attacker who forges a peer's datagram.
 *
 *   rel_forge SRC CHAN MSG SESS PSN
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int main(int argc, char **argv)
{
	uint8_t dg[512];
	struct wire_rel w;
	size_t len, i;

	if (argc != 6 || strlen(argv[3]) > 256) {
		fprintf(stderr, "usage: rel_forge SRC CHAN MSG SESS PSN\n");
		return 2;
	}
	len = wire_frag_build(dg, sizeof(dg) - WIRE_REL_LEN,
			      wire_node_id(argv[1]), 0x7fff0000u, argv[2],
			      argv[3], strlen(argv[3]), 0);
	if (!len) {
		fprintf(stderr, "rel_forge: cannot build that datagram\n");
		return 1;
	}
	memset(&w, 0, sizeof(w));
	w.sess = (uint32_t)strtoul(argv[4], NULL, 0);
	w.psn = (uint32_t)strtoul(argv[5], NULL, 0);
	len = wire_rel_put(dg, len, &w);
	for (i = 0; i < len; i++)
		printf("%02x", dg[i]);
	printf("\n");
	return 0;
}
