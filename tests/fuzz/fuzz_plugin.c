// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * libFuzzer target for plugin_tsync's raw_data handler. The plugin's source
 * is compiled into this target (with the fuzzer's sanitizers) and its loader
 * registers the handler on tep handles that parsed this kernel's
 * header_page and raw_data format (embedded below, so the target does not
 * need tracefs).
 *
 * Input: byte 0 selects the variant (bit 0 big-endian file, bit 1
 * tsync:probes=1, bit 2 a 4-byte file long size, bit 3 call the handler
 * directly in plugin_function.so mode instead of through tep_print_event);
 * the rest is the raw_data payload from the id field on. The record is an
 * exactly-sized heap buffer: any read past it is an ASan report.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/plugin_tsync.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

static const char raw_data_format[] =
	"name: raw_data\n"
	"ID: 19\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:unsigned int id;\toffset:8;\tsize:4;\tsigned:0;\n"
	"\tfield:char buf[];\toffset:12;\tsize:0;\tsigned:0;\n"
	"\n"
	"print fmt: \"id:%04x %08x\", REC->id, (int)REC->buf[0]\n";

#define RAW_ID 19
#define ID_OFF 8

/* Makes a handle with the formats parsed and the plugin loaded; aborts on
 * failure (a broken harness must not look like a clean run). */
static struct tep_handle *make_tep(enum tep_endian endian)
{
	struct tep_handle *tep = tep_alloc();
	char hp[sizeof(header_page)];

	if (!tep)
		abort();
	tep_set_file_bigendian(tep, endian);
	tep_set_long_size(tep, 8);
	tep_set_page_size(tep, 4096);
	memcpy(hp, header_page, sizeof(hp));
	if (tep_parse_header_page(tep, hp, sizeof(hp) - 1, 8) ||
	    tep_parse_event(tep, raw_data_format, sizeof(raw_data_format) - 1,
			    "ftrace") ||
	    tep_plugin_loader(tep))
		abort();
	return tep;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tep_handle *teps[2];
	struct tep_record rec;
	struct tep_handle *tep;
	struct trace_seq s;
	unsigned char *buf;
	uint8_t flags;
	size_t len;

	if (!teps[0]) {
		tep_set_loglevel(TEP_LOG_NONE);
		teps[0] = make_tep(TEP_LITTLE_ENDIAN);
		teps[1] = make_tep(TEP_BIG_ENDIAN);
	}
	if (size < 1)
		return 0;
	flags = data[0];
	data++;
	size--;
	tep = teps[flags & 1];
	tep_plugin_options[0].set = !!(flags & 2);
	tep_set_long_size(tep, flags & 4 ? 4 : 8);

	/* common fields, then the payload; exactly sized */
	len = ID_OFF + size;
	buf = malloc(len);
	if (!buf)
		return 0;
	memset(buf, 0, ID_OFF);
	if (flags & 1) {
		buf[0] = RAW_ID >> 8;
		buf[1] = RAW_ID & 0xff;
	} else {
		buf[0] = RAW_ID & 0xff;
		buf[1] = RAW_ID >> 8;
	}
	memcpy(buf + ID_OFF, data, size);
	memset(&rec, 0, sizeof(rec));
	rec.data = buf;
	rec.size = len;
	rec.record_size = len;

	trace_seq_init(&s);
	if (flags & 8) {
		struct tep_event *event = tep_find_event(tep, RAW_ID);

		if (!event)
			abort();
		tsync_raw_data_handler(&s, &rec, event,
				       (void *)&fallback_function);
	} else {
		tep_print_event(tep, &s, &rec, "%s", TEP_PRINT_INFO);
	}
	trace_seq_destroy(&s);
	free(buf);
	return 0;
}
