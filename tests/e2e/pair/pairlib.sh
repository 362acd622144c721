# SPDX-License-Identifier: BSD-2-Clause
# Helpers for two-VM e2e tests (tests/e2e/pair/t_*.sh): lib.sh, fslib.sh and
# scripts/lib/pair.sh (SELF PEER, pair_start, pair_sync, pair_put,
# pair_get, wire_loss; see it).
# shellcheck shell=bash

# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=tests/e2e/fslib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../fslib.sh"
# shellcheck source=scripts/lib/pair.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/lib/pair.sh"
