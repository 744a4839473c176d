/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The stamp sources' side of common/stamp/stamp.h: what a source
 * implements. Included by stamp.c (the table and the calls through it)
 * and by each source's file, nothing else.
 *
 * A source is one row of TSYNC_STAMP_SOURCES (proto/proto.h: name, wire
 * id, capability bit) and one ops table, stamp_<name>_ops, defined in
 * common/stamp/stamp_<name>.c. stamp.c joins the two into its table, in
 * the rows' order, and answers every question about sources from it: the
 * default source of a clock, which source may stamp which clock, the
 * capability bits an agent announces, the clocks that need no tracefs and
 * the texts of the messages that list them. So a new source is a row and
 * a file; no caller changes (as linuxptp's transport_private.h, or
 * trace-cmd's tracecmd_tsync_proto_register()).
 */
#ifndef TSYNC_STAMP_PRIV_H
#define TSYNC_STAMP_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/stamp/stamp.h"

struct stamp_source;

/*
 * An open source. Each source's own state embeds it as its first member
 * (open() allocates the whole, close() frees it); stamp.c sets @src.
 */
struct tsync_stamper {
	const struct stamp_source *src;
};

struct stamp_source_ops {
	/* For messages: what it stamps with ("the TSC"), and where it
	 * exists when not everywhere ("x86"; NULL: everywhere). */
	const char *what;
	const char *only_on;
	/* It needs tracefs (the clocks it stamps are not readable from
	 * user space); without, only the others sync. */
	bool tracefs;
	/* Whether this machine has it (NULL: every machine). */
	bool (*available)(void);
	/*
	 * Whether it stamps in trace clock @clock (not NULL nor empty).
	 * NULL: in every clock, through tracefs; such a source is a clock's
	 * default only where no other source fits (the others read the
	 * clock directly, which costs less).
	 */
	bool (*fits)(const char *clock);
	/*
	 * Opens it for @clock (checked against fits() and available())
	 * with TSYNC_STAMP_* @flags and instance tag @tag (checked by the
	 * source if it uses one). Returns 0 and *@out or -errno.
	 */
	int (*open)(const char *clock, const char *tag, unsigned int flags,
		    struct tsync_stamper **out);
	/* As tsync_stamp_take(). */
	int (*take)(struct tsync_stamper *s, uint32_t round, uint32_t seq, uint8_t dir,
		    uint32_t cpu, int64_t *ts);
	/*
	 * As tsync_stamp_resolve(), with arguments checked but @cpu not
	 * (the source knows its CPUs). NULL: take() stamps at once, there is
	 * nothing to resolve (the source is not deferred).
	 */
	int (*resolve)(struct tsync_stamper *s, int cpu, uint32_t round,
		       struct tsync_stamp_slot *slots, size_t n);
	/* The name of its tracefs instance (NULL: it has none). */
	const char *(*instance)(const struct tsync_stamper *s);
	/* Frees what open() made (@s not NULL). */
	void (*close)(struct tsync_stamper *s);
};

/* One row of stamp.c's table. */
struct stamp_source {
	const char *name;
	enum tsync_stamp_source id;
	uint32_t cap;				/* announced by agents that have it */
	const struct stamp_source_ops *ops;
};

/* The ops of every row of TSYNC_STAMP_SOURCES. */
#define STAMP_X_OPS(name, NAME, id, cap) extern const struct stamp_source_ops stamp_##name##_ops;
TSYNC_STAMP_SOURCES(STAMP_X_OPS)
#undef STAMP_X_OPS

#endif
