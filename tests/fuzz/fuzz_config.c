/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the config loader: whatever a config file holds,
 * config_load_string either accepts it or names file and line, and never
 * crashes or leaks.  An accepted config must satisfy its own invariants.
 *
 * Built and run by `make fuzz` (clang, -fsanitize=fuzzer,address,undefined).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "util.h"

/* Check what an accepted config promises to its users. */
static void fuzz_check(const struct config *cfg)
{
	int i;

	if (cfg->nnodes < 1 || !cfg->nodes)
		abort();
	if (cfg->max_message == 0 || cfg->queue_limit < cfg->max_message)
		abort();
	for (i = 0; i < cfg->nnodes; i++)
		if (util_name_problem(cfg->nodes[i].name) ||
		    cfg->nodes[i].bootstrap_port == 0)
			abort();
}

/* One input is one config file's text. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[CONFIG_ERR_MAX];
	struct config cfg;
	char *text;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	memset(&cfg, 0, sizeof(cfg));
	err[0] = '\0';
	if (config_load_string(text, "fuzz.conf", &cfg, err, sizeof(err)) ==
	    0) {
		fuzz_check(&cfg);
		config_select_local(&cfg, "alpha", err, sizeof(err));
	} else if (strncmp(err, "fuzz.conf:", 10) != 0) {
		abort(); /* every error names file and line */
	}
	config_free(&cfg);
	free(text);
	return 0;
}
