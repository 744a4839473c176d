// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Compression of trace.dat version 7 sections and trace data, with the
 * libraries trace-cmd uses (libzstd, zlib) and the same settings, so that
 * trace-cmd reads what is written here with the algorithm named in the
 * file header: zstd with its default level and no content-size field,
 * zlib at Z_BEST_COMPRESSION. "any" picks zstd, as trace-cmd does (it
 * prefers the algorithm of lowest weight: zstd 5, zlib 10).
 */
#include "common/tracedat/tracedat_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

struct tdzip {
	enum tracedat_compress kind;
	ZSTD_CCtx *zstd;
};

int tracedat_compress_parse(const char *name, enum tracedat_compress *out)
{
	if (!name)
		return -EINVAL;
	if (!strcmp(name, "none"))
		*out = TRACEDAT_COMPRESS_NONE;
	else if (!strcmp(name, "any") || !strcmp(name, "zstd"))
		*out = TRACEDAT_COMPRESS_ZSTD;
	else if (!strcmp(name, "zlib"))
		*out = TRACEDAT_COMPRESS_ZLIB;
	else
		return -EINVAL;
	return 0;
}

int tracedat_format_from_args(int file_version, const char *compression,
			      struct tracedat_format *out)
{
	if (file_version != 0 && file_version != 6 && file_version != 7)
		return -EINVAL;
	*out = (struct tracedat_format){ file_version == 6 ? 6 : 7,
					 file_version == 6 ? TRACEDAT_COMPRESS_NONE
							   : TRACEDAT_COMPRESS_ZSTD };
	if (!compression)
		return 0;
	out->version = 7;
	return tracedat_compress_parse(compression, &out->compress);
}

const char *tracedat_compress_name(enum tracedat_compress c)
{
	switch (c) {
	case TRACEDAT_COMPRESS_ZSTD: return "zstd";
	case TRACEDAT_COMPRESS_ZLIB: return "zlib";
	case TRACEDAT_COMPRESS_NONE: break;
	}
	return "none";
}

const char *tdzip_version(enum tracedat_compress c)
{
	switch (c) {
	case TRACEDAT_COMPRESS_ZSTD: return ZSTD_versionString();
	case TRACEDAT_COMPRESS_ZLIB: return zlibVersion();
	case TRACEDAT_COMPRESS_NONE: break;
	}
	return "";
}

int tdzip_new(enum tracedat_compress kind, struct tdzip **out)
{
	struct tdzip *z;

	*out = NULL;
	if (kind != TRACEDAT_COMPRESS_ZSTD && kind != TRACEDAT_COMPRESS_ZLIB)
		return -EINVAL;
	z = calloc(1, sizeof(*z));
	if (!z)
		return -ENOMEM;
	z->kind = kind;
	if (kind == TRACEDAT_COMPRESS_ZSTD) {
		z->zstd = ZSTD_createCCtx();
		/* trace-cmd leaves the content size out of every frame */
		if (!z->zstd ||
		    ZSTD_isError(ZSTD_CCtx_setParameter(z->zstd, ZSTD_c_contentSizeFlag, 0))) {
			tdzip_free(z);
			return -ENOMEM;
		}
	}
	*out = z;
	return 0;
}

void tdzip_free(struct tdzip *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->zstd);
	free(z);
}

size_t tdzip_bound(const struct tdzip *z, size_t len)
{
	if (z->kind == TRACEDAT_COMPRESS_ZSTD)
		return ZSTD_compressBound(len);
	return compressBound((uLong)len);
}

ssize_t tdzip_compress(struct tdzip *z, const void *in, size_t len, void *out, size_t cap)
{
	if (len > UINT32_MAX)
		return -EINVAL;
	if (z->kind == TRACEDAT_COMPRESS_ZSTD) {
		size_t r = ZSTD_compress2(z->zstd, out, cap, in, len);

		return ZSTD_isError(r) ? -EIO : (ssize_t)r;
	}
	uLongf n = (uLongf)cap;
	int r = compress2(out, &n, in, (uLong)len, Z_BEST_COMPRESSION);

	if (r == Z_MEM_ERROR)
		return -ENOMEM;
	return r == Z_OK ? (ssize_t)n : -EIO;
}

int tdzip_block(struct tdzip *z, const struct tdbuf *in, struct tdbuf *out)
{
	size_t cap = tdzip_bound(z, in->len);
	uint8_t *tmp;
	ssize_t n;

	if (in->err)
		return in->err;
	tmp = malloc(cap ? cap : 1);
	if (!tmp)
		return -ENOMEM;
	n = tdzip_compress(z, in->p, in->len, tmp, cap);
	if (n >= 0) {
		tdbuf_u32(out, (uint32_t)n);
		tdbuf_u32(out, (uint32_t)in->len);
		tdbuf_put(out, tmp, (size_t)n);
	}
	free(tmp);
	if (n < 0)
		return (int)n;
	return out->err;
}

enum tracedat_compress tdzip_kind(const struct tdzip *z)
{
	return z ? z->kind : TRACEDAT_COMPRESS_NONE;
}

int tracedat_precompress_kallsyms(const struct tracedat_meta *m, enum tracedat_compress kind,
				  struct tracedat_zpart *out)
{
	struct tdbuf b = { 0 }, zb = { 0 };
	struct tdzip *z;
	int ret;

	*out = (struct tracedat_zpart){ 0 };
	ret = tdzip_new(kind, &z);
	if (ret)
		return ret;
	td_part_kallsyms(&b, m);
	ret = tdzip_block(z, &b, &zb);
	tdbuf_free(&b);
	tdzip_free(z);
	if (ret) {
		tdbuf_free(&zb);
		return ret;
	}
	*out = (struct tracedat_zpart){ kind, m->kallsyms.data, m->kallsyms.len, zb.p, zb.len };
	return 0;
}

void tracedat_zpart_free(struct tracedat_zpart *z)
{
	if (!z)
		return;
	free(z->data);
	*z = (struct tracedat_zpart){ 0 };
}

enum tracedat_compress tracedat_format_zip(const struct tracedat_format *f)
{
	return f->version == 7 ? f->compress : TRACEDAT_COMPRESS_NONE;
}
