// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Guest ring-buffer page checks; see pagecheck.h. The event encoding is
 * the kernel's (kernel/trace/ring_buffer.c), as libtraceevent's kbuffer
 * reads it:
 *
 *   u32 header: type_len (5 bits) | time_delta (27 bits)
 *   type_len 1..28   data event of type_len * 4 bytes after the header
 *   type_len 0       data event whose length (itself included) is the
 *                    u32 after the header
 *   29 PADDING       padding or a discarded event: 4 + the u32 after
 *                    the header bytes (the kernel's end-of-page padding
 *                    with delta 0 lies past the commit length; kbuffer
 *                    reads the length of any padding within it, so a
 *                    padding here must have one)
 *   30 TIME_EXTEND   u32 after the header: delta bits 27 and up
 *   31 TIME_STAMP    absolute timestamp: (u32 << 27) | delta, with the
 *                    page timestamp's top 5 bits
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/base/errbuf.h"
#include "host/guest/pagecheck.h"

#define TYPE_PADDING		29
#define TYPE_TIME_EXTEND	30
#define TYPE_TIME_STAMP		31
#define TS_SHIFT		27
#define TS_MSB			(0xf8ULL << 56)
#define COMMIT_MASK		((1ULL << 27) - 1)
#define MISSED_EVENTS		(1ULL << 31)
#define MISSED_STORED		(1ULL << 30)

/* Returns the size given in "size:N" of the header_page field @name, or 0. */
static unsigned int field_size(const char *hp, size_t len, const char *name)
{
	size_t nlen = strlen(name);

	for (size_t i = 0; i + nlen < len; i++) {
		const char *line_end, *sz;
		unsigned int v;

		if (memcmp(hp + i, name, nlen))
			continue;
		line_end = memchr(hp + i, '\n', len - i);
		sz = memmem(hp + i, (size_t)((line_end ? line_end : hp + len) - (hp + i)), "size:", 5);
		if (sz && sscanf(sz + 5, "%u", &v) == 1)
			return v;
	}
	return 0;
}

/* Sets up a page format; see pagecheck.h. */
int page_format_init(struct page_format *f, uint32_t page_size, const char *hp, size_t len)
{
	unsigned int commit = hp ? field_size(hp, len, "commit;") : 0;

	if (page_size < 64 || page_size > (1u << 20) || (page_size & (page_size - 1)))
		return -EINVAL;
	f->page_size = page_size;
	f->commit_size = commit == 4 ? 4 : 8;
	return 0;
}

/* Reads a u32 / u64 at @p (host byte order, any alignment). */
static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Checks the event at @data + @off (before @end), advancing @off and the
 * timestamp @ts. Returns 0 or -EBADMSG.
 */
static int check_event(const uint8_t *data, size_t *off, size_t end, uint64_t *ts,
		       uint64_t *events, char *why, size_t whylen)
{
	uint32_t hdr, arg = 0, type, delta;
	size_t len;
	uint64_t next;

	if (end - *off < 4) {
		tsync_set_err(why, whylen, "event header at %zu crosses the commit length %zu",
			      *off, end);
		return -EBADMSG;
	}
	hdr = rd32(data + *off);
	type = hdr & 31;
	delta = hdr >> 5;
	if (type == 0 || type >= TYPE_PADDING) {
		if (end - *off < 8) {
			tsync_set_err(why, whylen, "event at %zu: its length field crosses the "
				      "commit length %zu", *off, end);
			return -EBADMSG;
		}
		arg = rd32(data + *off + 4);
	}
	switch (type) {
	case 0:
	case TYPE_PADDING:
		/* kbuffer rounds a data length up to 4 bytes, not a padding's */
		if (arg < 4 || arg > end || (type == TYPE_PADDING && (arg & 3))) {
			tsync_set_err(why, whylen, "event at %zu: bad length %u", *off, arg);
			return -EBADMSG;
		}
		len = 4 + (size_t)((arg + 3) & ~3u);
		next = *ts + delta;
		break;
	case TYPE_TIME_EXTEND:
		len = 8;
		next = *ts + ((uint64_t)arg << TS_SHIFT) + delta;
		break;
	case TYPE_TIME_STAMP:
		/* A page past 2^59 ns is common (tai and other clocks of the
		 * calendar: 2^59 ns is 18 years), but readers differ in how
		 * they merge its top bits into an absolute timestamp, which
		 * holds only 59 bits: such an event cannot be read alike. */
		if (*ts & TS_MSB) {
			tsync_set_err(why, whylen, "event at %zu: an absolute timestamp in a page "
				      "past 2^59 ns (%#llx), which readers merge differently",
				      *off, (unsigned long long)*ts);
			return -EBADMSG;
		}
		len = 8;
		next = ((uint64_t)arg << TS_SHIFT) | delta;
		break;
	default:
		len = 4 + (size_t)type * 4;
		next = *ts + delta;
		break;
	}
	if (len > end - *off) {
		tsync_set_err(why, whylen, "event at %zu (%zu bytes) runs past the commit length %zu",
			      *off, len, end);
		return -EBADMSG;
	}
	if (next < *ts) {
		tsync_set_err(why, whylen, "event at %zu: time goes back from %llu to %llu", *off,
			      (unsigned long long)*ts, (unsigned long long)next);
		return -EBADMSG;
	}
	*ts = next;
	*off += len;
	if (type < TYPE_PADDING)	/* a data event: 0 (long) or 1..28 */
		(*events)++;
	return 0;
}

/* Checks one page; see pagecheck.h. */
int page_check(const uint8_t *page, const struct page_format *f, char *why, size_t whylen)
{
	struct page_counts c;

	return page_check_count(page, f, &c, why, whylen);
}

/* Reads the missed-events count stored after the data, or 1 when the
 * page only says that events were missed. */
static uint64_t missed_count(const uint8_t *page, const struct page_format *f, uint64_t raw,
			     size_t commit)
{
	const uint8_t *p = page + 8 + f->commit_size + commit;
	uint64_t n;

	if (!(raw & MISSED_EVENTS))
		return 0;
	if (!(raw & MISSED_STORED))
		return 1;
	n = f->commit_size == 4 ? rd32(p) : rd64(p);
	return n ? n : 1;
}

/* Checks one page and counts it; see pagecheck.h. */
int page_check_count(const uint8_t *page, const struct page_format *f, struct page_counts *c,
		     char *why, size_t whylen)
{
	size_t hdr = 8 + f->commit_size, room = f->page_size - hdr, off = 0, commit;
	uint64_t ts = rd64(page);
	uint64_t raw = f->commit_size == 4 ? rd32(page + 8) : rd64(page + 8);

	/* The kernel ORs its missed-events flag, an int (1 << 31), into a
	 * long: on a 64-bit guest bits 32-63 come sign-extended with it. */
	if (f->commit_size == 8 && (raw & MISSED_EVENTS) && raw >> 32 == 0xffffffffULL)
		raw &= 0xffffffffULL;
	int ret = 0;

	c->events = c->missed = 0;
	c->missed_min = false;
	if (raw & ~(COMMIT_MASK | MISSED_EVENTS | MISSED_STORED)) {
		tsync_set_err(why, whylen, "commit field %#llx has unknown flag bits",
			      (unsigned long long)raw);
		return -EBADMSG;
	}
	commit = (size_t)(raw & COMMIT_MASK);
	/* the missed-events count is stored after the data, in the page */
	if (commit > room || ((raw & MISSED_STORED) && commit + f->commit_size > room)) {
		tsync_set_err(why, whylen, "commit length %zu does not fit a %u-byte page",
			      commit, f->page_size);
		return -EBADMSG;
	}
	while (off < commit && !ret)
		ret = check_event(page + hdr, &off, commit, &ts, &c->events, why, whylen);
	if (ret)
		c->events = 0;
	else
		c->missed = missed_count(page, f, raw, commit);
	c->missed_min = !ret && (raw & MISSED_EVENTS) && !(raw & MISSED_STORED);
	return ret;
}
