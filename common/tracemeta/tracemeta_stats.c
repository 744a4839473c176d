// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Per-CPU ring-buffer statistics (per_cpu/cpuN/stats): parsed into
 * numbers, and kept as the text trace-cmd stores in its CPUSTAT option.
 * See tracemeta_stats.h.
 */
#include "common/tracemeta/tracemeta_stats.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/tracemeta/tracemeta_file.h"

/* Parses an unsigned decimal filling [s, e). Returns 0 or -EINVAL. */
static int parse_u64(const char *s, const char *e, uint64_t *out)
{
	uint64_t v = 0;

	if (s == e)
		return -EINVAL;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

/* Parses "S.UUUUUU" (ns result) or a raw count. Returns 0 or -EINVAL. */
static int parse_ts(const char *s, const char *e, uint64_t *out)
{
	const char *dot = memchr(s, '.', (size_t)(e - s));
	uint64_t sec, us;

	if (!dot)
		return parse_u64(s, e, out);
	if (parse_u64(s, dot, &sec) || e - dot - 1 != 6 ||
	    parse_u64(dot + 1, e, &us) || sec > UINT64_MAX / 1000000000u - 1)
		return -EINVAL;
	*out = sec * 1000000000u + us * 1000u;
	return 0;
}

int tracemeta_parse_stats(const char *text, size_t len,
			  struct tracemeta_stats *out)
{
	static const struct {
		const char *key;
		size_t off;
		unsigned int bit;
		bool ts;
	} keys[] = {
#define K(k, f, b, t) { k, offsetof(struct tracemeta_stats, f), b, t }
		K("entries", entries, TRACEMETA_ST_ENTRIES, false),
		K("overrun", overrun, TRACEMETA_ST_OVERRUN, false),
		K("commit overrun", commit_overrun, TRACEMETA_ST_COMMIT_OVERRUN, false),
		K("bytes", bytes, TRACEMETA_ST_BYTES, false),
		K("oldest event ts", oldest_event_ts, TRACEMETA_ST_OLDEST_TS, true),
		K("now ts", now_ts, TRACEMETA_ST_NOW_TS, true),
		K("dropped events", dropped_events, TRACEMETA_ST_DROPPED, false),
		K("read events", read_events, TRACEMETA_ST_READ, false),
#undef K
	};
	const char *p = text, *end;

	if (!text || !out)
		return -EINVAL;
	end = text + len;
	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *colon = memchr(p, ':', (size_t)(le - p));

		if (colon) {
			const char *v = colon + 1, *ve = le;

			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' ||
					  ve[-1] == '\r'))
				ve--;
			for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
				uint64_t *dst;

				if (strlen(keys[i].key) != (size_t)(colon - p) ||
				    memcmp(keys[i].key, p, (size_t)(colon - p)))
					continue;
				dst = (uint64_t *)((char *)out + keys[i].off);
				if ((keys[i].ts ? parse_ts(v, ve, dst) :
						  parse_u64(v, ve, dst)))
					return -EINVAL;
				out->have |= keys[i].bit;
				break;
			}
		}
		p = le + 1;
	}
	if (!(out->have & TRACEMETA_ST_ENTRIES) ||
	    !(out->have & TRACEMETA_ST_OVERRUN))
		return -EINVAL;
	return 0;
}

int tracemeta_read_stats(struct tracefs_instance *inst, int cpu,
			 struct tracemeta_stats *out, char **cpustat)
{
	char rel[64], *text;
	size_t len;
	int ret;

	if (cpu < 0 || !out)
		return -EINVAL;
	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/stats", cpu);
	ret = tm_inst_read(inst, rel, &text, &len);
	if (ret)
		return ret;
	ret = tracemeta_parse_stats(text, len, out);
	if (!ret && cpustat && asprintf(cpustat, "CPU: %d\n%s", cpu, text) < 0)
		ret = -ENOMEM;
	free(text);
	return ret;
}

