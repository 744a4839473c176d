// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The trace.dat output stream: small writes are staged in a buffer, big
 * ones (CPU data) go straight to the file, with copy_file_range when the
 * source is a file. Offsets are absolute, so the stream counts every byte
 * from offset 0; the first error is sticky. CPU data is either copied as
 * it is (padded to whole pages) or compressed in chunks of
 * TD_PAGES_IN_CHUNK pages, as trace-cmd does in version 7 files.
 */
#include "common/tracedat/tracedat_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STAGE_SIZE		(64 * 1024)
#define COPY_CHUNK		(256 * 1024)

struct wctx {
	int fd;
	uint64_t off;		/* bytes emitted so far (file offset) */
	size_t used;		/* bytes staged in buf */
	int err;		/* first error, sticky */
	char buf[STAGE_SIZE];
};

/* Writes all of @len bytes to @fd. Returns 0 or -errno. */
static int write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t n = write(fd, c, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

int w_new(int fd, struct wctx **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->fd = fd;
	return 0;
}

uint64_t w_off(const struct wctx *w)
{
	return w->off;
}

int w_err(const struct wctx *w)
{
	return w->err;
}

/* Writes the staged bytes out. Returns 0 or -errno (also kept sticky). */
static int w_flush(struct wctx *w)
{
	int ret;

	if (w->err)
		return w->err;
	ret = write_all(w->fd, w->buf, w->used);
	w->used = 0;
	if (ret)
		w->err = ret;
	return ret;
}

int w_finish(struct wctx *w)
{
	int ret = w_flush(w);

	free(w);
	return ret;
}

void w_bytes(struct wctx *w, const void *p, size_t len)
{
	if (w->err || !len)
		return;
	w->off += len;
	if (len > STAGE_SIZE - w->used) {
		if (w_flush(w))
			return;
		if (len >= STAGE_SIZE / 2) {
			int ret = write_all(w->fd, p, len);

			if (ret)
				w->err = ret;
			return;
		}
	}
	memcpy(w->buf + w->used, p, len);
	w->used += len;
}

void w_zero(struct wctx *w, uint64_t len)
{
	static const char zeros[4096];

	while (len) {
		size_t n = len > sizeof(zeros) ? sizeof(zeros) : (size_t)len;

		w_bytes(w, zeros, n);
		len -= n;
	}
}

/* Integers in host byte order. */
void w_u8(struct wctx *w, uint8_t v) { w_bytes(w, &v, 1); }
void w_u16(struct wctx *w, uint16_t v) { w_bytes(w, &v, 2); }
void w_u32(struct wctx *w, uint32_t v) { w_bytes(w, &v, 4); }
void w_u64(struct wctx *w, uint64_t v) { w_bytes(w, &v, 8); }

void w_patch_u64(struct wctx *w, uint64_t off, uint64_t v)
{
	if (w_flush(w))
		return;
	if (pwrite(w->fd, &v, 8, (off_t)off) != 8)
		w->err = errno ? -errno : -EIO;
}

/* Copies @len bytes from @in at @off to the stream's fd with read/write. */
static int copy_rw(struct wctx *w, int in, off_t off, uint64_t len)
{
	char *buf = malloc(COPY_CHUNK);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	while (len) {
		size_t want = len > COPY_CHUNK ? COPY_CHUNK : (size_t)len;
		ssize_t n = pread(in, buf, want, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0) {
			ret = -EIO;	/* source shorter than announced */
			break;
		}
		ret = write_all(w->fd, buf, (size_t)n);
		if (ret)
			break;
		off += n;
		len -= (uint64_t)n;
	}
	free(buf);
	return ret;
}

/*
 * Copies @len bytes from @in at @off, with copy_file_range when the file
 * systems allow it, else read/write. Returns 0 or -errno.
 */
static int copy_fd(struct wctx *w, int in, off_t off, uint64_t len)
{
	while (len) {
		size_t want = len > (1u << 30) ? (1u << 30) : (size_t)len;
		ssize_t n = copy_file_range(in, &off, w->fd, NULL, want, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EXDEV || errno == EINVAL ||
			      errno == ENOSYS || errno == EOPNOTSUPP ||
			      errno == EBADF || errno == ESPIPE))
			return copy_rw(w, in, off, len);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;	/* source shorter than announced */
		len -= (uint64_t)n;
	}
	return 0;
}

int w_cpu_raw(struct wctx *w, const struct tracedat_cpu_data *c, uint32_t page)
{
	int ret;

	if (!c->size)
		return w->err;
	if (c->fd < 0) {
		w_bytes(w, c->buf, c->size);
	} else {
		ret = w_flush(w);
		if (ret)
			return ret;
		ret = copy_fd(w, c->fd, c->offset, c->size);
		if (ret) {
			w->err = ret;
			return ret;
		}
		w->off += c->size;
	}
	w_zero(w, td_align(c->size, page) - c->size);
	return w->err;
}

/* Reads @len bytes of CPU data at @pos into @dst. Returns 0 or -errno. */
static int cpu_read(const struct tracedat_cpu_data *c, uint64_t pos, char *dst, size_t len)
{
	if (c->fd < 0) {
		memcpy(dst, (const char *)c->buf + pos, len);
		return 0;
	}
	while (len) {
		ssize_t n = pread(c->fd, dst, len, c->offset + (off_t)pos);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;	/* source shorter than announced */
		dst += n;
		pos += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

int w_cpu_zip(struct wctx *w, struct tdzip *z, const struct tracedat_cpu_data *c,
	      uint32_t page, uint64_t *size)
{
	size_t chunk = (size_t)page * TD_PAGES_IN_CHUNK;
	size_t cap = tdzip_bound(z, chunk);
	uint64_t start = w->off, pos = 0, padded = td_align(c->size, page);
	char *in = malloc(chunk), *out = malloc(cap);
	uint32_t count = 0;
	int ret = 0;

	if (!in || !out)
		ret = -ENOMEM;
	w_u32(w, 0);	/* chunk count, patched below */
	while (!ret && pos < padded && !w->err) {
		size_t n = padded - pos > chunk ? chunk : (size_t)(padded - pos);
		size_t have = c->size - pos < n ? (size_t)(c->size - pos) : n;
		ssize_t zn;

		ret = cpu_read(c, pos, in, have);
		if (ret)
			break;
		memset(in + have, 0, n - have);	/* an all-zero tail is an empty page */
		zn = tdzip_compress(z, in, n, out, cap);
		if (zn < 0) {
			ret = (int)zn;
			break;
		}
		w_u32(w, (uint32_t)zn);
		w_u32(w, (uint32_t)n);
		w_bytes(w, out, (size_t)zn);
		pos += n;
		count++;
	}
	free(in);
	free(out);
	if (ret && !w->err)
		w->err = ret;
	if (!w->err && w_flush(w) == 0 && pwrite(w->fd, &count, 4, (off_t)start) != 4)
		w->err = errno ? -errno : -EIO;
	*size = w->off - start;
	return w->err;
}
