#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# t_10 with route = gid: the AH comes from the LID/GID in the hello.
# timeout: 240
ROUTE=gid exec bash "$(dirname "$0")/t_10_transport_pair.sh"
