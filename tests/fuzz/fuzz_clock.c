// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target: what the time daemons answer (common/clock/): any
 * bytes as a ptp4l management RESPONSE, through the parser and every
 * dataset decoder, and as a `chronyc -c tracking` line. Invariants: a
 * parsed dataset lies inside the input; a rejected chronyc line says why
 * and is not synchronized; an accepted one has a bound only if
 * synchronized.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock/chrony_parse.h"
#include "common/clock/ptpmgmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ptpmgmt_view v = { 0 };
	struct ptpmgmt_reply r;
	struct tsync_clock_state s = { 0 };
	char *line;

	if (!ptpmgmt_parse(data, size, &r)) {
		if (r.data && (r.data < data || r.data + r.len > data + size))
			abort();
		(void)ptpmgmt_default_ds(&r, &v.dds);
		(void)ptpmgmt_time_status(&r, &v.ts);
		(void)ptpmgmt_current_ds(&r, &v.cds);
		if (!ptpmgmt_port_ds(&r, &v.ports[0]))
			v.nports = 1;
		ptpmgmt_state(&v, &s);
		if (!s.detail[0])
			abort();
	}
	line = malloc(size + 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	memset(&s, 0, sizeof(s));
	if (chrony_parse_tracking(line, &s)) {
		if (s.synced || !s.detail[0])
			abort();
	} else if (!s.synced && s.bound_ns != TSYNC_CLOCK_BOUND_UNKNOWN) {
		abort();
	}
	free(line);
	return 0;
}
