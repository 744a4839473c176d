/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Checking a guest's ring-buffer pages before the host writes them
 * (pure: no I/O). A guest page is what trace_pipe_raw gives: a header
 * (u64 timestamp, then the guest's long "commit": data length and two
 * flag bits) and the events. A lying or broken agent can send anything;
 * what reaches a trace.dat must not crash its reader (trace-cmd's kbuffer
 * trusts the commit length and the event lengths).
 *
 * Checked: the commit length fits the page (with room for the missed-
 * events count when its flag says it is stored), no unknown flag bits,
 * every event header and event lies within the commit length, data
 * events have a sane length, and absolute timestamps never go back
 * within the page (the deltas cannot). Byte order is the host's.
 */
#ifndef TSYNC_HOST_PAGECHECK_H
#define TSYNC_HOST_PAGECHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct page_format {
	uint32_t page_size;	/* bytes per page, header included */
	uint32_t commit_size;	/* size of the commit field: the guest's long */
};

/*
 * Fills @f for pages of @page_size bytes laid out as the guest's
 * events/header_page text (@hp, @len bytes) says; without a usable
 * "commit" field it assumes a 64-bit guest. Returns 0 or -EINVAL (page
 * size not a power of two from 64 bytes to 1 MiB).
 */
int page_format_init(struct page_format *f, uint32_t page_size, const char *hp, size_t len);

/*
 * Checks @page (f->page_size bytes). Returns 0, or -EBADMSG with the
 * first fault and its offset in @why.
 */
int page_check(const uint8_t *page, const struct page_format *f, char *why, size_t whylen);

/* What a good page holds: its data events, and the events the guest's
 * ring buffer lost just before it (the count the kernel stores after the
 * data; when a full page has no room for it, the kernel only flags the
 * loss: 1, and missed_min says the count is a minimum). */
struct page_counts {
	uint64_t events;
	uint64_t missed;
	bool missed_min;
};

/* page_check(), and counts a good page into @c (zeroed on error). */
int page_check_count(const uint8_t *page, const struct page_format *f, struct page_counts *c,
		     char *why, size_t whylen);

#endif
