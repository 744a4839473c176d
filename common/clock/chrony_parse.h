/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `chronyc -c tracking`: its one CSV line, pure. The fields, in order:
 * reference ID (hex), reference name or address, stratum, reference
 * time (s since the epoch), system time offset (s: how far the system
 * clock is from the reference, as chronyc prints it), last offset, RMS
 * offset, frequency (ppm), residual frequency, skew, root delay (s),
 * root dispersion (s), update interval (s), leap status ("Normal",
 * "Insert second", "Delete second", "Not synchronised").
 */
#ifndef TSYNC_COMMON_CHRONY_PARSE_H
#define TSYNC_COMMON_CHRONY_PARSE_H

#include <stddef.h>

#include "proto/proto.h"

/*
 * Parses @line (one line of `chronyc -c tracking`, its newline allowed)
 * into the daemon part of @out: synchronized unless the leap status is
 * "Not synchronised", the reference ID is 0 or the stratum is 16; the
 * bound is chrony's own bound on the clock's error, |system time offset|
 * + root dispersion + root delay / 2. Returns 0, or -EBADMSG with the
 * field that did not parse in out->detail.
 */
int chrony_parse_tracking(const char *line, struct tsync_clock_state *out);

#endif
