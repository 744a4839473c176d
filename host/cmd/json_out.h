/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The JSON that tsync-host's commands print (`sync --json`, `doctor
 * --json`): built as json-c objects and printed by host_json_print(), the
 * one writer, so that every document is escaped by the library and laid
 * out the same way: one document a line, `"key": value` pairs separated
 * by ", " (json-c's spaced form), keys in the order they were added.
 *
 * A value a command does not know is JSON null: a NULL value here. A
 * value json-c cannot allocate prints as null too; an object or array
 * that cannot be allocated is -ENOMEM.
 */
#ifndef TSYNC_HOST_JSON_OUT_H
#define TSYNC_HOST_JSON_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;
struct sync_result;

/* One member of an object: its key and value (NULL: null). */
struct host_json_kv {
	const char *key;
	struct json_object *val;
};

/* Returns a new object with the @n members of @kv in their order, or
 * NULL (the values freed) when it cannot be allocated. */
struct json_object *host_json_object(const struct host_json_kv *kv, size_t n);

/* Adds @val (NULL: null) under @key to object @obj. Returns 0, or -ENOMEM
 * with @val freed when @obj is NULL or the member cannot be added. */
int host_json_add(struct json_object *obj, const char *key, struct json_object *val);

/* Appends @val to array @arr; returns as host_json_add(). */
int host_json_append(struct json_object *arr, struct json_object *val);

/* Values: the integer @v; a bound or delay @v, null when negative
 * (SYNC_UNKNOWN); a count @v, null when 0 (unknown); the string @s, null
 * for NULL or ""; @v printed with @decimals decimals; true or false. */
struct json_object *host_json_int(int64_t v);
struct json_object *host_json_ns(int64_t v);
struct json_object *host_json_count(uint32_t v);
struct json_object *host_json_str(const char *s);
struct json_object *host_json_fixed(double v, int decimals);
struct json_object *host_json_bool(int v);

/* The object of one sync sample @r: round, CPUs, ok, and either the error
 * or the offset, its bound and its probes (sync --json's "rounds"). */
struct json_object *host_json_sync_round(const struct sync_result *r);

/* Prints @doc and a newline to @out and frees @doc (NULL: prints null).
 * Returns 0 or -errno (-ENOMEM, -EIO). */
int host_json_print(FILE *out, struct json_object *doc);

#endif
