// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * plugin_tsync.so: prints tsync's records (proto/tsync_record.h), which
 * tsync writes with trace_marker_raw and the kernel stores as ftrace
 * "raw_data" events, in words:
 *
 *   tsync round 12 cpu 1 peer g offset -12345678901 ns err 180 ns delay 5200 ns used 33/339
 *   tsync probe 12/7 t2                                   (default, compact)
 *   tsync probe round 12 seq 7 cpu 1 guest-recv           (-O tsync:probes=1)
 *
 * A record is tsync's only if id, magic, version, type and length all match
 * and the whole record lies inside the event; anything else is somebody
 * else's raw_data and prints exactly as it would without this plugin:
 *  - if Debian's plugin_function.so is loaded, its "# <id> <bytes>"
 *    output, reproduced here byte for byte, because our registration
 *    replaces its handler;
 *  - otherwise the event's print fmt ("id:%04x %08x"), by returning non-zero
 *    so libtraceevent prints it after our (empty) output.
 * The deliberate differences are where the stock code would read past the
 * end of the record: a record too short for the id field prints as
 * "# <truncated raw_data: N bytes>", and with the print fmt a record with an
 * id but no data byte prints as "id:<id> <no data>".
 *
 * Load order. plugin_function.so registers a raw_data handler too, and the
 * handler registered last is the one used. libtraceevent loads its system
 * directory first, then $TRACEEVENT_PLUGIN_DIR, then
 * ~/.local/lib/traceevent/plugins, then the directories added with
 * tep_add_plugin_path(TEP_PLUGIN_LAST); inside one directory, in readdir
 * order. A copy in a later directory than plugin_function.so always comes
 * after it. A copy in the same (system) directory may come first: then
 * tep_plugin_loader() adds DIR/tsync-last, which holds a link to this .so
 * (`make install`, the Debian package), as a last directory, and
 * libtraceevent calls our loader again after every other plugin. On that
 * second call we register again, now last, unless a copy from a later
 * directory already replaced plugin_function.so's handler (that copy is
 * the one libtraceevent's order prefers). libtraceevent skips the last
 * directories when $HOME is unset (as it skips ~/.local).
 *
 * Every read is bounds-checked against record->size and goes through
 * tep_read_number, which converts from the file's byte order.
 *
 * The .so links no library: libtraceevent's symbols come from the process
 * that loads it (trace-cmd, KernelShark), as for Debian's own plugins.
 * The options array (exported as tep_plugin_options) is the plugin's only
 * mutable state; libtraceevent's plugin API requires it to be global.
 */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event-parse.h>
#include <trace-seq.h>

#include "proto/tsync_record.h"
#include "plugin/plugin_tsync.h"

const char tep_plugin_alias[] = "tsync";

/*
 * The options, under a local name: code in this file uses tsync_options,
 * which binds to this copy. A reference to the exported name would, when
 * two copies of the plugin are loaded (system directory and ~/.local),
 * resolve to the first copy's array (libtraceevent loads plugins with
 * RTLD_GLOBAL).
 */
static struct tep_plugin_option tsync_options[] = {
	{
		.name = "probes",
		.plugin_alias = "tsync",
		.description = "Print tsync probe markers in full (round, seq, "
			       "cpu, direction) instead of compactly",
		.set = 0,
	},
	{ .name = NULL },
};
extern struct tep_plugin_option
	tep_plugin_options[sizeof(tsync_options) / sizeof(tsync_options[0])]
	__attribute__((alias("tsync_options")));

#define OPT_PROBES (&tsync_options[0])

/*
 * How foreign raw_data records are printed; the address is the handler's
 * context, so nothing is allocated per handle.
 */
static const int fallback_function = 1;	/* as plugin_function.so */
static const int fallback_fmt = 2;	/* the event's print fmt */

/* The bytes of one raw_data record from its id field to its end. */
struct raw_view {
	struct tep_handle *tep;
	const unsigned char *p;	/* the id field = start of tsync_rec_hdr */
	size_t len;		/* bytes from p to the end of the record */
};

/* Reads an integer at @off of @v in the file's byte order; the caller has
 * checked that @off + @size <= @v->len. Returns the value. */
static unsigned long long view_num(const struct raw_view *v, size_t off,
				   int size)
{
	return tep_read_number(v->tep, v->p + off, size);
}

/*
 * Sets @v to the record's bytes from the id field on, if the event has the
 * raw_data layout we expect (a 4-byte id directly followed by buf) and the id
 * lies inside the record. Returns 0 or -1.
 */
static int view_init(struct raw_view *v, struct tep_record *record,
		     struct tep_event *event)
{
	struct tep_format_field *id, *buf;

	id = tep_find_field(event, "id");
	buf = tep_find_field(event, "buf");
	if (!id || !buf || !record->data || record->size < 0)
		return -1;
	if (id->size != 4 || id->offset < 0 || buf->offset != id->offset + 4)
		return -1;
	if ((size_t)id->offset + 4 > (size_t)record->size)
		return -1;
	v->tep = event->tep;
	v->p = (const unsigned char *)record->data + id->offset;
	v->len = (size_t)record->size - (size_t)id->offset;
	return 0;
}

/* Returns the word for probe direction @dir, or NULL if unknown. */
static const char *dir_word(unsigned int dir)
{
	switch (dir) {
	case TSYNC_DIR_HOST_SEND:	return "host-send";
	case TSYNC_DIR_GUEST_RECV:	return "guest-recv";
	case TSYNC_DIR_GUEST_SEND:	return "guest-send";
	case TSYNC_DIR_HOST_RECV:	return "host-recv";
	}
	return NULL;
}

/* Prints a probe record (already validated, @v->len >= its size). */
static void print_probe(struct trace_seq *s, const struct raw_view *v)
{
	unsigned int round, seq, cpu, dir;
	const char *word;

	round = view_num(v, offsetof(struct tsync_rec_probe, round), 4);
	seq = view_num(v, offsetof(struct tsync_rec_probe, seq), 4);
	cpu = view_num(v, offsetof(struct tsync_rec_probe, cpu), 4);
	dir = view_num(v, offsetof(struct tsync_rec_probe, dir), 1);
	word = dir_word(dir);

	if (OPT_PROBES->set) {
		trace_seq_printf(s, "tsync probe round %u seq %u cpu %u ",
				 round, seq, cpu);
		if (word)
			trace_seq_puts(s, word);
		else
			trace_seq_printf(s, "dir-%u", dir);
		return;
	}
	if (word)
		trace_seq_printf(s, "tsync probe %u/%u t%u", round, seq, dir);
	else
		trace_seq_printf(s, "tsync probe %u/%u dir-%u", round, seq, dir);
}

/*
 * Prints the NUL-padded text at @off (@size bytes, maybe without a NUL):
 * printable ASCII as is (a space only if @spaces), anything else as '?',
 * "-" if empty.
 */
static void print_text(struct trace_seq *s, const struct raw_view *v, size_t off, size_t size,
		       bool spaces)
{
	char text[TSYNC_REC_TEXT_MAX + 1];
	size_t i;

	if (size > TSYNC_REC_TEXT_MAX)
		size = TSYNC_REC_TEXT_MAX;
	for (i = 0; i < size && v->p[off + i]; i++) {
		unsigned char c = v->p[off + i];

		text[i] = ((c > 0x20 || (spaces && c == 0x20)) && c < 0x7f) ? (char)c : '?';
	}
	text[i] = '\0';
	trace_seq_puts(s, i ? text : "-");
}

/* Prints the NUL-padded peer name at @off (TSYNC_REC_PEER_MAX bytes). */
static void print_peer(struct trace_seq *s, const struct raw_view *v, size_t off)
{
	print_text(s, v, off, TSYNC_REC_PEER_MAX, false);
}

/* Prints a round record (already validated, @v->len >= its size). */
static void print_round(struct trace_seq *s, const struct raw_view *v)
{
	unsigned int round, cpu, used, sent;
	unsigned long long err, delay;
	long long offset;

	round = view_num(v, offsetof(struct tsync_rec_round, round), 4);
	cpu = view_num(v, offsetof(struct tsync_rec_round, cpu), 4);
	offset = (long long)view_num(v, offsetof(struct tsync_rec_round,
						  offset_ns), 8);
	err = view_num(v, offsetof(struct tsync_rec_round, error_ns), 8);
	delay = view_num(v, offsetof(struct tsync_rec_round, delay_ns), 8);
	used = view_num(v, offsetof(struct tsync_rec_round, used), 4);
	sent = view_num(v, offsetof(struct tsync_rec_round, sent), 4);

	trace_seq_printf(s, "tsync round %u cpu %u peer ", round, cpu);
	print_peer(s, v, offsetof(struct tsync_rec_round, peer));
	trace_seq_printf(s, " offset %lld ns err %llu ns delay %llu ns used %u/%u",
			 offset, err, delay, used, sent);
}

/* Prints a clock record (already validated, @v->len >= its size). */
static void print_clock(struct trace_seq *s, const struct raw_view *v)
{
	unsigned long long bound;
	unsigned int synced, stratum;
	long long offset;
	int status;

	synced = view_num(v, offsetof(struct tsync_rec_clock, synced), 1);
	stratum = view_num(v, offsetof(struct tsync_rec_clock, stratum), 2);
	status = (int)(uint32_t)view_num(v, offsetof(struct tsync_rec_clock, status), 4);
	offset = (long long)view_num(v, offsetof(struct tsync_rec_clock, offset_ns), 8);
	bound = view_num(v, offsetof(struct tsync_rec_clock, bound_ns), 8);

	trace_seq_puts(s, "tsync clock peer ");
	print_peer(s, v, offsetof(struct tsync_rec_clock, peer));
	trace_seq_putc(s, ' ');
	print_text(s, v, offsetof(struct tsync_rec_clock, daemon), TSYNC_REC_DAEMON_MAX, false);
	trace_seq_printf(s, " %s", synced ? "synchronized" : "not synchronized");
	if (status)
		trace_seq_printf(s, " (not read: error %d)", -status);
	trace_seq_printf(s, " offset %lld ns bound ", offset);
	if (bound == TSYNC_REC_BOUND_UNKNOWN)
		trace_seq_puts(s, "unknown");
	else
		trace_seq_printf(s, "%llu ns", bound);
	trace_seq_printf(s, " stratum %u master ", stratum);
	print_text(s, v, offsetof(struct tsync_rec_clock, master), TSYNC_REC_TEXT_MAX, false);
	trace_seq_puts(s, " (");
	print_text(s, v, offsetof(struct tsync_rec_clock, detail), TSYNC_REC_TEXT_MAX, true);
	trace_seq_putc(s, ')');
}

/*
 * Prints the record in @v in words if it is one of tsync's. Returns 0 if it
 * printed, -1 (having printed nothing) if the record is not tsync's.
 */
static int print_tsync(struct trace_seq *s, const struct raw_view *v)
{
	size_t want;
	unsigned int type;

	if (v->len < sizeof(struct tsync_rec_hdr))
		return -1;
	if (view_num(v, offsetof(struct tsync_rec_hdr, id), 4) != TSYNC_RAW_ID ||
	    view_num(v, offsetof(struct tsync_rec_hdr, magic), 4) != TSYNC_REC_MAGIC ||
	    view_num(v, offsetof(struct tsync_rec_hdr, version), 1) != TSYNC_REC_VERSION)
		return -1;
	type = view_num(v, offsetof(struct tsync_rec_hdr, type), 1);
	if (type == TSYNC_REC_PROBE)
		want = sizeof(struct tsync_rec_probe);
	else if (type == TSYNC_REC_ROUND)
		want = sizeof(struct tsync_rec_round);
	else if (type == TSYNC_REC_CLOCK)
		want = sizeof(struct tsync_rec_clock);
	else
		return -1;
	/* The ring buffer pads events to 4 bytes: the event may be longer. */
	if (view_num(v, offsetof(struct tsync_rec_hdr, len), 2) != want ||
	    v->len < want)
		return -1;

	if (type == TSYNC_REC_PROBE)
		print_probe(s, v);
	else if (type == TSYNC_REC_ROUND)
		print_round(s, v);
	else
		print_clock(s, v);
	return 0;
}

/*
 * Prints a foreign raw_data record as Debian's plugin_function.so does
 * (libtraceevent 1.7.1 trace_raw_data_handler), including its quirks: the
 * '!' path returns non-zero so the print fmt follows, and the byte loop steps
 * by the file's long size but prints up to sizeof(long) bytes per step.
 * Unlike it, never reads past the record. Returns the handler's result.
 */
static int print_like_function(struct trace_seq *s, struct tep_record *record,
			       struct tep_event *event)
{
	const unsigned char *data = record->data, *p, *end;
	struct tep_format_field *id, *buf;
	unsigned long long val;
	int long_size;

	id = tep_find_field(event, "id");
	if (id && (id->offset < 0 || record->size < 0 ||
		   (size_t)id->offset + (size_t)id->size > (size_t)record->size)) {
		trace_seq_printf(s, "# <truncated raw_data: %d bytes>",
				 record->size);
		return 0;
	}
	if (tep_get_field_val(s, event, "id", record, &val, 1))
		return trace_seq_putc(s, '!');

	trace_seq_printf(s, "# %llx", val);

	buf = tep_find_any_field(event, "buf");
	if (!buf) {
		trace_seq_printf(s, "<CANT FIND FIELD %s>", "buf");
		return 0;
	}

	long_size = tep_get_long_size(event->tep);
	if (long_size <= 0)	/* the stock loop would never end */
		long_size = sizeof(long);
	if (buf->offset < 0)
		return 0;
	end = data + record->size;
	for (p = data + buf->offset; p < end; p += long_size) {
		size_t n = sizeof(long), i;

		if (n > (size_t)(end - p))
			n = end - p;
		for (i = 0; i < n; i++)
			trace_seq_printf(s, " %02x", p[i]);
		if ((size_t)(end - p) <= (size_t)long_size)
			break;
	}
	return 0;
}

/*
 * Prints a foreign raw_data record as it would print without this plugin
 * (see the top of the file). Returns 0, or non-zero to have libtraceevent
 * append the event's print fmt output.
 */
static int print_foreign(struct trace_seq *s, struct tep_record *record,
			 struct tep_event *event, const void *context)
{
	struct tep_format_field *id;

	if (context == &fallback_function)
		return print_like_function(s, record, event);

	/*
	 * The print fmt reads REC->id and REC->buf[0] without looking at the
	 * record's size: let it run only when both are inside the record.
	 */
	id = tep_find_field(event, "id");
	if (!id)
		return 1;
	if (id->offset < 0 || record->size < 0 ||
	    (size_t)id->offset + (size_t)id->size > (size_t)record->size) {
		trace_seq_printf(s, "# <truncated raw_data: %d bytes>",
				 record->size);
		return 0;
	}
	if ((size_t)id->offset + (size_t)id->size >= (size_t)record->size) {
		unsigned long long val;

		if (tep_get_field_val(s, event, "id", record, &val, 1))
			return 0;
		trace_seq_printf(s, "id:%04llx <no data>", val);
		return 0;
	}
	return 1;
}

/* The ftrace:raw_data handler. Returns 0, or non-zero for "print fmt too". */
static int tsync_raw_data_handler(struct trace_seq *s, struct tep_record *record,
				  struct tep_event *event, void *context)
{
	struct raw_view v;

	if (view_init(&v, record, event) == 0 && print_tsync(s, &v) == 0)
		return 0;
	return print_foreign(s, record, event, context);
}

/* The subdirectory of this plugin's directory with a link to it. */
#define LATE_SUBDIR "tsync-last"

/* What the loaded objects say about the load order (see the top). */
struct load_scan {
	const void *self;	/* our load address */
	int self_pos;		/* our place in load order, -1 if not seen */
	int function_pos;	/* plugin_function.so's, -1 if not loaded */
	int other_after_function; /* another plugin_tsync.so came after it */
	int pos;
};

/* Returns the file name part of @path. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * dl_iterate_phdr callback: notes where this plugin, plugin_function.so and
 * other copies of this plugin are in load order (the link map is in load
 * order). Returns 0 to see every object.
 */
static int scan_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct load_scan *sc = data;
	const char *base;
	int pos = sc->pos++;

	(void)size;
	if (!info->dlpi_name)
		return 0;
	base = base_name(info->dlpi_name);
	if ((const void *)info->dlpi_addr == sc->self) {
		sc->self_pos = pos;
	} else if (strcmp(base, "plugin_function.so") == 0) {
		sc->function_pos = pos;
		sc->other_after_function = 0;
	} else if (strcmp(base, "plugin_tsync.so") == 0 &&
		   sc->function_pos >= 0) {
		sc->other_after_function = 1;
	}
	return 0;
}

/*
 * If plugin_function.so lies in this plugin's directory (@self_path's), so
 * that libtraceevent will load it after us, adds DIR/tsync-last (when it
 * holds plugin_tsync.so) as a last plugin directory. Returns 1 if added.
 */
static int defer_past_function(struct tep_handle *tep, const char *self_path)
{
	char path[PATH_MAX];
	int dirlen, n;

	dirlen = (int)(base_name(self_path) - self_path);
	n = snprintf(path, sizeof(path), "%.*splugin_function.so", dirlen,
		     self_path);
	if (n < 0 || (size_t)n >= sizeof(path) || access(path, F_OK))
		return 0;
	n = snprintf(path, sizeof(path), "%.*s" LATE_SUBDIR "/plugin_tsync.so",
		     dirlen, self_path);
	if (n < 0 || (size_t)n >= sizeof(path) || access(path, F_OK))
		return 0;
	path[n - strlen("/plugin_tsync.so")] = '\0';
	return tep_add_plugin_path(tep, path, TEP_PLUGIN_LAST) == 0;
}

int tep_plugin_loader(struct tep_handle *tep)
{
	struct load_scan sc = { .self_pos = -1, .function_pos = -1 };
	int saved[sizeof(tsync_options) / sizeof(tsync_options[0])] = { 0 };
	const void *ctx = &fallback_fmt;
	Dl_info self;
	size_t i;

	/* (a static function: its address is this copy's) */
	if (!dladdr((void *)tsync_raw_data_handler, &self) || !self.dli_fname)
		return -1;
	sc.self = self.dli_fbase;
	dl_iterate_phdr(scan_object, &sc);

	if (sc.function_pos < 0) {
		/* It may come after us: have us loaded again after it. */
		defer_past_function(tep, self.dli_fname);
	} else {
		ctx = &fallback_function;
		/*
		 * Loaded before plugin_function.so, so this is the second
		 * call (from tsync-last): a copy from a later directory
		 * already holds the handler.
		 */
		if (sc.self_pos >= 0 && sc.self_pos < sc.function_pos &&
		    sc.other_after_function)
			return 0;
	}

	/*
	 * load_plugin() already applied the user's -O values to our exported
	 * options; registering them (so `trace-cmd list -O` shows them) applies
	 * them again, which would undo a bare toggle (-O tsync:probes). Keep
	 * the first result. Removing them first keeps a second call from
	 * listing them twice.
	 */
	for (i = 0; tsync_options[i].name; i++)
		saved[i] = tsync_options[i].set;
	tep_plugin_remove_options(tsync_options);
	tep_plugin_add_options("tsync", tsync_options);
	for (i = 0; tsync_options[i].name; i++)
		tsync_options[i].set = saved[i];

	if (tep_register_event_handler(tep, -1, "ftrace", "raw_data",
				       tsync_raw_data_handler, (void *)ctx) < 0) {
		tep_plugin_remove_options(tsync_options);
		return -1;
	}
	return 0;
}

int tep_plugin_unloader(struct tep_handle *tep)
{
	tep_unregister_event_handler(tep, -1, "ftrace", "raw_data",
				     tsync_raw_data_handler,
				     (void *)&fallback_function);
	tep_unregister_event_handler(tep, -1, "ftrace", "raw_data",
				     tsync_raw_data_handler,
				     (void *)&fallback_fmt);
	tep_plugin_remove_options(tsync_options);
	return 0;
}
