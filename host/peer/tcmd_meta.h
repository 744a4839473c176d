/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The trace.dat metadata a stock `trace-cmd agent` sends (SEND_DATA ...
 * FIN_DATA), read into a struct tracemeta so that tsync-host writes the
 * guest's file with its own writer (common/tracemeta/tracemeta.h, host/tracedat.h),
 * as for its own agents. Pure: no I/O.
 *
 * tsync-host asks the agent for file version 6 (--file-version 6 in the
 * guest argv): one linear layout, headers, formats, kallsyms, printk
 * formats, saved cmdlines, the CPU count and an options block ended by
 * option 0, and no flyrecord (the host appends that). Every length is
 * checked against the buffer and the limits of common/tracemeta/tracemeta.h; the
 * file must be in this host's byte order (trace-cmd writes option
 * payloads in host order, so a foreign one could not be read anyway).
 * Version 7 is refused with a message that says how to avoid it.
 * Kept from the options: UNAME. The trace clock is the one the guest was
 * asked for (3.1.6 writes an empty TRACECLOCK option and the clock text
 * after the flyrecord, which the agent never sends).
 */
#ifndef TSYNC_HOST_TCMD_META_H
#define TSYNC_HOST_TCMD_META_H

#include <stddef.h>
#include <stdint.h>

struct tracemeta;

/*
 * Parses @len bytes of v6 metadata in @buf for pages of @page_size bytes
 * and trace clock @clock into a finished tracemeta in @out. @cpus gets the
 * file's CPU count. Returns 0, or -EPROTO / -E2BIG / -ENOMEM with a
 * reason in @err.
 */
int tcmd_meta_parse(const uint8_t *buf, size_t len, uint32_t page_size, const char *clock,
		    uint32_t *cpus, struct tracemeta **out, char *err, size_t errlen);

#endif
