// SPDX-License-Identifier: GPL-2.0-or-later
/* A trace-cmd agent's v6 metadata into a tracemeta; see tcmd_meta.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/tracemeta/tracemeta.h"
#include "host/peer/tcmd_meta.h"

#define OPT_UNAME 5	/* trace.dat option id of UNAME, as common/tracedat/tracedat.c writes it */
#define MAX_CPUS 4096	/* a plausible CPU count, for the cmdlines repair */

/* A cursor over the buffer; the first fault sticks in @why. */
struct rd {
	const uint8_t *p;
	size_t left;
	const char *why;
};

/* Takes @n bytes; NULL (and @why set) if the buffer ends first. */
static const uint8_t *take(struct rd *r, size_t n, const char *what)
{
	const uint8_t *p = r->p;

	if (r->why)
		return NULL;
	if (n > r->left) {
		r->why = what;
		return NULL;
	}
	r->p += n;
	r->left -= n;
	return p;
}

/* Reads a host-order integer of @n (2, 4, 8) bytes; 0 on a fault. */
static uint64_t num(struct rd *r, size_t n, const char *what)
{
	const uint8_t *p = take(r, n, what);
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	if (!p)
		return 0;
	if (n == 2)
		return memcpy(&v16, p, 2), v16;
	if (n == 4)
		return memcpy(&v32, p, 4), v32;
	return memcpy(&v64, p, 8), v64;
}

/* Takes a text of @lsize-byte length and adds it as part @kind. */
static int text(struct rd *r, struct tracemeta *tm, size_t lsize, unsigned int kind,
		const char *system, const char *what)
{
	uint64_t n = num(r, lsize, what);
	const uint8_t *p;

	if (n > TRACEMETA_MAX_TEXT && !r->why)
		r->why = what;
	p = take(r, (size_t)n, what);
	if (!p)
		return -EPROTO;
	return n ? tracemeta_add_part(tm, kind, system, p, (size_t)n, false) : 0;
}

/* Expects the literal @s (NUL included). */
static int literal(struct rd *r, const char *s)
{
	const uint8_t *p = take(r, strlen(s) + 1, s);

	if (p && memcmp(p, s, strlen(s) + 1))
		r->why = s;
	return r->why ? -EPROTO : 0;
}

/* The event systems: count, then name, count, formats each. */
static int systems(struct rd *r, struct tracemeta *tm)
{
	uint32_t nsys = (uint32_t)num(r, 4, "event systems");
	int ret = 0;

	if (nsys > TRACEMETA_MAX_SYSTEMS)
		r->why = "event system count";
	for (uint32_t i = 0; !r->why && !ret && i < nsys; i++) {
		const char *name = (const char *)r->p;
		size_t nl = strnlen(name, r->left);
		uint32_t nev;

		if (!take(r, nl + 1, "event system name"))
			break;
		nev = (uint32_t)num(r, 4, "event count");
		if (nev > TRACEMETA_MAX_FORMATS)
			r->why = "event count";
		for (uint32_t k = 0; !r->why && !ret && k < nev; k++)
			ret = text(r, tm, 8, TRACEMETA_EVENT_FORMAT, name, "event format");
	}
	return r->why ? -EPROTO : ret;
}

/* The options block up to option 0; keeps UNAME. */
static int options(struct rd *r, struct tracemeta *tm)
{
	int ret = 0;

	if (!r->left)
		return 0;	/* no options at all */
	if (literal(r, "options  "))
		return -EPROTO;
	for (int i = 0; !ret && i < 4096; i++) {
		uint16_t id = (uint16_t)num(r, 2, "option id");
		uint32_t size;
		const uint8_t *p;

		if (r->why || !id)
			break;
		size = (uint32_t)num(r, 4, "option size");
		p = take(r, size, "option data");
		if (p && id == OPT_UNAME && size > 1)
			ret = tracemeta_add_part(tm, TRACEMETA_UNAME, "", p,
						 strnlen((const char *)p, size), false);
	}
	if (!r->why && r->left)
		r->why = "data after the options (a flyrecord?)";
	return r->why ? -EPROTO : ret;
}

/*
 * The saved cmdlines: u64 length and text. trace-cmd 3.1.6 takes the
 * length from one read of saved_cmdlines and copies the file with a second
 * one; when a process starts in between the two differ, it says "error
 * in size of file" and sends the wrong length with the new text (seen on
 * a busy machine). The text has no NUL and is followed by the u32 CPU
 * count and "options  " (or the end): when the length does not lead
 * there, the text is taken up to the first "options  " after it, or up
 * to the CPU count at the end.
 */
static int cmdlines(struct rd *r, struct tracemeta *tm)
{
	static const char opts[] = "options  ";
	uint64_t n = num(r, 8, "saved cmdlines");
	const uint8_t *p = r->p, *q;
	size_t len;

	if (r->why)
		return -EPROTO;
	if (n <= r->left && (r->left - n == 4 ||
	    (r->left - n >= 4 + sizeof(opts) && !memcmp(p + n + 4, opts, sizeof(opts)))))
		len = (size_t)n;
	else if (r->left >= 4 && (q = memmem(p, r->left, opts, sizeof(opts))) && q - p >= 4)
		len = (size_t)(q - p) - 4;
	else if (r->left >= 4)
		len = r->left - 4;
	else
		len = SIZE_MAX;
	/* a repaired text must end a line, at a CPU count (at most
	 * MAX_CPUS, so with NUL bytes where the text has none) */
	if (len != n && r->left >= 4 && len <= r->left - 4) {
		uint32_t cpus;

		memcpy(&cpus, p + len, 4);
		if (!cpus || cpus > MAX_CPUS || (len && p[len - 1] != '\n'))
			len = SIZE_MAX;
	}
	if (len > r->left || memchr(p, '\0', len)) {
		r->why = "saved cmdlines";
		return -EPROTO;
	}
	take(r, len, "saved cmdlines");
	return len ? tracemeta_add_part(tm, TRACEMETA_CMDLINES, "", p, len, false) : 0;
}

/* The v6 layout up to the CPU count. */
static int headers(struct rd *r, struct tracemeta *tm, uint32_t *cpus)
{
	static const uint8_t magic[10] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const uint8_t *p = take(r, 12, "file header");
	uint32_t n;
	int ret;

	if (p && memcmp(p, magic, 10))
		r->why = "trace.dat magic";
	if (p && !r->why && memcmp(p + 10, "6", 2))
		return -EPROTONOSUPPORT;
	p = take(r, 2, "file header");
	if (p && p[0] != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__))
		r->why = "byte order (not this host's)";
	num(r, 4, "page size");
	ret = literal(r, "header_page") ?:
	      text(r, tm, 8, TRACEMETA_HEADER_PAGE, "", "header_page") ?:
	      literal(r, "header_event") ?:
	      text(r, tm, 8, TRACEMETA_HEADER_EVENT, "", "header_event");
	n = (uint32_t)num(r, 4, "ftrace formats");
	if (n > TRACEMETA_MAX_FORMATS)
		r->why = "ftrace format count";
	for (uint32_t i = 0; !ret && !r->why && i < n; i++)
		ret = text(r, tm, 8, TRACEMETA_FTRACE_FORMAT, "", "ftrace format");
	ret = ret ?: systems(r, tm) ?:
	      text(r, tm, 4, TRACEMETA_KALLSYMS, "", "kallsyms") ?:
	      text(r, tm, 4, TRACEMETA_PRINTK, "", "printk formats") ?:
	      cmdlines(r, tm);
	*cpus = (uint32_t)num(r, 4, "CPU count");
	return r->why ? -EPROTO : ret;
}

/* Parses the metadata; see tcmd_meta.h. */
int tcmd_meta_parse(const uint8_t *buf, size_t len, uint32_t page_size, const char *clock,
		    uint32_t *cpus, struct tracemeta **out, char *err, size_t errlen)
{
	struct tracemeta *tm = tracemeta_new();
	struct rd r = { .p = buf, .left = len };
	char ck[64];
	int ret;

	if (!tm)
		return snprintf(err, errlen, "out of memory"), -ENOMEM;
	ret = headers(&r, tm, cpus) ?: options(&r, tm);
	if (!ret) {
		snprintf(ck, sizeof(ck), "[%s]", clock);
		ret = tracemeta_add_part(tm, TRACEMETA_TRACE_CLOCK, "", ck, strlen(ck), false);
	}
	if (!ret)
		ret = tracemeta_finish(tm, page_size);
	if (ret == -EPROTONOSUPPORT)
		snprintf(err, errlen, "the trace-cmd agent sent a trace.dat of a version other "
			 "than 6; leave --file-version out of the guest options");
	else if (ret && r.why)
		snprintf(err, errlen, "the trace-cmd agent's metadata is bad at byte %zu: %s",
			 len - r.left, r.why);
	else if (ret)
		snprintf(err, errlen, "the trace-cmd agent's metadata is not usable: %s",
			 strerror(-ret));
	if (ret) {
		tracemeta_free(tm);
		return ret == -ENOMEM || ret == -E2BIG ? ret : -EPROTO;
	}
	*out = tm;
	return 0;
}
