// SPDX-License-Identifier: GPL-2.0-or-later
/* tsync-host's JSON writer, on json-c; see json_out.h. */
#include <errno.h>
#include <stdio.h>
#include <json-c/json.h>

#include "common/sync/round_stop.h"
#include "host/cmd/json_out.h"
#include "host/sync/sync.h"

/* Builds an object of the members @kv; see json_out.h. */
struct json_object *host_json_object(const struct host_json_kv *kv, size_t n)
{
	struct json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < n; i++)
		if (host_json_add(o, kv[i].key, kv[i].val))
			break;
	if (i == n)
		return o;
	for (i++; i < n; i++)
		json_object_put(kv[i].val);
	json_object_put(o);
	return NULL;
}

/* Adds a member; see json_out.h. */
int host_json_add(struct json_object *obj, const char *key, struct json_object *val)
{
	if (!obj || json_object_object_add(obj, key, val)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

/* Appends to an array; see json_out.h. */
int host_json_append(struct json_object *arr, struct json_object *val)
{
	if (!arr || json_object_array_add(arr, val)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

struct json_object *host_json_int(int64_t v)
{
	return json_object_new_int64(v);
}

struct json_object *host_json_ns(int64_t v)
{
	return v < 0 ? NULL : json_object_new_int64(v);
}

struct json_object *host_json_count(uint32_t v)
{
	return v ? json_object_new_int64(v) : NULL;
}

struct json_object *host_json_str(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

/* A number with a fixed count of decimals: json-c prints the text given
 * with the value (a plain double would print 17 digits). */
struct json_object *host_json_fixed(double v, int decimals)
{
	char text[64];

	snprintf(text, sizeof(text), "%.*f", decimals, v);
	return json_object_new_double_s(v, text);
}

struct json_object *host_json_bool(int v)
{
	return json_object_new_boolean(v ? 1 : 0);
}

/* One sync sample's object; see json_out.h. */
struct json_object *host_json_sync_round(const struct sync_result *r)
{
	const struct sync_probes *p = &r->probes;

	if (r->status) {
		const struct host_json_kv kv[] = {
			{ "round", host_json_int(r->round) },
			{ "cpu", host_json_int(r->cpu) },
			{ "host_cpu", host_json_int(r->host_cpu) },
			{ "ok", host_json_bool(0) },
			{ "error", json_object_new_string(r->error) },
		};
		return host_json_object(kv, sizeof(kv) / sizeof(kv[0]));
	}
	const struct host_json_kv kv[] = {
		{ "round", host_json_int(r->round) },
		{ "cpu", host_json_int(r->cpu) },
		{ "host_cpu", host_json_int(r->host_cpu) },
		{ "ok", host_json_bool(1) },
		{ "offset_ns", host_json_int(r->offset_ns) },
		{ "scaling", json_object_new_uint64(r->scaling) },
		{ "frac", host_json_int(r->frac) },
		{ "error_ns", host_json_ns(r->error_ns) },
		{ "delay_ns", host_json_ns(p->sent ? p->delay_ns : SYNC_UNKNOWN) },
		{ "used", host_json_count(p->used) },
		{ "valid", host_json_count(p->valid) },
		{ "sent", host_json_int(p->sent) },
		{ "stop", json_object_new_string(p->sent ? tsync_stop_reason_name(p->stop) :
						 "none") },
		{ "guest_ts", host_json_int(r->guest_ts) },
		{ "round_ms", host_json_fixed((double)r->round_ns / 1e6, 3) },
	};
	return host_json_object(kv, sizeof(kv) / sizeof(kv[0]));
}

/* Prints and frees a document; see json_out.h. */
int host_json_print(FILE *out, struct json_object *doc)
{
	const char *text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_SPACED |
							  JSON_C_TO_STRING_NOSLASHESCAPE);
	int ret = 0;

	if (!text)
		ret = -ENOMEM;
	else if (fprintf(out, "%s\n", text) < 0)
		ret = -EIO;
	json_object_put(doc);
	return ret;
}
