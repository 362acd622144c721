#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# t_13 with route = gid: the new QPN is taken from the new hello.
# timeout: 240
ROUTE=gid exec bash "$(dirname "$0")/t_13_transport_restart.sh"
